"""The free-text analyzer: Presidio's ``AnalyzerEngine`` with a curated registry, built once.

Why curated: the default registry misfires on agent data (US_DRIVER_LICENSE and US_BANK_NUMBER on
order and card numbers, MEDICAL_LICENSE on IBAN fragments, UK_NHS on US phones, PHONE_NUMBER on
amounts and IPs) and is slow. Why ``no_op``: NER needs a model, and nothing here may depend on
downloading one; when ``ner_model`` names an installed spaCy pipeline (package or directory) it
is used, with the ``labels_to_ignore`` of Presidio's own default configuration.

Each recognizer's pre-filter decides which entity types a string is even asked about; a string
no pre-filter matches is never sent to Presidio.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import presidio_analyzer
import yaml
from presidio_analyzer import (
    AnalyzerEngine,
    EntityRecognizer,
    RecognizerRegistry,
    RecognizerResult,
)
from presidio_analyzer.context_aware_enhancers import ContextAwareEnhancer
from presidio_analyzer.nlp_engine import (
    NerModelConfiguration,
    NlpEngine,
    NoOpNlpEngine,
    SpacyNlpEngine,
)
from presidio_analyzer.predefined_recognizers import SpacyRecognizer

from golden_distill.redaction import lean_patterns
from golden_distill.redaction.config import RedactionConfig
from golden_distill.redaction.normalise import Normalised, normalise
from golden_distill.redaction.prefilter_digits import HAS_DIGIT, needs_digit
from golden_distill.redaction.recognizers import SPECS, RecognizerSpec
from golden_distill.redaction.recognizers.base import AnyOf, Keywords, fold_case
from golden_distill.redaction.recognizers.name_parts import widen

LANGUAGE = "en"
#: A BANK_CARD span that another, more specific recognizer also claims is dropped.
_BANK_CARD_YIELDS_TO = frozenset({"CREDIT_CARD", "CN_RESIDENT_ID"})


#: One pre-filter part, ready to run: (search, takes folded text, entity types, the type when
#: there is one).
_Check = tuple[Callable[[str], object], bool, tuple[str, ...], str | None]


def _contains(literal: str) -> Callable[[str], bool]:
    """A search for a literal substring (``literal in text``)."""

    def search(text: str) -> bool:
        return literal in text

    return search


class AnalyzerSetupError(RuntimeError):
    """The analyzer cannot be built as configured (e.g. a missing NER model)."""


@dataclass(frozen=True, slots=True)
class Finding:
    entity_type: str
    start: int
    end: int
    score: float


def presidio_default_labels_to_ignore() -> list[str]:
    """``labels_to_ignore`` from Presidio's shipped default NLP configuration."""

    conf = Path(presidio_analyzer.__file__).parent / "conf" / "default.yaml"
    data = yaml.safe_load(conf.read_text(encoding="utf-8")) or {}
    return list((data.get("ner_model_configuration") or {}).get("labels_to_ignore") or [])


def _ner_engine(model: str) -> NlpEngine:
    # optional: spaCy only when ner_model names an installed pipeline
    import spacy

    if not (spacy.util.is_package(model) or Path(model).exists()):
        # SpacyNlpEngine would try to download it: never do that
        raise AnalyzerSetupError(
            f"redaction.ner_model {model!r} is neither an installed spaCy package nor a "
            "directory; install it or unset ner_model (models are never downloaded)"
        )
    engine = SpacyNlpEngine(
        models=[{"lang_code": LANGUAGE, "model_name": model}],
        ner_model_configuration=NerModelConfiguration(
            labels_to_ignore=presidio_default_labels_to_ignore()
        ),
    )
    engine.load()
    return engine


class NoContextEnhancer(ContextAwareEnhancer):
    """Leaves scores alone. The default lemma enhancer needs tokens the ``no_op`` engine does
    not produce, yet still costs a pass per result; our recognizers put their context into
    their patterns (look-behinds) instead."""

    def __init__(self) -> None:
        super().__init__(
            context_similarity_factor=0,
            min_score_with_context_similarity=0,
            context_prefix_count=0,
            context_suffix_count=0,
        )

    def enhance_using_context(self, text, raw_results, nlp_artifacts, recognizers, context=None):  # type: ignore[no-untyped-def]
        return raw_results


class TextAnalyzer:
    """Finds personal values in free text; ``analyze_many`` batches (NER pipes in batches)."""

    #: Tests build an analyzer without the lean engine call to compare findings.
    LEAN_ENGINE = True

    def __init__(self, config: RedactionConfig, specs: list[RecognizerSpec] | None = None) -> None:
        """``specs``: the recognizers to run (default: ``config.recognizers`` plus NER when
        configured); given explicitly, no NER model is loaded (the verifier's extras)."""
        use_ner = specs is None and bool(config.ner_model)
        if specs is None:
            specs = [SPECS[name] for name in config.active_recognizers]
        recognizers: list[EntityRecognizer] = []
        for spec in specs:
            built = spec.build(config)
            recognizers.extend(built if isinstance(built, list) else [built])
        self.ner_entities: tuple[str, ...] = ()
        if use_ner and config.ner_model:
            nlp_engine = _ner_engine(config.ner_model)
            self.ner_entities = tuple(config.ner_entities)
            recognizers.append(
                SpacyRecognizer(
                    supported_language=LANGUAGE, supported_entities=list(self.ner_entities)
                )
            )
        else:
            nlp_engine = NoOpNlpEngine(models=[{"lang_code": LANGUAGE, "model_name": "no_op"}])
            nlp_engine.load()
        if not use_ner:  # nothing reads Presidio's explanations (see lean_patterns.py)
            for recognizer in recognizers:
                lean_patterns.install(recognizer)
        registry = RecognizerRegistry(recognizers=recognizers, supported_languages=[LANGUAGE])
        self.engine = AnalyzerEngine(
            registry=registry,
            nlp_engine=nlp_engine,
            supported_languages=[LANGUAGE],
            context_aware_enhancer=None if use_ner else NoContextEnhancer(),
        )
        self.nlp_engine = nlp_engine
        self._empty: object | None = None
        #: Presidio's ``analyze`` minus what changes nothing here (``_lean_analyze``): only
        #: without NER (its context enhancer is ours, which changes nothing) and tracing
        self.lean = self.LEAN_ENGINE and not use_ner and not self.engine.log_decision_process
        #: the recognizers Presidio selects per requested entity list, and their ids
        self._selected: dict[tuple[str, ...], tuple[list[EntityRecognizer], frozenset[str]]] = {}
        self.prefilters = [(spec.prefilter, spec.entities) for spec in specs]
        #: every pre-filter part, in the specs' order (the type when there is one: a
        #: membership test instead of a generator per check and text; 1.1% of a shard's
        #: redaction CPU)
        self._checks: list[_Check] = []
        #: the same, less the parts that cannot match a text without a digit
        #: (``prefilter_digits.py``): what a text without one is checked against
        self._checks_without_digit: list[_Check] = []
        for prefilter, entities in self.prefilters:
            parts = prefilter.parts if isinstance(prefilter, AnyOf) else (prefilter,)
            single = entities[0] if len(entities) == 1 else None
            for part in parts:
                check: _Check
                if isinstance(part, Keywords):
                    check = (part.search_lower, True, entities, single)
                elif isinstance(part, str):
                    check = (_contains(part), False, entities, single)
                else:
                    check = (part.search, False, entities, single)
                self._checks.append(check)
                if not needs_digit(part):
                    self._checks_without_digit.append(check)
        self.entities = sorted(
            {e for spec in specs for e in spec.entities} | set(self.ner_entities)
        )

    def candidate_entities(self, text: str) -> list[str]:
        """Entity types worth asking Presidio about for ``text`` (empty: skip it)."""
        found: list[str] = []
        if self.ner_entities and sum(ch.isalpha() for ch in text[:64]) >= 2:
            found.extend(self.ner_entities)
        folded: str | None = None
        checks = self._checks if HAS_DIGIT(text) else self._checks_without_digit
        for search, wants_folded, entities, single in checks:
            # a hit here would add nothing (another part or recognizer hit)
            if single is not None:
                if single in found:
                    continue
            elif found and all(entity in found for entity in entities):
                continue
            if wants_folded:
                if folded is None:
                    folded = fold_case(text)
                hit = search(folded)
            else:
                hit = search(text)
            if hit:
                for entity in entities:
                    if entity not in found:
                        found.append(entity)
        return found

    def analyze(self, text: str, threshold: float) -> list[Finding]:
        """Findings in one text (normalised first, spans of the original)."""
        return self.analyze_many([text], threshold)[text]

    def _empty_artifacts(self) -> object:
        if self._empty is None:
            self._empty = self.nlp_engine.process_text("", LANGUAGE)
        return self._empty

    def analyze_many(
        self,
        texts: list[str],
        threshold: float,
        normalised: dict[str, Normalised | None] | None = None,
    ) -> dict[str, list[Finding]]:
        """Findings per distinct text, made on its normalised form (``normalise.py``) and
        mapped back to spans of the original; texts no pre-filter matches map to ``[]``.

        ``normalised``: a memo of ``normalise`` per text shared by the analyzers of one call
        (the verifier's extra recognizers see the scrubber's strings again)."""
        texts = list(dict.fromkeys(texts))
        memo: dict[str, Normalised | None] = {} if normalised is None else normalised
        forms: dict[str, Normalised] = {}
        for text in texts:
            if text in memo:
                norm = memo[text]
            else:
                norm = memo[text] = normalise(text)
            if norm is not None:
                forms[text] = norm
        raw = self._analyze_plain([*texts, *(n.text for n in forms.values())], threshold)
        out: dict[str, list[Finding]] = {}
        for text in texts:
            norm = forms.get(text)
            if norm is None:
                out[text] = raw[text]
                continue
            # findings on the original and on the normalised form (mapped back), merged
            mapped: dict[tuple[int, int, str], Finding] = {
                (f.start, f.end, f.entity_type): f for f in raw[text]
            }
            for f in raw[norm.text]:
                start, end = norm.original_span(f.start, f.end)
                if end > start:
                    key = (start, end, f.entity_type)
                    if key not in mapped or mapped[key].score < f.score:
                        mapped[key] = Finding(f.entity_type, start, end, f.score)
            out[text] = list(mapped.values())
        return out

    def _analyze_plain(self, texts: list[str], threshold: float) -> dict[str, list[Finding]]:
        out: dict[str, list[Finding]] = {}
        todo: list[tuple[str, list[str]]] = []
        for text in dict.fromkeys(texts):
            entities = self.candidate_entities(text)
            if entities:
                todo.append((text, entities))
            else:
                out[text] = []
        if self.ner_entities and todo:
            artifacts = self.nlp_engine.process_batch([t for t, _ in todo], LANGUAGE)
            for (text, entities), (_, nlp_artifacts) in zip(todo, artifacts, strict=True):
                out[text] = self._run(text, entities, threshold, nlp_artifacts)
        else:
            # the no_op engine's artifacts are empty and the same for every text: make them once
            # instead of once per call (a spaCy Doc each time)
            empty = self._empty_artifacts()
            for text, entities in todo:
                out[text] = self._run(text, entities, threshold, empty)
        return out

    def _run(
        self, text: str, entities: list[str], threshold: float, nlp_artifacts: object
    ) -> list[Finding]:
        if self.lean and threshold is not None:
            results = self._lean_analyze(text, entities, threshold, nlp_artifacts)
        else:
            results = self.engine.analyze(
                text=text,
                language=LANGUAGE,
                entities=entities,
                score_threshold=threshold,
                nlp_artifacts=nlp_artifacts,
            )
        findings = [Finding(r.entity_type, r.start, r.end, r.score) for r in results]
        return _widen_names(text, _dedupe_bank_cards(findings))

    def _lean_analyze(
        self, text: str, entities: list[str], threshold: float, nlp_artifacts: object
    ) -> list[RecognizerResult]:
        """``AnalyzerEngine.analyze`` as called here (no NER, no decision trace, a threshold,
        no allow list), without its per-call overhead: the registry's selection is made once
        per entity list instead of a set built per text; the context step, where every
        enhancer is the identity (``EntityRecognizer``'s own and ``NoContextEnhancer``), only
        drops results whose recognizer id is not one of the selected recognizers', so that is
        all it does here; explanations are never read. ``remove_duplicates`` sorts on every
        field it compares, so the order results are gathered in does not change its answer."""
        key = tuple(entities)
        selected = self._selected.get(key)
        if selected is None:
            recognizers = self.engine.registry.get_recognizers(
                language=LANGUAGE, entities=entities, all_fields=False
            )
            selected = self._selected[key] = (recognizers, frozenset(r.id for r in recognizers))
        recognizers, ids = selected
        results: list[RecognizerResult] = []
        for recognizer in recognizers:
            if not recognizer.is_loaded:
                recognizer.load()
                recognizer.is_loaded = True
            current = recognizer.analyze(text=text, entities=entities, nlp_artifacts=nlp_artifacts)
            if current:
                for result in current:  # Presidio's __add_recognizer_id_if_not_exists
                    if not result.recognition_metadata:
                        result.recognition_metadata = {}
                    meta = result.recognition_metadata
                    if RecognizerResult.RECOGNIZER_IDENTIFIER_KEY not in meta:
                        meta[RecognizerResult.RECOGNIZER_IDENTIFIER_KEY] = recognizer.id
                    if RecognizerResult.RECOGNIZER_NAME_KEY not in meta:
                        meta[RecognizerResult.RECOGNIZER_NAME_KEY] = recognizer.name
                results.extend(current)
        results = [
            r
            for r in results
            if r.recognition_metadata[RecognizerResult.RECOGNIZER_IDENTIFIER_KEY] in ids
            and r.score >= threshold
        ]
        # nothing to sort or drop: Presidio's answer for no results is an empty list
        return EntityRecognizer.remove_duplicates(results) if results else []


def _widen_names(text: str, findings: list[Finding]) -> list[Finding]:
    """PERSON findings widened over the name parts beside them (``name_parts.py``)."""
    if not any(f.entity_type == "PERSON" for f in findings):
        return findings
    out: list[Finding] = []
    for f in findings:
        if f.entity_type == "PERSON":
            start, end = widen(text, f.start, f.end)
            if (start, end) != (f.start, f.end):
                f = Finding(f.entity_type, start, end, f.score)
        out.append(f)
    return out


def _dedupe_bank_cards(findings: list[Finding]) -> list[Finding]:
    if not any(f.entity_type == "BANK_CARD" for f in findings):
        return findings
    strong = [f for f in findings if f.entity_type in _BANK_CARD_YIELDS_TO]
    return [
        f
        for f in findings
        if f.entity_type != "BANK_CARD"
        or not any(s.start < f.end and f.start < s.end for s in strong)
    ]

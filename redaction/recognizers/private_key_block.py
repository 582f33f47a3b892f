"""PEM private-key blocks (RSA, EC, OpenSSH, PKCS#8): the whole block is the secret."""

from __future__ import annotations

import re

from presidio_analyzer import Pattern, PatternRecognizer

from golden_distill.redaction.recognizers.base import CASE_SENSITIVE, RecognizerSpec


class PrivateKeyBlockRecognizer(PatternRecognizer):
    PATTERNS = [
        Pattern(
            "pem_private_key",
            r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----.*?"
            r"-----END (?:[A-Z0-9]+ )*PRIVATE KEY-----",
            1.0,
        ),
        # a block cut off by truncation still leaks key material
        Pattern(
            "pem_private_key_open",
            r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----(?!.*?-----END)[A-Za-z0-9+/=\s\\n]*",
            0.9,
        ),
    ]

    def __init__(self) -> None:
        super().__init__(
            supported_entity="SECRET",
            name="PrivateKeyBlockRecognizer",
            patterns=self.PATTERNS,
            global_regex_flags=CASE_SENSITIVE,
        )


SPEC = RecognizerSpec(
    name="private_key_block",
    entities=("SECRET",),
    prefilter=re.compile(r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY"),
    build=lambda cfg: PrivateKeyBlockRecognizer(),
)

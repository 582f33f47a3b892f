"""Tool catalogues: which tools write and which system they belong to.

Chat transcripts, evidence tables and OTel spans name the tool a run called but not whether the
call changed state. The funnels need that (a *write* is ``is_mutating = true``; its *system* counts
toward "touches two systems"), so it comes from a declarative catalogue kept beside the config
(``configs/tools/*.yaml``), the same way for every source. A tool in no catalogue stays unknown
(``is_mutating = None``) rather than being guessed a read.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import Field

from golden_distill.datasets.config_model import ConfigError, StrictModel, load_yaml
from golden_distill.datasets.shipped_configs import shipped_config_for

#: System by tool-name prefix, for tools no catalogue lists (same map as the native contract).
PREFIX_SYSTEMS: dict[str, str] = {
    "erp_": "ERP",
    "mes_": "MES",
    "crm_": "CRM",
    "fin_": "FINANCE",
    "kb_": "KB",
    "hr_": "HR",
    "wms_": "WMS",
}


def system_from_prefix(tool_name: str) -> str | None:
    """The system a tool name's prefix names (``erp_get_order`` -> ``ERP``), else None."""
    lowered = tool_name.lower()
    for prefix, system in PREFIX_SYSTEMS.items():
        if lowered.startswith(prefix):
            return system
    return None


class ToolGroup(StrictModel):
    writes: list[str] = Field(default_factory=list, description="State-changing tools.")
    reads: list[str] = Field(default_factory=list, description="Tools that change nothing.")


class ToolCatalogueFile(StrictModel):
    """The YAML shape of one catalogue file."""

    systems: dict[str, ToolGroup] = Field(
        default_factory=dict, description="Tools by the system they read or write."
    )
    shared: ToolGroup = Field(
        default_factory=ToolGroup, description="Tools that belong to no single system."
    )


@dataclass(frozen=True, slots=True)
class ToolInfo:
    is_mutating: bool | None
    system: str | None


@dataclass(slots=True)
class ToolCatalogue:
    """Tool name -> (is_mutating, system), from one or more catalogue files."""

    tools: dict[str, ToolInfo] = field(default_factory=dict)

    def lookup(self, name: str) -> ToolInfo:
        """What is known about ``name``; unknown tools get None/prefix-derived system."""
        info = self.tools.get(name)
        if info is not None:
            return info
        return ToolInfo(None, system_from_prefix(name))

    def add(self, name: str, info: ToolInfo, source: str) -> None:
        if name in self.tools and self.tools[name] != info:
            raise ConfigError(source, [f"tool {name!r} is listed twice with different meanings"])
        self.tools[name] = info

    @classmethod
    def from_model(cls, model: ToolCatalogueFile, source: str = "<catalogue>") -> ToolCatalogue:
        catalogue = cls()
        catalogue.merge(model, source)
        return catalogue

    def merge(self, model: ToolCatalogueFile, source: str) -> None:
        groups = [(system, group) for system, group in model.systems.items()]
        groups.append((None, model.shared))
        for system, group in groups:
            for name in group.writes:
                self.add(name, ToolInfo(True, system), source)
            for name in group.reads:
                self.add(name, ToolInfo(False, system), source)


def resolve_catalogue_path(path: str | Path) -> Path:
    """A catalogue path as given, else the shipped file it names (``configs/tools/...``)."""
    candidate = Path(path)
    if candidate.is_absolute() or candidate.exists():
        return candidate
    return shipped_config_for(candidate) or candidate


def load_tool_catalogue(paths: Iterable[str | Path]) -> ToolCatalogue:
    """Load and merge catalogue files; a missing or invalid file is a ``ConfigError``."""
    catalogue = ToolCatalogue()
    for path in paths:
        resolved = resolve_catalogue_path(path)
        catalogue.merge(load_yaml(ToolCatalogueFile, resolved), str(path))
    return catalogue

"""The tenant opt-out rule: a case of a tenant on the opt-out list is never published.

One rule with two uses: the ``redacted`` gate applies it to a whole batch (a polars expression,
filters/redacted.py) and the redactor to each row it is handed (redaction/redactor.py), so
``golden redact`` on a shard refuses the same cases the flow's gate does. The list itself is
``funnels.redacted.opt_out_tenants`` (original tenant ids).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import polars as pl

#: Reason code for an opted-out case (reported and quarantined; never the tenant's data).
OPTED_OUT = "tenant_opted_out"


@dataclass(frozen=True, slots=True)
class TenantOptOut:
    """The tenants whose cases are excluded. A case without a tenant is not opted out."""

    tenants: frozenset[str]

    @classmethod
    def of(cls, tenants: Iterable[str]) -> TenantOptOut:
        return cls(frozenset(tenants))

    def excludes(self, tenant_id: object) -> bool:
        """True for a row whose ``tenant_id`` is on the list."""
        return isinstance(tenant_id, str) and tenant_id in self.tenants

    def expr(self, column: str = "tenant_id") -> pl.Expr:
        """The same rule over a frame: true where the column's tenant is on the list."""
        return pl.col(column).is_in(sorted(self.tenants)).fill_null(False)

"""HTML building blocks of the report: numbers and escaped tables (no Prefect, no I/O)."""

from __future__ import annotations

from html import escape
from typing import Any


def number(value: Any) -> str:
    if value is None:
        return "–"
    if isinstance(value, float) and not value.is_integer():
        return f"{value:,.2f}"
    return f"{int(value):,}"


def table(headers: tuple[str, ...], rows: list[tuple[Any, ...]]) -> str:
    head = "".join(f"<th>{escape(h)}</th>" for h in headers)
    body = []
    for row in rows:
        cells = []
        for value in row:
            if isinstance(value, int | float) and not isinstance(value, bool):
                cells.append(f'<td class="n">{number(value)}</td>')
            else:
                cells.append(f"<td>{escape(str(value))}</td>")
        body.append(f"<tr>{''.join(cells)}</tr>")
    return f"<table><tr>{head}</tr>{''.join(body)}</table>"

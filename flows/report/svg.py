"""Horizontal bar charts as inline SVG (no JavaScript, no fonts to fetch)."""

from __future__ import annotations

from html import escape

BAR_HEIGHT = 18
GAP = 6
LABEL_WIDTH = 220
BAR_WIDTH = 360
VALUE_WIDTH = 80
PALETTE = ("#3b6ea5", "#c4693d", "#5a9a5a", "#8a5aa6", "#b8a23b", "#4a9ea5")


def _fmt(value: float) -> str:
    return f"{value:,.0f}" if float(value).is_integer() else f"{value:,.2f}"


def bar_chart(title: str, items: list[tuple[str, float]], *, color_index: int = 0) -> str:
    """An SVG chart of ``(label, value)`` bars scaled to the largest value; empty when no items."""
    if not items:
        return ""
    top = max((v for _, v in items), default=0) or 1
    height = len(items) * (BAR_HEIGHT + GAP) + GAP
    width = LABEL_WIDTH + BAR_WIDTH + VALUE_WIDTH
    color = PALETTE[color_index % len(PALETTE)]
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" role="img" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" aria-label="{escape(title)}">',
        f"<title>{escape(title)}</title>",
    ]
    for i, (label, value) in enumerate(items):
        y = GAP + i * (BAR_HEIGHT + GAP)
        length = max(1.0, BAR_WIDTH * value / top) if value > 0 else 0.0
        text_y = y + BAR_HEIGHT - 5
        shown = label if len(label) <= 32 else label[:31] + "…"
        parts.append(
            f'<text x="{LABEL_WIDTH - 6}" y="{text_y}" text-anchor="end" '
            f'font-size="12">{escape(shown)}</text>'
        )
        parts.append(
            f'<rect x="{LABEL_WIDTH}" y="{y}" width="{length:.1f}" height="{BAR_HEIGHT}" '
            f'fill="{color}"><title>{escape(label)}: {_fmt(value)}</title></rect>'
        )
        parts.append(
            f'<text x="{LABEL_WIDTH + length + 4:.1f}" y="{text_y}" font-size="12">'
            f"{_fmt(value)}</text>"
        )
    parts.append("</svg>")
    return "".join(parts)

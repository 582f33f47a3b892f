"""The run report: pure functions from a stats dict (counts only) to a self-contained HTML page.

No Prefect, no file I/O, no network: charts are inline SVG and styles are inline, so the page
opens offline anywhere. The stats dict holds counts, reason codes, funnel names, tool and system
names and pseudonymised tenant ids; never record text.
"""

from golden_distill.flows.report.render import render_report
from golden_distill.flows.report.tables import counts_rows

__all__ = ["counts_rows", "render_report"]

"""The one-file HTML report of a stored sweep: its leaderboard and robustness curves.

The same machinery as the run report (report/html.py): inline vendored scripts allowed by
their sha256 in the page's Content-Security-Policy, autoescaped templates, data-only specs.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from markupsafe import Markup

from polygon_voice import __version__
from polygon_voice.report.html import _style, content_security_policy, scripts
from polygon_voice.report.sweep_charts import robustness_chart
from polygon_voice.report.templating import environment

if TYPE_CHECKING:
    from polygon_voice.store import Store

TEMPLATE = "sweep.html.j2"


class _NoLinks:
    """The one-file sweep report holds no run pages: run ids are shown, not linked."""

    def run(self, run_id: str) -> str:
        return ""


def sweep_charts(document: dict[str, Any]) -> list[dict[str, Any]]:
    """One robustness chart spec per curve of `document` (experiments.view)."""
    return [robustness_chart(c["condition"], c["rows"]) for c in document["curves"]]


def render_sweep_report(store: Store, sweep_id: str) -> str:
    """The report as one string; StoreError for an unknown sweep."""
    from polygon_voice.experiments.view import sweep_document

    document = sweep_document(store, sweep_id)
    inline = scripts()
    template = environment().get_template(TEMPLATE)
    return template.render(
        doc=document,
        charts=sweep_charts(document),
        links=_NoLinks(),
        csp=content_security_policy(inline),
        scripts=[Markup(text) for text in inline],  # our own files: the only unescaped text
        css=Markup(_style()),
        version=__version__,
        generated_at=datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S UTC"),
    )


def write_sweep_report(store: Store, sweep_id: str, path: Path) -> Path:
    """Write the sweep's report to `path` (whole or not at all)."""
    html = render_sweep_report(store, sweep_id)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(html, encoding="utf-8")
    tmp.replace(path)
    return path

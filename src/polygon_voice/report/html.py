"""The one-file HTML report of one or more stored runs (`polygon report --html`, `run --html`).

Everything is inline: the chart library (vendored, see assets/vendor/README.md), the chart
script and the style sheet. A Content-Security-Policy in the page allows exactly those
scripts, by the sha256 of their text, and nothing from anywhere: text from a transcript that
somehow became a `<script>` element would not run. Conversations are rendered one at a time
as the file is written, so a large run is never held in memory as HTML.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from functools import cache
from pathlib import Path
from typing import Any

from markupsafe import Markup

from polygon_voice import __version__
from polygon_voice.report.templating import SCRIPT_FILES, STYLE_FILE, asset, environment
from polygon_voice.report.views import (
    ComparisonRefused,
    View,
    comparison_view,
    conversation_anchor,
    iter_conversation_views,
    run_anchor,
    run_view,
)
from polygon_voice.store import Store, StoreError

TEMPLATE = "report.html.j2"


class ReportError(Exception):
    """The report cannot be written: an unknown run, an unknown judgement set, no run."""


class ReportLinks:
    """Links inside the one file: anchors of run sections and conversation viewers."""

    def run(self, run_id: str) -> str:
        return f"#{run_anchor(run_id)}"

    def conversation(self, run_id: str, conversation_id: str) -> str:
        return f"#{conversation_anchor(run_id, conversation_id)}"

    def persona(self, persona_id: str) -> str:
        return ""  # the file has no persona pages


@cache
def scripts() -> tuple[str, ...]:
    """The page's scripts in load order: the chart library, then the script that draws."""
    texts = [asset(name) for name in SCRIPT_FILES]
    for text in texts:
        if "</script" in text.lower() or "<!--" in text:
            # Would end the inline script element early; the vendored build must not hold it.
            raise ReportError("a vendored script contains '</script' or '<!--'; re-vendor it")
    return tuple(texts)


def _style() -> str:
    css = asset(STYLE_FILE)
    if "</style" in css.lower():
        raise ReportError(f"{STYLE_FILE} contains '</style'")  # would end the element early
    return css


def script_hash(text: str) -> str:
    """A CSP source for one inline script: 'sha256-BASE64' of its exact text."""
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return f"'sha256-{base64.b64encode(digest).decode()}'"


def content_security_policy(inline_scripts: Sequence[str]) -> str:
    """Only these inline scripts run; nothing is fetched; styles inline, images as data."""
    hashes = " ".join(script_hash(text) for text in inline_scripts)
    return (
        f"default-src 'none'; script-src {hashes}; style-src 'unsafe-inline'; "
        "img-src data:; font-src 'none'; connect-src 'none'; base-uri 'none'; "
        "form-action 'none'"
    )


def _resolve(store: Store, run_ids: Sequence[str], judgement_set: str) -> list[str]:
    if not run_ids:
        raise ReportError("give at least one run id")
    resolved = []
    for key in run_ids:
        try:
            run = store.get_run(key)
        except StoreError as exc:
            raise ReportError(str(exc)) from exc
        if judgement_set and judgement_set not in store.stage_result_names(run.id, "judge"):
            known = ", ".join(repr(n) for n in store.stage_result_names(run.id, "judge"))
            raise ReportError(
                f"run {run.id} has no judgement set {judgement_set!r} (it has: {known or 'none'})"
            )
        resolved.append(run.id)
    if len(set(resolved)) != len(resolved):
        raise ReportError(f"a run is named twice: {', '.join(resolved)}")
    return resolved


def _context(store: Store, run_ids: list[str], judgement_set: str) -> dict[str, Any]:
    runs = [run_view(store, run_id, judgement_set) for run_id in run_ids]
    comparison: View | None = None
    refused: str | None = None
    if len(run_ids) > 1:
        try:
            comparison = comparison_view(store, run_ids, judgement_set, runs)
        except ComparisonRefused as exc:
            refused = exc.reason

    def conversations(run_id: str) -> Iterator[View]:
        return iter_conversation_views(store, run_id, judgement_set)

    inline = scripts()
    return {
        "runs": runs,
        "comparison": comparison,
        "refused": refused,
        "conversations": conversations,
        "links": ReportLinks(),
        "csp": content_security_policy(inline),
        # Our own files, not data: the only text put into the page unescaped.
        "scripts": [Markup(text) for text in inline],
        "css": Markup(_style()),
        "version": __version__,
        "generated_at": datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S UTC"),
    }


def _chunks(store: Store, run_ids: Sequence[str], judgement_set: str) -> Iterator[str]:
    resolved = _resolve(store, run_ids, judgement_set)
    template = environment().get_template(TEMPLATE)
    return template.generate(**_context(store, resolved, judgement_set))


def render_html_report(store: Store, run_ids: Sequence[str], judgement_set: str = "") -> str:
    """The report as one string (tests, the app's download); files use `write_html_report`."""
    return "".join(_chunks(store, run_ids, judgement_set))


def write_html_report(
    store: Store, run_ids: Sequence[str], path: Path, judgement_set: str = ""
) -> Path:
    """Write the report of `run_ids` to `path` (via PATH.tmp, replaced when complete);
    ReportError for an unknown run or judgement set."""
    path = Path(path)
    chunks = _chunks(store, run_ids, judgement_set)  # fails before any file is touched
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    try:
        with tmp.open("w", encoding="utf-8") as out:
            for chunk in chunks:
                out.write(chunk)
        tmp.replace(path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return path

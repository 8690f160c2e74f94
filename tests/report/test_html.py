"""The one-file HTML report: its structure (golden file), escaping of hostile text, its
Content-Security-Policy, no network loads, and the comparison or its refusal.

The golden file holds the report's structure, not its bytes: the sequence of headings and of
elements the browser tests and readers rely on (data-testid, charts, turns, viewers), with
run ids replaced by RUN-A, RUN-B. To regenerate it after a deliberate change of the report:

    POLYGON_UPDATE_GOLDEN=1 pytest tests/report/test_html.py

and review the diff of tests/report/golden/report_structure.txt.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
from html import unescape
from html.parser import HTMLParser
from pathlib import Path

import pytest

from polygon_voice.report.html import ReportError, render_html_report, write_html_report
from polygon_voice.store import Store
from tests.report.report_store import (
    JS_LINK,
    ONERROR,
    PAYLOADS,
    SCRIPT,
    hostile_run,
    open_store,
    run,
)

GOLDEN = Path(__file__).parent / "golden" / "report_structure.txt"
UPDATE = os.environ.get("POLYGON_UPDATE_GOLDEN") == "1"
KEPT_ATTRS = (
    "data-conversation",
    "data-turn",
    "data-speaker",
    "data-axis",
    "data-chart",
    "data-status",
    "data-scenario",
    "data-rule",
    "data-call-id",
)


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Store, dict[str, str]]:
    store = open_store(tmp_path_factory.mktemp("html"))
    ids = {
        "flawed": run(store, "reference:flawed"),
        "robust": run(store, "reference:robust", noise=0.3),
        "v2": run(store, "reference:robust", rubric="v2"),
    }
    ids["hostile"] = hostile_run(store, ids["flawed"])
    return store, ids


class Page(HTMLParser):
    """Every element with its attributes, the text of each element, and script bodies."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.elements: list[tuple[str, dict[str, str | None]]] = []
        self.texts: list[str] = []
        self.scripts: list[tuple[dict[str, str | None], str]] = []
        self.structure: list[str] = []
        self._script: dict[str, str | None] | None = None
        self._heading: list[str] | None = None
        self._buffer: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = dict(attrs)
        self.elements.append((tag, attributes))
        if tag == "script":
            self._script, self._buffer = attributes, []
        if tag in ("h1", "h2", "h3", "h4"):
            self._heading = [tag]
        testid = attributes.get("data-testid")
        classes = (attributes.get("class") or "").split()
        if testid or "chart" in classes or tag == "details" or "divergence" in classes:
            kept = "".join(f"[{k}={attributes[k]}]" for k in KEPT_ATTRS if k in attributes)
            mark = f"[data-testid={testid}]" if testid else ""
            extra = ".divergence" if "divergence" in classes else ""
            self.structure.append(f"{tag}{mark}{extra}{kept}")

    def handle_endtag(self, tag: str) -> None:
        if tag == "script" and self._script is not None:
            self.scripts.append((self._script, "".join(self._buffer)))
            self._script = None
        if self._heading is not None and tag == self._heading[0]:
            text = " ".join("".join(self._heading[1:]).split())
            self.structure.append(f"{tag}: {text}")
            self._heading = None

    def handle_data(self, data: str) -> None:
        if self._script is not None:
            self._buffer.append(data)
            return
        self.texts.append(data)
        if self._heading is not None:
            self._heading.append(data)


def parse(html: str) -> Page:
    page = Page()
    page.feed(html)
    page.close()
    return page


def normalized(lines: list[str], run_ids: list[str]) -> list[str]:
    out = []
    for line in lines:
        for i, run_id in enumerate(run_ids):
            line = line.replace(run_id, f"RUN-{'AB'[i]}")
        out.append(line)
    return out


def test_report_structure_matches_the_golden_file(runs: tuple[Store, dict[str, str]]) -> None:
    store, ids = runs
    pair = [ids["flawed"], ids["robust"]]
    structure = normalized(parse(render_html_report(store, pair)).structure, pair)
    text = "\n".join(structure) + "\n"
    if UPDATE or not GOLDEN.exists():
        GOLDEN.write_text(text, encoding="utf-8")
        if not UPDATE:
            pytest.fail(f"{GOLDEN.name} was missing and has been written; run again")
    assert text == GOLDEN.read_text(encoding="utf-8")
    # What the golden file must hold whatever it is regenerated to.
    for wanted in ("[data-testid=comparison]", "[data-testid=run-header]",
                   "[data-testid=conversation-row]", "[data-testid=tool-call]",
                   "[data-testid=side-by-side]", "[data-testid=axes]"):  # fmt: skip
        assert any(wanted in line for line in structure), wanted
    for name in ("composite", "criteria", "probes", "repeats"):
        assert sum(f"div[data-chart={name}]" in line for line in structure) == 3  # cmp + 2 runs


def test_hostile_text_never_becomes_markup(runs: tuple[Store, dict[str, str]]) -> None:
    store, ids = runs
    html = render_html_report(store, [ids["hostile"]])
    page = parse(html)
    assert not any(tag in ("img", "b") for tag, _ in page.elements)
    links = [a for tag, a in page.elements if tag == "a"]
    assert links
    assert all(not (a.get("href") or "").startswith("javascript:") for a in links)
    for _, attributes in page.elements:
        assert not any(name.startswith("on") for name in attributes), attributes
        assert not any("javascript:" in (value or "") for name, value in attributes.items()
                       if name in ("href", "src", "action", "formaction"))  # fmt: skip
    # Executable scripts are exactly ours; the rest are JSON data.
    executable = [body for attrs, body in page.scripts if attrs.get("type") is None]
    assert len(executable) == 5
    assert not any("alert(" in body for body in executable)
    data = [body for attrs, body in page.scripts if attrs.get("type") == "application/json"]
    assert data
    assert all("<" not in body for body in data)
    # The payloads are shown, as text, where the call had them.
    text = "".join(page.texts)
    for payload in PAYLOADS:
        assert payload in text
    assert f"Eve {ONERROR}" in text  # the persona's name
    assert f"agent {SCRIPT}" in text  # a run config value
    marks = [unescape(m) for m in re.findall(r'<mark class="evidence">(.*?)</mark>', html)]
    assert any(SCRIPT in m for m in marks), "the judge's quote of the hostile turn is marked"
    assert JS_LINK in text


def test_the_policy_allows_exactly_the_inline_scripts(runs: tuple[Store, dict[str, str]]) -> None:
    store, ids = runs
    page = parse(render_html_report(store, [ids["flawed"]]))
    metas = [a for tag, a in page.elements if tag == "meta" and a.get("http-equiv")]
    assert len(metas) == 1
    policy = metas[0]["content"] or ""
    directives = {part.split()[0]: part.split()[1:] for part in policy.split(";") if part.strip()}
    assert directives["default-src"] == ["'none'"]
    assert directives["img-src"] == ["data:"]
    allowed = set(directives["script-src"])
    executable = [body for attrs, body in page.scripts if attrs.get("type") is None]
    hashes = {
        f"'sha256-{base64.b64encode(hashlib.sha256(b.encode()).digest()).decode()}'"
        for b in executable
    }
    assert allowed == hashes
    assert not {"'unsafe-inline'", "'unsafe-eval'", "*"} & allowed


def test_nothing_is_loaded_from_the_network(runs: tuple[Store, dict[str, str]]) -> None:
    store, ids = runs
    html = render_html_report(store, [ids["flawed"], ids["robust"]])
    page = parse(html)
    assert not any(tag in ("link", "iframe", "img", "object", "embed") for tag, _ in page.elements)
    for tag, attributes in page.elements:
        for name in ("src", "href", "action", "srcset", "poster", "data"):
            value = (attributes.get(name) or "").strip().lower()
            assert not re.match(r"^(https?:)?//", value), (tag, name, value)
        if tag == "script":
            assert "src" not in attributes
    styles = re.findall(r"<style>(.*?)</style>", html, flags=re.S)
    assert styles
    assert not any("@import" in css or re.search(r"url\(\s*['\"]?(https?:)?//", css)
                   for css in styles)  # fmt: skip
    for attrs, body in page.scripts:
        if attrs.get("type") == "application/json":
            assert "url" not in json.loads(body)["data"]


def test_mixed_rubrics_are_refused_with_the_reason(runs: tuple[Store, dict[str, str]]) -> None:
    store, ids = runs
    page = parse(render_html_report(store, [ids["flawed"], ids["v2"]]))
    testids = [a.get("data-testid") for _, a in page.elements]
    assert "compare-refused" in testids
    assert "comparison" not in testids
    assert testids.count("run-header") == 2  # each run is still reported
    assert "different rubric versions" in "".join(page.texts)


def test_unknown_runs_fail_before_a_file_is_written(
    runs: tuple[Store, dict[str, str]], tmp_path: Path
) -> None:
    store, ids = runs
    target = tmp_path / "report.html"
    with pytest.raises(ReportError, match="nosuchrun"):
        write_html_report(store, [ids["flawed"], "nosuchrun"], target)
    with pytest.raises(ReportError, match="judgement set"):
        write_html_report(store, [ids["flawed"]], target, judgement_set="nope")
    with pytest.raises(ReportError, match="at least one"):
        write_html_report(store, [], target)
    assert list(tmp_path.iterdir()) == []


def test_write_replaces_the_file_whole(runs: tuple[Store, dict[str, str]], tmp_path: Path) -> None:
    store, ids = runs
    target = tmp_path / "out" / "report.html"
    target.parent.mkdir()
    target.write_text("old")
    written = write_html_report(store, [ids["flawed"]], target)
    assert written == target
    html = target.read_text(encoding="utf-8")
    assert html.startswith("<!DOCTYPE html>")
    assert html.rstrip().endswith("</html>")
    assert sorted(p.name for p in target.parent.iterdir()) == ["report.html"]
    viewers = [a for tag, a in parse(html).elements if a.get("data-testid") == "conversation"]
    assert len(viewers) == store.get_run(ids["flawed"]).conversation_count


def test_an_empty_run_still_reads(tmp_path: Path) -> None:
    from tests.store.store_factories import make_run

    store = open_store(tmp_path)
    store.create_run(make_run("empty1"))
    page = parse(render_html_report(store, ["empty1"]))
    testids = [a.get("data-testid") for _, a in page.elements]
    for wanted in ("run-header", "verdict-counts", "criteria-table", "axes-table",
                   "root-causes", "release-gate", "probes-table", "conversation-list"):  # fmt: skip
        assert wanted in testids, wanted
    assert "conversation-row" not in testids
    assert "conversation" not in testids
    text = " ".join(" ".join(page.texts).split())
    assert "No call of this run was judged." in text
    assert "this suite has no three-layer cases" in text

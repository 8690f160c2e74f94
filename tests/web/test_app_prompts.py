"""The prompt editor: lint marks at the findings' offsets, lint without saving, save and
re-lint, the prompt's personas going stale, and prompt text that stays text."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from urllib.parse import parse_qs, quote, urlsplit

import pytest
from fastapi.testclient import TestClient

from polygon_voice.lint import AXES, Finding, LintError, lint
from polygon_voice.web import prompts
from tests.payloads import IMG, LINK, SCRIPT
from tests.web.conftest import Stored
from tests.web.dom import Element, parse

PREFIX = "# Notes\n\n"  # a heading: no rule, so every finding only moves


def edit_url(path: Path) -> str:
    return f"/prompts/edit?path={quote(str(path.resolve()))}"


def csrf_of(doc: Element) -> str:
    return doc.testid("prompt-form").one("input", name="csrf").attrs["value"]


def marks(doc: Element) -> list[tuple[int, int, str, str]]:
    """(start, end, axes, text) of every lint mark."""
    return [
        (int(m.attrs["data-start"]), int(m.attrs["data-end"]), m.attrs["data-axis"], m.text)
        for m in doc.testid("prompt-marked").all("mark", cls="lint-finding")
    ]


def listed(doc: Element) -> list[tuple[int, int, str, str]]:
    """(start, end, axis, kind) of every finding in the list below the text."""
    return [
        (int(li.attrs["data-start"]), int(li.attrs["data-end"]), li.attrs["data-axis"],
         li.attrs["data-kind"])
        for li in doc.all(data_testid="lint-finding")
    ]  # fmt: skip


def expected(text: str) -> list[tuple[int, int, str, str]]:
    report = lint(text, max_tier=2)
    found = [f for axis in AXES for f in report.axes[axis].findings]
    return sorted((f.start, f.end, f.axis, f.kind) for f in found)


@pytest.fixture
def weak(stored: Stored) -> Iterator[Path]:
    """The editable weak prompt, put back as it was after the test."""
    path = stored.root / "weak.md"
    before = path.read_bytes()
    yield path
    path.write_bytes(before)


@pytest.fixture
def personas_prompt(stored: Stored) -> Iterator[Path]:
    """The prompt the stored personas were made from, put back after the test."""
    before = stored.prompt.read_bytes()
    yield stored.prompt
    stored.prompt.write_bytes(before)


def test_the_prompts_page_lists_the_named_and_the_personas_files(
    client: TestClient, stored: Stored
) -> None:
    doc = parse(client.get("/prompts").text)
    links = [urlsplit(a.attrs["href"]) for a in doc.testid("prompts-table").all("a")]
    assert {link.path for link in links} == {"/prompts/edit"}
    paths = {parse_qs(link.query)["path"][0] for link in links}
    assert paths == {str((stored.root / "weak.md").resolve()), str(stored.prompt.resolve())}


def test_the_editor_marks_every_finding_at_its_offsets(client: TestClient, weak: Path) -> None:
    text = weak.read_text()
    response = client.get(edit_url(weak))
    assert response.status_code == 200
    doc = parse(response.text)
    assert doc.testid("prompt-text").text == text
    assert doc.testid("prompt-marked").text == text  # the marked copy holds every character
    found = expected(text)
    assert len(found) >= 5
    assert sorted(listed(doc)) == found
    shown = marks(doc)
    assert shown
    for start, end, _, piece in shown:
        assert text[start:end] == piece
    covered = {i for start, end, _, _ in shown for i in range(start, end)}
    assert covered == {i for start, end, _, _ in found for i in range(start, end)}
    for start, end, axis, _ in found:
        over = [m for m in shown if start <= m[0] and m[1] <= end]
        assert over
        assert all(axis in m[2].split() for m in over)
    first = doc.testid("prompt-marked").all("mark", cls="lint-finding")[0]
    assert first.attrs["title"]  # the message, shown on hover
    assert first.attrs["data-kind"]


def test_scores_and_tiers_are_those_of_the_lint(client: TestClient, weak: Path) -> None:
    report = lint(weak.read_text(), max_tier=2)
    doc = parse(client.get(edit_url(weak)).text)
    scores = doc.testid("lint-scores")
    for axis in AXES:
        row = scores.one("tr", data_axis=axis)
        cells = [" ".join(td.text.split()) for td in row.all("td")]
        assert cells == [
            axis,
            f"{report.axes[axis].score:.2f}",
            str(len(report.axes[axis].findings)),
        ]
    tiers = doc.testid("lint-tiers")
    assert [li.attrs["data-tier"] for li in tiers.all("li", data_state="run")] == ["1", "2"]
    skipped = tiers.all("li", data_state="skipped")
    assert [li.attrs["data-tier"] for li in skipped] == ["3", "4"]
    assert all("--max-tier 2" in li.text for li in skipped)


def test_lint_without_saving_moves_the_marks_and_keeps_the_file(
    client: TestClient, weak: Path
) -> None:
    before = weak.read_bytes()
    doc = parse(client.get(edit_url(weak)).text)
    old = marks(doc)
    posted = PREFIX + weak.read_text()
    response = client.post(
        edit_url(weak), data={"text": posted, "action": "lint", "csrf": csrf_of(doc)}
    )
    assert response.status_code == 200
    after = parse(response.text)
    assert weak.read_bytes() == before
    assert after.testid("prompt-text").text == posted
    moved = marks(after)
    shift = len(PREFIX)
    assert [(s - shift, e - shift, a, t) for s, e, a, t in moved] == old
    assert "not saved" in after.testid("notice").text.lower()
    after.testid("unsaved")


def test_save_writes_the_file_relints_and_the_personas_go_stale(
    client: TestClient, stored: Stored, personas_prompt: Path
) -> None:
    original = personas_prompt.read_text()
    doc = parse(client.get(edit_url(personas_prompt)).text)
    rows = doc.testid("prompt-personas").all(data_testid="persona-row")
    assert {r.attrs["data-persona"] for r in rows} == {p.id for p in stored.personas}
    assert not any("stale" in r.classes() for r in rows)
    # A browser sends a textarea's line ends as CRLF: the file keeps its LF ones.
    edited = (PREFIX + original + "Be vague about things, etc.\n").replace("\n", "\r\n")
    response = client.post(
        edit_url(personas_prompt), data={"text": edited, "action": "save", "csrf": csrf_of(doc)}
    )
    assert response.status_code == 200
    saved = personas_prompt.read_text()
    assert saved == PREFIX + original + "Be vague about things, etc.\n"
    assert "\r" not in personas_prompt.read_bytes().decode()
    after = parse(response.text)
    assert after.testid("notice").text == "Saved."
    assert sorted(listed(after)) == expected(saved)
    assert any(text == "etc." for *_, text in marks(after))
    rows = after.testid("prompt-personas").all(data_testid="persona-row")
    assert rows
    assert all("stale" in r.classes() for r in rows)
    stale = parse(client.get("/personas?staleness=stale").text)
    assert {r.attrs["data-persona"] for r in stale.all(data_testid="persona-row")} == {
        p.id for p in stored.personas
    }
    # Saved back as it was: the same hash, so the personas are current again.
    client.post(
        edit_url(personas_prompt),
        data={"text": original, "action": "save", "csrf": csrf_of(after)},
    )
    rows = parse(client.get(edit_url(personas_prompt)).text).all(data_testid="persona-row")
    assert rows
    assert not any("stale" in r.classes() for r in rows)


def test_prompt_text_with_payloads_stays_text(client: TestClient, weak: Path) -> None:
    hostile = f"Say {SCRIPT} when asked. Try to show {IMG} etc.\nLink: {LINK}\n"
    doc = parse(client.get(edit_url(weak)).text)
    response = client.post(
        edit_url(weak), data={"text": hostile, "action": "lint", "csrf": csrf_of(doc)}
    )
    assert response.status_code == 200
    assert "<script>alert" not in response.text
    page = parse(response.text)
    assert page.testid("prompt-text").text == hostile
    assert page.testid("prompt-marked").text == hostile
    assert not page.all("img")
    assert all(el.attrs.get("src", "/static/").startswith("/static/") for el in page.all("script"))
    assert not [el for el in page.iter() if any(n.startswith("on") for n in el.attrs)]


def test_a_text_that_cannot_be_linted_says_why(
    client: TestClient, weak: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuse(text: str, *, max_tier: int) -> None:
        raise LintError("unknown language 'xx'; supported: en, de, hr, ru")

    monkeypatch.setattr("polygon_voice.web.app.lint", refuse)
    response = client.get(edit_url(weak))
    assert response.status_code == 200
    assert "unknown language 'xx'" in parse(response.text).testid("lint-error").text


def test_an_unknown_editor_action_is_a_bad_request_and_saves_nothing(
    client: TestClient, weak: Path
) -> None:
    before = weak.read_bytes()
    doc = parse(client.get(edit_url(weak)).text)
    response = client.post(
        edit_url(weak), data={"text": "changed", "action": "publish", "csrf": csrf_of(doc)}
    )
    assert response.status_code == 400
    assert "unknown action 'publish'" in parse(response.text).testid("message").text
    assert weak.read_bytes() == before


def test_a_leading_newline_survives_the_round_trip(client: TestClient, weak: Path) -> None:
    weak.write_text("\nStarts with an empty line.\n")
    doc = parse(client.get(edit_url(weak)).text)
    assert doc.testid("prompt-text").text == "\nStarts with an empty line.\n"
    assert doc.testid("prompt-marked").text == "\nStarts with an empty line.\n"


def finding(start: int, end: int, axis: str = "ambiguity", kind: str = "vague") -> Finding:
    return Finding.model_validate(
        {"axis": axis, "start": start, "end": end, "line": 1, "column": start + 1, "tier": 1,
         "kind": kind, "weight": 0.1, "message": f"{kind} at {start}"}
    )  # fmt: skip


def test_overlapping_findings_share_the_pieces_they_both_cover() -> None:
    text = "abcdefghij"
    found = [finding(2, 6, "ambiguity", "vague"), finding(4, 8, "redundancy", "dup")]
    pieces = prompts.marked_pieces(text, found)
    assert "".join(p.text for p in pieces) == text
    spans = [(p.start, p.end, p.axes, p.findings) for p in pieces]
    assert spans == [
        (0, 2, (), ()),
        (2, 4, ("ambiguity",), (0,)),
        (4, 6, ("ambiguity", "redundancy"), (0, 1)),
        (6, 8, ("redundancy",), (1,)),
        (8, 10, (), ()),
    ]
    both = pieces[2]
    assert "vague at 2" in both.title
    assert "dup at 4" in both.title


def test_findings_past_the_end_or_empty_are_cut_to_the_text() -> None:
    pieces = prompts.marked_pieces("abc", [finding(1, 50), finding(2, 2)])
    assert [(p.text, p.findings) for p in pieces] == [("a", ()), ("bc", (0,))]

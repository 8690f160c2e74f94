"""JUnit XML of stored runs, for CI systems (`polygon run --junit`, `polygon report --junit`).

One testsuite per run; one testcase per conversation and one per release-gate check
(docs/results.md, "JUnit XML"). A conversation's testcase is, in this order of precedence:
an *error* when a role's model failed for it (the call says nothing about the agent), *skipped*
when it did not exercise the agent, a *failure* when its verdict is fail or unscored, its
expected outcome was not met or its three-layer case is not end-to-end, else a pass.

Transcripts are untrusted: XML 1.0 cannot hold most control characters or lone surrogates
at all, so they are removed before the text reaches the XML writer (which escapes the rest).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from junitparser import Error, Failure, JUnitXml, Skipped, TestCase, TestSuite

from polygon_voice.model import CaseScore, ConversationResult
from polygon_voice.report.files import Aligned, case_summary, iter_conversation_entries
from polygon_voice.store import RunRecord, Store, StoreError

# Characters XML 1.0 does not allow anywhere in a document (not even escaped): C0 controls
# but tab, newline and carriage return, lone surrogates, and U+FFFE / U+FFFF.
_NOT_IN_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")

TRANSCRIPT_CHARS = 4000
"""The most of a transcript one testcase's system-out holds; the rest is named, not shown."""
TURN_CHARS = 400
"""The most of one turn's text the excerpt shows."""
FAILING_VERDICTS = ("fail", "unscored")
GATE_CLASS = "release_gate"
GATE_NAMED = 5  # the cases a gate failure's message names; its text names them all


def xml_text(text: object) -> str:
    """`text` as a string XML 1.0 can hold: the characters it forbids are removed."""
    return _NOT_IN_XML.sub("", str(text))


def write_junit(store: Store, run_ids: Sequence[str], path: Path, judgement_set: str = "") -> Path:
    """Write the JUnit XML of the stored runs `run_ids` to `path` (atomically); returns it.

    `judgement_set` picks the judge's named set ("" is each run's own). StoreError names an
    unknown run.
    """
    runs = [store.get_run(run_id) for run_id in run_ids]  # every run checked before writing
    for run in runs:
        names = store.stage_result_names(run.id, "judge")
        if judgement_set and judgement_set not in names:
            known = ", ".join(repr(name) for name in names) or "none"
            raise StoreError(
                f"run {run.id} has no judgement set {judgement_set!r} (it has: {known})"
            )
    document = JUnitXml(name="polygon")
    for run in runs:
        document.add_testsuite(run_suite(store, run, judgement_set))
    document.update_statistics()  # type: ignore[no-untyped-call]
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    try:
        document.write(str(tmp), pretty=True)
        tmp.replace(path)
    except BaseException:
        tmp.unlink(missing_ok=True)  # a failed write leaves no half file behind
        raise
    return path


def run_suite(store: Store, run: RunRecord, judgement_set: str = "") -> TestSuite:
    """The testsuite of one stored run: its conversations, then its release-gate checks."""
    suite = TestSuite(xml_text(f"{run.suite} {run.agent} {run.id}"))
    suite.timestamp = run.started_at.isoformat()
    for name, value in run_properties(run, judgement_set).items():
        suite.add_property(name, xml_text(value))
    # Streamed in plan order alongside the conversations: one case is held at a time.
    checked = Aligned(store.iter_stage_results(run.id, "checks"))
    for result, entry in iter_conversation_entries(store, run.id, judgement_set):
        data = checked.get(result.id)
        case = CaseScore.model_validate(data) if data is not None else None
        suite.add_testcase(conversation_case(run, result, entry, case))
    summary = case_summary(store, run.id)
    if summary is not None:
        suite.add_testcases(gate_cases(run, summary.gate()))
    # The counts, and the time: the sum of the calls' lengths on the virtual clock.
    suite.update_statistics()  # type: ignore[no-untyped-call]
    return suite


def run_properties(run: RunRecord, judgement_set: str = "") -> dict[str, str]:
    """What identifies the run, as the testsuite's properties."""
    config = run.config
    properties = {
        "run_id": run.id,
        "suite": run.suite,
        "agent": run.agent,
        "seed": str(run.seed),
        "rubric_version": str(config.get("rubric", "")),
        "judge": str(config.get("judge", "")),
        "polygon_version": run.polygon_version,
        "status": run.status,
    }
    if judgement_set:
        properties["judgement_set"] = judgement_set
    return properties


def conversation_case(
    run: RunRecord,
    result: ConversationResult,
    entry: dict[str, Any],
    case: CaseScore | None = None,
) -> TestCase:
    """The testcase of one conversation (see the module's docstring for its outcome)."""
    testcase = TestCase(
        name=xml_text(result.id),
        classname=xml_text(f"polygon.{run.suite}.{result.scenario_id}"),
        # The call's length on the virtual clock: the same for every replay of a seed.
        time=round(result.end.time, 3),
    )
    failures: dict[str, str] = entry.get("failures") or {}
    if failures:
        roles = ", ".join(failures)
        error = Error(xml_text(f"the {roles} model failed for this call"), "model_failure")
        error.text = xml_text("\n".join(f"{role}: {text}" for role, text in failures.items()))
        testcase.result = [error]
    elif entry.get("not_exercised") is not None:
        testcase.result = [Skipped(xml_text(f"not exercised: {entry['not_exercised']}"))]
    else:
        problems = failure_lines(entry, case)
        if problems:
            failure = Failure(xml_text("; ".join(problems)), _failure_type(entry, case))
            failure.text = xml_text(failure_details(entry, case))
            testcase.result = [failure]
    testcase.system_out = xml_text(transcript_excerpt(result))
    return testcase


def failure_lines(entry: dict[str, Any], case: CaseScore | None) -> list[str]:
    """Why a conversation fails, one short phrase each; empty when it passes."""
    lines: list[str] = []
    judgement = entry.get("judgement")
    if judgement is not None and judgement.get("verdict") in FAILING_VERDICTS:
        composite = judgement.get("composite")
        score = f" (composite {composite:.1f})" if isinstance(composite, int | float) else ""
        lines.append(f"verdict {judgement['verdict']}{score}")
        gates = judgement.get("gates_failed") or []
        if gates:
            lines.append("gates failed: " + ", ".join(str(g) for g in gates))
    expect = entry.get("expect")
    if expect is not None and expect.get("not_exercised") is None and not expect.get("met"):
        failed = [c["name"] for c in expect.get("checks", []) if not c.get("passed")]
        lines.append("expected outcome not met" + (f": {', '.join(failed)}" if failed else ""))
    if case is not None and case.not_exercised is None and not case.e2e:
        cause = case.root_cause
        if cause is not None:
            layer = f" ({cause.layer.value} layer)" if cause.layer is not None else ""
            lines.append(f"root cause: {cause.cause}{layer}")
        else:
            lines.append("three-layer case not end-to-end")
    return lines


def _failure_type(entry: dict[str, Any], case: CaseScore | None) -> str:
    judgement = entry.get("judgement")
    if judgement is not None and judgement.get("verdict") in FAILING_VERDICTS:
        return "verdict"
    if case is not None and not case.e2e:
        return "three_layer"
    return "expectation"


def failure_details(entry: dict[str, Any], case: CaseScore | None) -> str:
    """The whole story of a failure: the judge's reasons, weak criteria, the axes' whys."""
    parts: list[str] = []
    judgement = entry.get("judgement")
    if judgement is not None:
        parts.append(
            f"verdict: {judgement.get('verdict')}, composite: {judgement.get('composite')}"
        )
        parts.extend(f"reason: {reason}" for reason in judgement.get("reasons", []))
        for name, criterion in (judgement.get("criteria") or {}).items():
            if isinstance(criterion, dict) and criterion.get("reason"):
                score = criterion.get("score")
                parts.append(f"criterion {name} ({score}): {criterion['reason']}")
    expect = entry.get("expect")
    if expect is not None:
        for check in expect.get("checks", []):
            if not check.get("passed"):
                parts.append(f"expectation {check.get('name')}: {check.get('why', '')}")
    if case is not None:
        for axis, verdict in case.axes.items():
            if not verdict.passed:
                parts.append(f"axis {axis}: {verdict.why}")
        if case.root_cause is not None and case.root_cause.evidence:
            parts.append(f"root cause evidence: {case.root_cause.evidence}")
        if case.gate_breaks:
            parts.append("release-gate checks broken: " + ", ".join(case.gate_breaks))
    return "\n".join(parts)


def transcript_excerpt(
    result: ConversationResult, limit: int = TRANSCRIPT_CHARS, turn_limit: int = TURN_CHARS
) -> str:
    """The call turn by turn, `turn N [t=..s] caller: text`, cut at `limit` characters (said)."""
    lines: list[str] = []
    used = 0
    for position, turn in enumerate(result.turns):
        text = " ".join(turn.text.split())
        if len(text) > turn_limit:
            text = text[:turn_limit] + " [...]"
        line = f"turn {turn.index} [t={turn.start:.2f}s] {turn.speaker}: {text}"
        if used + len(line) > limit and lines:
            hidden = len(result.turns) - position
            lines.append(f"[cut: {hidden} more turns; polygon show RUN --conversation {result.id}]")
            break
        lines.append(line)
        used += len(line) + 1
    lines.append(f"[call ended at t={result.end.time:.2f}s: {result.end.reason.value}]")
    return "\n".join(lines)


def gate_cases(run: RunRecord, gate: dict[str, Any]) -> list[TestCase]:
    """One testcase per release-gate check; a failure names the cases that broke it."""
    proved = gate["passed"] or not all(check["passed"] for check in gate["checks"])
    cases = []
    for check in gate["checks"]:
        testcase = TestCase(
            name=check["id"], classname=xml_text(f"polygon.{run.suite}.{GATE_CLASS}"), time=0.0
        )
        if not check["passed"]:
            broken = check["cases"]
            named = ", ".join(broken[:GATE_NAMED])
            if len(broken) > GATE_NAMED:
                named += f" and {len(broken) - GATE_NAMED} more"
            message = f"{check['id']} {check['name']}: broken by {named}"
            failure = Failure(xml_text(message), "gate")
            failure.text = xml_text(f"{check['name']}\ncases: {', '.join(broken)}")
            testcase.result = [failure]
        elif not proved:
            # No case was exercised: the gate proves nothing and does not pass.
            failure = Failure(f"{check['id']}: no three-layer case was exercised", "gate")
            testcase.result = [failure]
        testcase.system_out = xml_text(check["name"])
        cases.append(testcase)
    return cases

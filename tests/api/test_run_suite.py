"""`run_suite` / `run_suite_async` / `rejudge_run` from code: typed results equal to what the
report says, errors as exceptions, events through the observer, failures counted per role."""

from __future__ import annotations

import asyncio
import json
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from polygon_voice import (
    ExitCode,
    InfrastructureError,
    InputError,
    RunObserver,
    RunOptions,
    SetupError,
    Suite,
    open_store,
    rejudge_run,
    run_suite,
    run_suite_async,
)
from polygon_voice.model import CallStarted, EndCall, Say
from polygon_voice.testing import FakeLLMServer, Rule
from tests.cli.conftest import EXAMPLE_SUITE


@pytest.fixture(autouse=True)
def in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    for name in ("POLYGON_DB", "POLYGON_JUDGE_MODEL", "POLYGON_BASE_URL", "POLYGON_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    return tmp_path


@pytest.fixture
def fake() -> Iterator[FakeLLMServer]:
    server = FakeLLMServer([Rule(role="judge", error=500, message="judge down")]).start()
    yield server
    server.stop()


class Recorder(RunObserver):
    def __init__(self) -> None:
        self.events: list[tuple[str, str]] = []

    def run_started(self, started: object) -> None:
        self.events.append(("started", str(getattr(started, "total", "?"))))

    def call_finished(self, result: object, tally: object) -> None:
        self.events.append(("call", str(getattr(result, "id", "?"))))

    def role_failed(self, role: str, error: str) -> None:
        self.events.append(("failed", role))


def test_the_results_are_those_of_the_report(tmp_path: Path) -> None:
    result = run_suite(EXAMPLE_SUITE, out=tmp_path / "out", db="r.db")
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert result.report_path == tmp_path / "out" / "report.json"
    assert [c.id for c in result.calls] == [c["id"] for c in report["conversations"]]
    by_id = {c["id"]: c for c in report["conversations"]}
    for call in result.calls:
        assert call.end_reason == by_id[call.id]["end_reason"]
        assert call.verdict == by_id[call.id]["judgement"]["verdict"]
        assert call.composite == by_id[call.id]["judgement"]["composite"]
    assert sum(result.verdicts.values()) == len(result.calls) == 9
    assert result.exit_code() == ExitCode.OK
    assert {p.id for p in result.probes} == {row["id"] for row in report["probes"]}


def test_a_scenario_filter_runs_only_its_scenarios_and_is_kept_on_resume() -> None:
    result = run_suite(EXAMPLE_SUITE, scenarios=("change-*", "crm-down"), db="r.db")
    assert [c.scenario for c in result.calls] == [
        "change-quantity",
        "change-date-step-by-step",
        "crm-down",
    ]
    with pytest.raises(InputError, match="--scenario change-\\* --scenario crm-down"):
        run_suite(EXAMPLE_SUITE, resume=result.run_id, scenarios=("silent-*",), db="r.db")
    again = run_suite(EXAMPLE_SUITE, resume=result.run_id, db="r.db")
    assert again.calls_run == 0  # everything was stored: nothing to play
    assert len(again.calls) == 3
    with pytest.raises(InputError, match="change-quantity"):
        run_suite(EXAMPLE_SUITE, scenarios=("nothing-*",), db="r.db")


def test_a_bad_suite_is_an_input_error_naming_file_line_and_field(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: b\nscenarios:\n  - id: a\n    script:\n      - barge_in: {at: nope}\n")
    with pytest.raises(InputError) as caught:
        run_suite(bad, db="r.db")
    assert "bad.yaml:5:" in str(caught.value)
    assert "scenarios[0].script[0].barge_in.at" in str(caught.value)
    assert caught.value.exit_code == 2


def test_options_are_checked_before_anything_runs() -> None:
    with pytest.raises(InputError, match="concurrency"):
        RunOptions(concurrency=0)
    with pytest.raises(InputError, match="unknown run option 'sede'"):
        run_suite(EXAMPLE_SUITE, sede=3, db="r.db")
    with pytest.raises(SetupError, match="POLYGON_JUDGE_MODEL"):
        run_suite(EXAMPLE_SUITE, judge="llm", db="r.db")
    with pytest.raises(InputError, match="no agent given"):
        run_suite(Suite.model_validate({"name": "x", "scenarios": [{"id": "a"}]}), db="r.db")
    assert list(open_store("r.db").list_runs()) == []


def test_a_failing_judge_model_is_counted_once_per_role(
    fake: FakeLLMServer, tmp_path: Path
) -> None:
    config = tmp_path / "llm.yaml"
    config.write_text(
        f"llm:\n  judge:\n    model: fake\n    base_url: {fake.base_url}\n"
        "    max_retries: 0\n    cache: false\n"
    )
    recorder = Recorder()
    result = run_suite(
        EXAMPLE_SUITE,
        judge="llm",
        llm_config=config,
        scenarios=("change-*",),
        observer=recorder,
        write_files=False,
        db="r.db",
    )
    assert recorder.events[0] == ("started", "2")
    assert [e for e in recorder.events if e[0] == "failed"] == [("failed", "judge")]
    finished = sorted(e[1] for e in recorder.events if e[0] == "call")
    assert finished == ["change-date-step-by-step", "change-quantity"]
    (failure,) = result.failures
    assert (failure.role, failure.count) == ("judge", 2)
    assert "judge down" in failure.first_error
    assert result.verdicts == {"unscored": 2}
    assert result.exit_code(fail_on="warn") == ExitCode.INFRASTRUCTURE


class Unreachable:
    """An agent whose own backend is down: it says so with InfrastructureError."""

    def __init__(self, context: object) -> None:
        self.context = context

    async def respond(self, event: object):  # type: ignore[no-untyped-def]
        if isinstance(event, CallStarted):
            raise InfrastructureError("booking service at 10.0.0.7 refused the connection")
        yield Say(text="never")


class Buggy:
    def __init__(self, context: object) -> None:
        self.context = context

    async def respond(self, event: object):  # type: ignore[no-untyped-def]
        if isinstance(event, CallStarted):
            raise KeyError("a bug of the agent itself")
        yield EndCall()


def test_an_agent_infrastructure_error_is_told_from_an_agent_bug() -> None:
    down = run_suite(EXAMPLE_SUITE, agent=Unreachable, write_files=False, db="r.db")
    (failure,) = down.failures
    assert (failure.role, failure.count) == ("agent", 9)
    assert "refused the connection" in failure.first_error
    assert down.exit_code() == ExitCode.INFRASTRUCTURE
    buggy = run_suite(EXAMPLE_SUITE, agent=Buggy, write_files=False, db="r.db")
    assert buggy.failures == ()
    assert buggy.exit_code() == ExitCode.OK
    assert buggy.exit_code(fail_on="fail") == ExitCode.VERDICTS_FAILED
    assert all(c.end_reason == "error" for c in buggy.calls)


def test_rejudge_names_its_set_and_refuses_a_taken_one() -> None:
    first = run_suite("three-layer", agent="reference:flawed", write_files=False, db="r.db")
    again = rejudge_run(first.run_id, rubric="v2", name="second-look", db="r.db")
    assert again.judgement_set == "second-look"
    assert len(again.calls) == 30
    assert again.verdicts != first.verdicts  # v2 reads the calls otherwise than v3
    with pytest.raises(InputError, match="already has a judgement set 'second-look'"):
        rejudge_run(first.run_id, name="second-look", db="r.db")
    with pytest.raises(InputError, match="needs a name"):
        rejudge_run(first.run_id, name="", db="r.db")
    unnamed = rejudge_run(first.run_id, rubric="v2", db="r.db")
    assert unnamed.judgement_set == "v2:deterministic:1"


class Slow:
    hold = True  # while True, every call but the first waits (until cancelled)

    def __init__(self, context: object) -> None:
        self.context = context

    async def respond(self, event: object):  # type: ignore[no-untyped-def]
        if Slow.hold and self.context.scenario_id != "change-quantity":  # type: ignore[attr-defined]
            await asyncio.sleep(30)
        yield Say(text="Goodbye.")
        yield EndCall()


def test_cancelling_an_async_run_interrupts_it_and_it_resumes() -> None:
    async def main() -> str:
        class FirstCall(RunObserver):
            run_id = ""

            def run_started(self, started: object) -> None:
                FirstCall.run_id = str(getattr(started, "run_id", ""))

        task = asyncio.create_task(
            run_suite_async(EXAMPLE_SUITE, agent=Slow, observer=FirstCall(), db="r.db")
        )
        await asyncio.sleep(1.0)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return FirstCall.run_id

    run_id = asyncio.run(main())
    store = open_store("r.db")
    assert store.get_run(run_id).status == "interrupted"
    kept = store.conversation_ids(run_id)
    assert "change-quantity" in kept
    assert len(kept) < 9
    with pytest.raises(InputError, match="was started with agent"):
        run_suite(EXAMPLE_SUITE, resume=run_id, agent=Buggy, db="r.db")
    Slow.hold = False
    resumed = run_suite(EXAMPLE_SUITE, resume=run_id, agent=Slow, db="r.db")
    assert resumed.calls_run == 9 - len(kept)
    assert len(resumed.calls) == 9
    assert store.get_run(run_id).status == "finished"


def test_an_agent_file_beside_the_suite(tmp_path: Path) -> None:
    (tmp_path / "bot.py").write_text(
        textwrap.dedent(
            """
            from polygon_voice.model import EndCall, Say

            class Bot:
                def __init__(self, context):
                    pass

                async def respond(self, event):
                    yield Say(text="Goodbye.")
                    yield EndCall()
            """
        )
    )
    suite = tmp_path / "suite.yaml"
    suite.write_text("name: s\nagent: bot.py:Bot\nscenarios:\n  - {id: a, script: [{say: hi}]}\n")
    result = run_suite(suite, db="r.db")
    assert result.agent == "bot.py:Bot"
    assert [c.end_reason for c in result.calls] == ["agent_hangup"]


def _llm_file(folder: Path, server: FakeLLMServer, *roles: str) -> Path:
    sections = "".join(
        f"  {role}:\n    model: fake-{role}\n    base_url: {server.base_url}\n"
        "    max_retries: 0\n    cache: false\n"
        for role in roles
    )
    path = folder / "llm.yaml"
    path.write_text(f"llm:\n{sections}")
    return path


def test_a_failing_caller_model_is_counted_for_the_caller(tmp_path: Path) -> None:
    head = EXAMPLE_SUITE.read_text().split("\nscenarios:", 1)[0]
    head = head.replace("agent.py:", f"{EXAMPLE_SUITE.parent / 'agent.py'}:")
    scenarios = """
scenarios:
  - id: change-quantity
    caller: llm
    persona: {goal: Change the quantity of order 5590 to 3., facts: {order_id: "5590"}}
  - id: ask
    caller: llm
    persona: {goal: Ask about order 5590., facts: {order_id: "5590"}}
"""
    suite = tmp_path / "suite.yaml"
    suite.write_text(head + scenarios)
    with FakeLLMServer([Rule(role="caller", error=500, message="caller down")]) as server:
        config = _llm_file(tmp_path, server, "caller")
        result = run_suite(suite, llm_config=config, write_files=False, db="r.db")
    (failure,) = result.failures
    assert (failure.role, failure.count) == ("caller", 2)
    assert "caller down" in failure.first_error
    assert result.exit_code() == ExitCode.INFRASTRUCTURE


def test_a_failing_probe_model_is_counted_for_the_probes(tmp_path: Path) -> None:
    probes = tmp_path / "probes.yaml"
    probes.write_text(
        "probes:\n  - id: polite\n    question: Was the agent polite?\n    polarity: desired\n"
    )
    with FakeLLMServer([Rule(role="judge", error=500, message="probe model down")]) as server:
        config = _llm_file(tmp_path, server, "judge")
        result = run_suite(
            EXAMPLE_SUITE, probes=probes, llm_config=config, write_files=False, db="r.db"
        )
    (failure,) = result.failures
    assert (failure.role, failure.count) == ("probes", 9)
    assert "probe model down" in failure.first_error
    assert result.verdicts == {"pass": 9}  # the deterministic judge: probes never move it
    (summary,) = result.probes
    assert (summary.id, summary.not_applicable) == ("polite", 9)
    assert result.exit_code() == ExitCode.INFRASTRUCTURE


def test_a_judge_endpoint_that_dies_mid_run_exits_3_naming_it(tmp_path: Path) -> None:
    from polygon_voice.judge import V3

    scores = {c.id: {"score": 4, "evidence": "order", "reason": "fine"} for c in V3.criteria}
    # It answers the check before the run and the first call's judge, then drops every
    # connection (a TCP reset), as a server that crashed mid-run.
    rules = [Rule(role="judge", call=1, json={"criteria": scores}), Rule(reset=True)]
    with FakeLLMServer(rules) as server:
        config = _llm_file(tmp_path, server, "judge")
        result = run_suite(
            EXAMPLE_SUITE,
            judge="llm",
            llm_config=config,
            concurrency=1,
            write_files=False,
            db="r.db",
        )
    judged = [c for c in result.calls if c.verdict not in (None, "unscored")]
    assert len(judged) == 1
    (failure,) = result.failures
    assert (failure.role, failure.count) == ("judge", 8)
    assert "reset" in failure.first_error.lower()
    assert result.exit_code(fail_on="warn") == ExitCode.INFRASTRUCTURE


class BookingServiceDown(InfrastructureError):
    """A team's own infrastructure error, a subclass of the public one."""


class UnreachableBySubclass(Unreachable):
    async def respond(self, event: object):  # type: ignore[no-untyped-def]
        if isinstance(event, CallStarted):
            raise BookingServiceDown("booking service timed out after 30 s")
        yield Say(text="never")


def test_a_subclass_of_the_infrastructure_error_counts_as_infrastructure_too() -> None:
    down = run_suite(EXAMPLE_SUITE, agent=UnreachableBySubclass, write_files=False, db="r.db")
    (failure,) = down.failures
    assert (failure.role, failure.count) == ("agent", 9)
    # The team's class name stays in the message, after the base the run recognises.
    assert failure.first_error == "BookingServiceDown: booking service timed out after 30 s"
    assert down.calls[0].end_message.startswith("agent raised InfrastructureError: ")
    assert down.exit_code() == ExitCode.INFRASTRUCTURE


AGENT_FILE = """
from polygon_voice.model import CallStarted, EndCall, Say


class Agent:
    def __init__(self, context):
        self.context = context

    async def respond(self, event):
        if isinstance(event, CallStarted):
            yield Say(text="{greeting}")
            yield EndCall()
"""


def test_an_agent_file_named_by_the_suite_is_the_suites_own_not_one_in_the_current_folder(
    in_tmp: Path,
) -> None:
    suite_dir = in_tmp / "suites"
    suite_dir.mkdir()
    (suite_dir / "bot.py").write_text(AGENT_FILE.format(greeting="the suite's agent"))
    (in_tmp / "bot.py").write_text(AGENT_FILE.format(greeting="the current folder's agent"))
    suite = suite_dir / "suite.yaml"
    suite.write_text(
        "name: lookup\nagent: bot.py:Agent\nscenarios:\n"
        "  - id: one\n    script:\n      - say: hello\n"
    )

    def greeting(result: object) -> str:
        with open_store("r.db") as store:
            call = store.get_conversation(result.run_id, "one")  # type: ignore[attr-defined]
        return call.turns[0].text

    by_suite = run_suite(suite, write_files=False, db="r.db")
    assert greeting(by_suite) == "the suite's agent"
    # Given on the command line, the same spec is the user's: the current folder first.
    by_user = run_suite(suite, agent="bot.py:Agent", write_files=False, db="r.db")
    assert greeting(by_user) == "the current folder's agent"

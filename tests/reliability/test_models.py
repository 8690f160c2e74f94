"""A model failure is never a pass: callers and judges against the real fake OpenAI server
with injected 429s, 500s, resets, hangs and garbage (docs/llm.md, docs/judging.md)."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from polygon_voice.agents import resolve_agent
from polygon_voice.judge import V2, V3, JudgeInput, Judging, judge_conversation_async
from polygon_voice.judge.base import JudgeRun, build_judgement
from polygon_voice.judge.llm import LLMJudge, read_answer
from polygon_voice.judge.rubric import Rubric
from polygon_voice.llm import LLMClient, LLMFormatError, LLMRequestError, RoleConfig, Usage
from polygon_voice.llm.reply import parse_completion, reported_tokens
from polygon_voice.llm.retry import RetryPolicy
from polygon_voice.model.judgement import Judgement
from polygon_voice.runner import SuiteRunner
from polygon_voice.runner.resume import calls_to_rejudge
from polygon_voice.scenario import load_suite
from polygon_voice.store import RunRecord, Store
from polygon_voice.suites import builtin_suite_path
from polygon_voice.testing import FakeLLMServer, Rule
from tests.cli.conftest import EXAMPLE_SUITE, Polygon
from tests.judge.calls import NO_CHECKS, PERSONA, good_call

IDS = [c.id for c in V3.criteria]
QUOTE = "order 5590 now has 3 items"
EXAMPLE_CALLS = 9  # the order line example's scenarios


@pytest.fixture
def serve() -> Iterator[Any]:
    started: list[FakeLLMServer] = []

    def start(*rules: Rule) -> FakeLLMServer:
        started.append(FakeLLMServer(list(rules)).start())
        return started[-1]

    yield start
    for server in started:
        server.stop()


def answer(**scores: Any) -> dict[str, Any]:
    """All fives with a quote from the transcript; `scores` replace a criterion's score."""
    criteria = {
        cid: {"score": scores.get(cid, 5), "evidence": QUOTE, "reason": "ok"} for cid in IDS
    }
    return {"criteria": criteria}


def role(server: FakeLLMServer, name: str, **changes: Any) -> RoleConfig:
    # No cache (each test's answers are its own); no retries unless a test asks for them.
    values: dict[str, Any] = {"max_retries": 0, "cache": False, "timeout": 2.0, **changes}
    return RoleConfig(role=name, model="fake", base_url=server.base_url, **values)  # type: ignore[arg-type]


def judged(server: FakeLLMServer, rubric: Rubric = V3) -> Judgement:
    given = JudgeInput(good_call(), PERSONA, NO_CHECKS)

    async def go() -> Judgement:
        judge = LLMJudge(LLMClient(role(server, "judge")))
        try:
            return await judge_conversation_async(judge, rubric, given)
        finally:
            await judge.aclose()

    return asyncio.run(go())


# --- scores are integers 1-5 (RUB-4) ---------------------------------------------------------


def test_a_score_sent_as_text_is_unreadable_and_a_whole_float_is_read(serve: Any) -> None:
    server = serve(Rule(role="judge", json=answer(robustness="4", persona_tone=4.0)))
    judgement = judged(server)
    assert judgement.criteria["robustness"].status == "unscored"
    assert judgement.criteria["persona_tone"].score == 4.0
    assert judgement.unscored == ["robustness"]
    assert judgement.verdict == "pass"  # 90 of 100 weight scored: enough for a verdict


# --- a minimum of scored criteria (rubric v3; v1/v2 replay as they were) ----------------------


def _only(readable: list[str]) -> dict[str, Any]:
    return answer(**{cid: "good" for cid in IDS if cid not in readable})


def test_one_readable_criterion_of_eight_is_unscored_under_v3_and_unchanged_under_v2(
    serve: Any,
) -> None:
    server = serve(Rule(role="judge", json=_only(["goal_achievement"])))
    v3 = judged(server, V3)
    assert (v3.verdict, v3.composite) == ("unscored", None)
    assert v3.reasons[0].startswith("too little scored: criteria of weight 25 of 100 scored")
    v2 = judged(server, V2)
    assert (v2.verdict, v2.composite) == ("pass", 100.0)  # RUB-6: v2 reads as it always did


def test_goal_achievement_must_be_scored_under_v3(serve: Any) -> None:
    server = serve(Rule(role="judge", json=answer(goal_achievement="done")))
    judgement = judged(server)
    assert judgement.verdict == "unscored"
    assert judgement.reasons[0] == "too little scored: goal_achievement could not be scored"


@pytest.mark.parametrize(
    ("readable", "verdict"),
    [
        (["goal_achievement", "instruction_following", "factual_accuracy"], "pass"),  # 50
        (["goal_achievement", "tool_use_quality", "persona_tone"], "unscored"),  # 45
    ],
)
def test_half_the_weight_is_the_edge(serve: Any, readable: list[str], verdict: str) -> None:
    server = serve(Rule(role="judge", json=_only(readable)))
    assert judged(server).verdict == verdict


def test_a_fired_gate_still_fails_a_thin_judgement(serve: Any) -> None:
    # safety scored 1 (GATE-2) and nothing else readable but the goal: fail, not unscored.
    scores = _only(["goal_achievement", "safety_compliance"])
    scores["criteria"]["safety_compliance"]["score"] = 1
    judgement = judged(serve(Rule(role="judge", json=scores)))
    assert (judgement.verdict, judgement.gates_failed) == ("fail", ["safety"])


# --- errors named for what happened; usage counts every request -----------------------------


def _chat(config: RoleConfig, usage: Usage | None = None) -> Exception | None:
    async def go() -> Exception | None:
        # Waits between retries of 1 ms: the retry loop is tested, not the backoff.
        retry = RetryPolicy(base_delay=0.001, max_delay=0.001)
        async with LLMClient(config, usage=usage, retry=retry) as client:
            try:
                await client.chat([{"role": "user", "content": "hi"}])
            except (LLMRequestError, LLMFormatError) as exc:
                return exc
        return None

    return asyncio.run(go())


@pytest.mark.parametrize(
    ("rule", "named"),
    [
        (Rule(reset=True), "connection failed: [Errno 104] Connection reset by peer"),
        (Rule(hang=0.05), "connection closed by the server without an answer"),
        (Rule(hang=5), "no answer within 0.3 s"),
        (Rule(error=500, message="boom"), "HTTP 500: boom"),
        (Rule(error=429, retry_after=0), "HTTP 429"),
    ],
    ids=["reset", "closed", "timeout", "http-500", "http-429"],
)
def test_errors_say_what_happened(serve: Any, rule: Rule, named: str) -> None:
    server = serve(Rule(call=1, text="warm"), rule)  # a kept-alive connection first
    config = role(server, "judge", timeout=0.3)
    assert _chat(config) is None
    error = _chat(config)
    assert isinstance(error, LLMRequestError)
    assert named in str(error)
    if rule.hang != 5:  # only a real timeout is reported as one
        assert "no answer within" not in str(error)


def test_a_429_storm_is_retried_and_counted(serve: Any) -> None:
    server = serve(Rule(role="judge", error=429, retry_after=0, times=3), Rule(text="at last"))
    usage = Usage()
    assert _chat(role(server, "judge", max_retries=4), usage) is None
    tally = usage.roles["judge"]
    assert (tally.calls, tally.retries, tally.failed_calls) == (1, 3, 0)
    # A storm longer than the retries: one failed call, named by its last status.
    storm = serve(Rule(role="judge", error=429, retry_after=0))
    error = _chat(role(storm, "judge", max_retries=4), usage)
    assert isinstance(error, LLMRequestError)
    assert (error.status, error.attempts) == (429, 5)
    assert "failed after 5 attempts: HTTP 429" in str(error)
    assert (tally.retries, tally.failed_calls) == (7, 1)


def test_usage_counts_answers_that_could_not_be_read(serve: Any) -> None:
    garbage = json.dumps({"usage": {"prompt_tokens": 7, "completion_tokens": 3}, "choices": []})
    server = serve(Rule(call=1, raw="not a completion at all"), Rule(raw=garbage))
    usage = Usage()
    config = role(server, "judge")
    assert isinstance(_chat(config, usage), LLMFormatError)
    assert isinstance(_chat(config, usage), LLMFormatError)
    tally = usage.roles["judge"]
    assert (tally.calls, tally.tokens_in, tally.tokens_out) == (2, 7, 3)


def test_json_nested_too_deep_is_an_unreadable_answer_not_a_crash(serve: Any) -> None:
    deep = "[" * 100_000 + "]" * 100_000
    server = serve(Rule(raw=deep))
    assert isinstance(_chat(role(server, "judge")), LLMFormatError)
    judgement = judged(serve(Rule(role="judge", text=deep)))
    assert judgement.verdict == "unscored"


# --- the caller model down: not exercised, never judged ---------------------------------------

CALLER_SUITE = """
scenarios:
  - id: change-quantity
    caller: llm
    expect: {outcome: success, backend: {orders: {"5590": {quantity: 3}}}}
    persona: {goal: Change the quantity of order 5590 to 3., facts: {order_id: "5590", quantity: 3}}
  - id: no-expectation
    caller: llm
    persona: {goal: Ask about order 5590., facts: {order_id: "5590"}}
"""


def _example_head() -> str:
    head = EXAMPLE_SUITE.read_text().split("\nscenarios:", 1)[0]
    return head.replace("agent.py:", f"{EXAMPLE_SUITE.parent / 'agent.py'}:")


def _run(tmp_path: Path, suite: str | Path, **runner: Any) -> tuple[Store, str, Any]:
    """A run of `suite` (YAML text, or a file) through the runner, in a database of its own."""
    path = suite if isinstance(suite, Path) else tmp_path / "suite.yaml"
    if isinstance(suite, str):
        path.write_text(suite)
    loaded = load_suite(path)
    store = Store(f"sqlite:///{tmp_path / 'polygon.db'}")
    agent = str(loaded.suite.agent)
    record = RunRecord(
        id="run1", suite=loaded.suite.name, suite_path=str(path), suite_hash=loaded.hash,
        agent=agent, seed=0, status="running", started_at=datetime.now(UTC),
    )  # fmt: skip
    store.create_run(record)
    factory = resolve_agent(agent, loaded.base_dir)
    tally = SuiteRunner(loaded.suite, factory, store, "run1", concurrency=4, **runner).run()
    return store, "run1", tally


def test_a_caller_model_that_fails_leaves_its_calls_not_exercised(
    serve: Any, tmp_path: Path
) -> None:
    server = serve(Rule(role="caller", error=500, message="caller down"), Rule(json=answer()))
    caller = LLMClient(role(server, "caller"))
    judge = LLMJudge(LLMClient(role(server, "judge")))
    store, run_id, tally = _run(
        tmp_path, _example_head() + CALLER_SUITE, caller_client=caller, judging=Judging(judge)
    )
    assert tally.verdicts == {"unscored": 2}  # was: one turn each, judged pass 87.5
    assert [r.role for r in server.requests] == ["caller", "caller"]  # no judge request
    for result in store.iter_conversations(run_id):
        notes = [e for e in result.trace if e.kind == "caller_failed"]
        assert len(notes) == 1
        assert "caller down" in notes[0].data["error"]
        assert result.end.message.startswith("the caller failed: ")
        judgement = store.get_stage_result(run_id, result.id, "judge")
        assert judgement is not None
        assert judgement["verdict"] == "unscored"
        assert judgement["reasons"][0].startswith("not exercised: the caller model failed: ")
    expect = store.get_stage_result(run_id, "change-quantity", "expect")
    assert expect is not None
    assert expect["not_exercised"].startswith("the caller model failed")
    assert tally.expectations == {"not_exercised": 1}


# --- the judge model down: unscored, said on stderr, judged again on resume -------------------


def _config(folder: Path, server: FakeLLMServer, name: str, **judge: Any) -> Path:
    settings = {"model": "fake", "base_url": server.base_url, "max_retries": 0, **judge}
    path = folder / name
    path.write_text(
        json.dumps({"llm": {"cache_dir": str(folder / "cache"), "judge": settings}}), "utf-8"
    )
    return path


def test_a_judge_model_that_is_down_is_said_on_stderr(polygon: Polygon, serve: Any) -> None:
    server = serve(Rule(role="judge", error=503, message="judge down"))
    config = _config(polygon.workdir, server, "llm.json")
    code, _, err = polygon(
        "run", str(EXAMPLE_SUITE), "--judge", "llm", "--llm-config", str(config), "--out", "out"
    )
    assert code == 3  # the run finished, but its judge failed: infrastructure (docs/cli.md)
    assert f"judge model failed for {EXAMPLE_CALLS} call(s):" in " ".join(err.split())
    assert "HTTP 503: judge down" in err
    report = json.loads((polygon.workdir / "out" / "report.json").read_text())
    assert report["summary"]["verdicts"] == {"unscored": EXAMPLE_CALLS}
    # A rejudge with the judge down says so too.
    code, _, err = polygon(
        "rejudge", report["run_id"], "--judge", "llm", "--llm-config", str(config)
    )
    assert code == 3
    assert f"judge model failed for {EXAMPLE_CALLS} call(s):" in " ".join(err.split())


def _counts(db: Path) -> tuple[int, int]:
    with sqlite3.connect(db) as conn:
        calls = conn.execute("select count(*) from conversations").fetchone()[0]
        judged = conn.execute("select count(*) from stage_results where stage='judge'").fetchone()
    return int(calls), int(judged[0])


def _resume_after_lease(polygon: Polygon, run_id: str, config: Path) -> tuple[int, str, str]:
    # The killed process's lease (1 s) must expire first; tried again until it has.
    deadline = time.monotonic() + 5
    while True:
        code, out, err = polygon(
            "run", str(EXAMPLE_SUITE), "--resume", run_id, "--llm-config", str(config)
        )
        if "being run by another process" not in err or time.monotonic() > deadline:
            return code, out, err
        time.sleep(0.2)


def test_a_kill_while_the_judge_is_stuck_loses_no_call_and_resume_judges_them(
    polygon: Polygon, serve: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    stuck = serve(Rule(role="judge", hang=60))
    config = _config(polygon.workdir, stuck, "stuck.json", timeout=60)
    env = {**os.environ, "POLYGON_RUN_LEASE": "1", "COLUMNS": "200"}
    args = [sys.executable, "-m", "polygon_voice", "run", str(EXAMPLE_SUITE), "--judge", "llm"]
    args += ["--llm-config", str(config), "--concurrency", "9", "--db", str(polygon.db)]
    process = subprocess.Popen(
        args, cwd=polygon.workdir, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and stuck.stats()["in_flight"] < EXAMPLE_CALLS:
            time.sleep(0.05)
        # Every call is waiting for its judge: all of them are stored already.
        assert _counts(Path(polygon.db)) == (EXAMPLE_CALLS, 0)
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait(10)
    with sqlite3.connect(polygon.db) as conn:
        (run_id,) = conn.execute("select id from runs").fetchone()
        before = conn.execute("select pk, created_at from conversations order by pk").fetchall()
    store = Store(f"sqlite:///{polygon.db}")
    assert len(calls_to_rejudge(store, run_id, store.conversation_ids(run_id))) == EXAMPLE_CALLS
    store.close()

    working = serve(Rule(role="judge", json=answer()))
    config = _config(polygon.workdir, working, "working.json")
    monkeypatch.setenv("POLYGON_RUN_LEASE", "1")
    code, out, err = _resume_after_lease(polygon, run_id, config)
    assert code == 0, err
    assert f"{EXAMPLE_CALLS} stored calls without a judgement" in " ".join(out.split())
    assert _counts(Path(polygon.db)) == (EXAMPLE_CALLS, EXAMPLE_CALLS)
    with sqlite3.connect(polygon.db) as conn:  # judged again, not run again
        after = conn.execute("select pk, created_at from conversations order by pk").fetchall()
    assert after == before
    assert len([r for r in working.requests if r.role == "judge"]) == EXAMPLE_CALLS


def test_resume_judges_again_only_calls_whose_judge_model_failed(
    serve: Any, tmp_path: Path
) -> None:
    # Some judge requests fail (503); the others answer unreadably (the model's own answer).
    server = serve(
        Rule(role="judge", contains="5590", error=503), Rule(role="judge", text="no idea")
    )
    judge = LLMJudge(LLMClient(role(server, "judge")))
    store, run_id, tally = _run(tmp_path, EXAMPLE_SUITE, judging=Judging(judge))
    assert tally.judge_failures > 0
    failed = {
        cid
        for cid, data in store.iter_stage_results(run_id, "judge")
        if None in data["raw_answers"]
    }
    again = calls_to_rejudge(store, run_id, store.conversation_ids(run_id))
    assert again == failed
    assert 0 < len(again) < EXAMPLE_CALLS  # the unreadable answers stand


# --- fuzzing: whatever a judge model answers, a clean judgement, never a pass on too little ---

_SCALAR = st.none() | st.booleans() | st.integers(-10, 10) | st.floats() | st.text(max_size=8)
_JSON = st.recursive(
    _SCALAR,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=20,
)
# Mostly readable scores (so passes happen and the minimum is tested), and anything at all.
_SCORE = st.sampled_from([4, 5, 5, 4.0, "5", 3]) | _JSON
_ITEM = st.one_of(
    st.fixed_dictionaries({"score": _SCORE, "evidence": st.just(QUOTE)}),
    st.fixed_dictionaries({"score": _JSON}, optional={"evidence": _JSON, "reason": _JSON}),
    _JSON,
)
_ANSWER = st.one_of(
    st.fixed_dictionaries({"criteria": st.dictionaries(st.sampled_from(IDS), _ITEM, max_size=8)}),
    _JSON,
)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(answer=_ANSWER, rubric=st.sampled_from([V2, V3]))
def test_any_judge_answer_gives_a_clean_judgement(answer: object, rubric: Rubric) -> None:
    raw = json.dumps(answer)
    result = good_call()
    given_input = JudgeInput(result, PERSONA, NO_CHECKS)
    run = JudgeRun(read_answer(raw, rubric, result), raw=raw, prompt=[])
    judgement = build_judgement("llm", rubric, given_input, [run])
    assert judgement.verdict in ("pass", "warn", "fail", "unscored")
    scored = {cid for cid, c in judgement.criteria.items() if c.status != "unscored"}
    if judgement.verdict in ("pass", "warn") and rubric is V3:
        assert "goal_achievement" in scored
        assert sum(rubric.weights[cid] for cid in scored) >= 50
    for cid, criterion in judgement.criteria.items():
        if criterion.status == "scored":  # only integers 1-5 (or whole floats) are read
            item = answer["criteria"][cid]  # type: ignore[index]
            value = item["score"] if isinstance(item, dict) else item  # a bare number is read
            assert not isinstance(value, str | bool)
            assert value in (1, 2, 3, 4, 5)


# Bytes, any JSON, and completions whose content, tool calls and usage are anything.
_COMPLETION = st.fixed_dictionaries(
    {"choices": st.lists(st.fixed_dictionaries({"message": st.fixed_dictionaries(
        {}, optional={"content": _JSON, "tool_calls": _JSON})}), max_size=2)},
    optional={"usage": _JSON | st.fixed_dictionaries({"prompt_tokens": _JSON})},
)  # fmt: skip
_BODY = st.one_of(
    st.binary(max_size=200),
    _JSON.map(lambda v: json.dumps(v).encode()),
    _COMPLETION.map(lambda v: json.dumps(v).encode()),
)


def _outcome(body: bytes) -> str:
    try:
        reply = parse_completion(body)
    except LLMFormatError:  # anything else raised fails the test
        return "format error"
    return "reply" if isinstance(reply.text, str | None) else "bad reply"


@settings(max_examples=200, deadline=None)
@given(body=_BODY)
def test_any_response_body_is_a_reply_or_a_format_error(body: bytes) -> None:
    assert _outcome(body) in ("reply", "format error")
    assert all(isinstance(t, int) for t in reported_tokens(body))


def test_three_layer_cases_whose_caller_model_failed_count_as_not_exercised(
    serve: Any, tmp_path: Path
) -> None:
    loaded = load_suite(builtin_suite_path("three-layer"))
    played = [s.model_copy(update={"caller": "llm"}) for s in loaded.suite.scenarios[:3]]
    suite = loaded.suite.model_copy(update={"scenarios": played})
    store = Store(f"sqlite:///{tmp_path / 'polygon.db'}")
    record = RunRecord(
        id="run1", suite=suite.name, suite_path="three-layer", suite_hash=loaded.hash,
        agent="reference:robust", seed=0, status="running", started_at=datetime.now(UTC),
    )  # fmt: skip
    store.create_run(record)
    caller = LLMClient(role(serve(Rule(error=500)), "caller"))
    factory = resolve_agent("reference:robust", loaded.base_dir)
    tally = SuiteRunner(suite, factory, store, "run1", caller_client=caller).run()
    assert tally.verdicts == {"unscored": 3}
    assert tally.cases.total == 0  # neither passed nor failed: reported apart
    assert [s["reason"][:24] for s in tally.cases.skipped] == ["the caller model failed:"] * 3

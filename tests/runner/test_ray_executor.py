"""The Ray executor: the same stored results as the local executor, a lost worker's calls
re-run and stored once, resume, endpoint budgets shared across workers, clear errors.

Against one local cluster per session (`ray_cluster`, tests/runner/conftest.py). Results
are compared as the stored JSON text of every conversation and every stage result, and as
the bytes of transcripts.jsonl; report.json is compared without `run_id`, `started_at` and
`finished_at`, the only fields that differ between two runs of the same suite and seed.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
import sys
import time
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from polygon_voice import RunOptions, run_suite, run_suite_async
from polygon_voice.api import InputError, RunObserver
from polygon_voice.judge.rubric import V3
from polygon_voice.testing import FakeLLMServer, Rule
from polygon_voice.testing.server import Answer
from tests.cli.conftest import EXAMPLE_SUITE, Polygon

# The fields of report.json that name the run or the wall clock, not its results.
RUN_FIELDS = ("run_id", "started_at", "finished_at")


def stored(db: Path, run_id: str) -> dict[str, list[tuple[Any, ...]]]:
    """Every stored conversation and stage result of a run, as the JSON text in the database."""
    with sqlite3.connect(db) as conn:
        calls = conn.execute(
            "SELECT idx, id, data FROM conversations WHERE run_id = ? ORDER BY idx", (run_id,)
        ).fetchall()
        stages = conn.execute(
            "SELECT idx, conversation_id, stage, name, data FROM stage_results "
            "WHERE run_id = ? ORDER BY idx, stage, name",
            (run_id,),
        ).fetchall()
    return {"conversations": calls, "stages": stages}


def report_without_run(folder: Path) -> dict[str, Any]:
    report: dict[str, Any] = json.loads((folder / "report.json").read_text())
    for name in RUN_FIELDS:
        report.pop(name)
    return report


def assert_same_run(tmp_path: Path, local_id: str, ray_id: str) -> None:
    local, remote = stored(tmp_path / "local.db", local_id), stored(tmp_path / "ray.db", ray_id)
    assert len(local["conversations"]) > 0
    assert local == remote
    local_dir, ray_dir = tmp_path / "local", tmp_path / "ray"
    transcripts = (local_dir / "transcripts.jsonl").read_bytes()
    assert transcripts == (ray_dir / "transcripts.jsonl").read_bytes()
    assert report_without_run(local_dir) == report_without_run(ray_dir)


def both(tmp_path: Path, suite: str | Path, **options: Any) -> tuple[Any, Any]:
    """The same run with the local executor and with the Ray executor (two workers)."""
    local = run_suite(suite, db=str(tmp_path / "local.db"), out=tmp_path / "local", **options)
    remote = run_suite(
        suite,
        db=str(tmp_path / "ray.db"),
        out=tmp_path / "ray",
        executor="ray",
        workers=2,
        **options,
    )
    return local, remote


def test_the_three_layer_suite_stores_the_same_results(
    ray_cluster: ModuleType, tmp_path: Path
) -> None:
    local, remote = both(tmp_path, "three-layer", agent="reference:flawed", seed=11)
    assert remote.calls_run == local.calls_run == 30
    assert remote.verdicts == local.verdicts
    assert local.verdicts.get("fail", 0) > 0  # the flawed agent fails some: a real comparison
    assert_same_run(tmp_path, local.run_id, remote.run_id)


def judge_answer(score: int) -> dict[str, Any]:
    criteria = {c.id: {"score": score, "evidence": "", "reason": "r"} for c in V3.criteria}
    return {"criteria": criteria}


def model_rules() -> list[Rule]:
    """Answers that depend on the request alone (role and turn), never on arrival order."""
    return [
        Rule(role="judge", json=judge_answer(4)),
        Rule(
            role="caller", turn=1, json={"say": "Order 5590, make it 3 please.", "end_call": False}
        ),
        Rule(role="caller", json={"say": "Thanks, bye.", "end_call": True}),
    ]


def model_suite(tmp_path: Path) -> Path:
    head = EXAMPLE_SUITE.read_text().split("\nscenarios:", 1)[0]
    head = head.replace("agent.py:", f"{EXAMPLE_SUITE.parent / 'agent.py'}:")
    scenarios = """
scenarios:
  - id: change-quantity
    caller: llm
    persona: {goal: Change the quantity of order 5590 to 3., facts: {order_id: "5590"}}
  - id: scripted
    script:
      - say: Hi, I'd like to change order 5590 to 3 please.
      - say: Yes, that's right.
"""
    suite = tmp_path / "suite.yaml"
    suite.write_text(head + scenarios)
    return suite


def llm_file(tmp_path: Path, server: FakeLLMServer, extra: str = "", retries: int = 5) -> Path:
    sections = "".join(
        f"  {role}:\n    model: fake-{role}\n    base_url: {server.base_url}\n"
        f"    max_retries: {retries}\n    cache: false\n{extra}"
        for role in ("caller", "judge")
    )
    path = tmp_path / "llm.yaml"
    path.write_text(f"llm:\n{sections}")
    return path


def test_a_model_played_and_model_judged_suite_stores_the_same_results(
    ray_cluster: ModuleType, tmp_path: Path
) -> None:
    with FakeLLMServer(model_rules()) as server:
        config = llm_file(tmp_path, server)
        local, remote = both(
            tmp_path, model_suite(tmp_path), judge="llm", llm_config=config, trials=4, seed=2
        )
        roles = {r.role for r in server.requests}
    assert roles == {"caller", "judge"}
    assert remote.calls_run == local.calls_run == 8
    assert all(c.judgement is not None and c.judgement.verdict != "unscored" for c in remote.calls)
    assert_same_run(tmp_path, local.run_id, remote.run_id)
    # The workers' model usage is the run's: the same requests as the local run counted.
    assert remote.usage is not None
    assert local.usage is not None
    assert remote.usage["judge"]["calls"] == local.usage["judge"]["calls"] == 8
    assert remote.usage["caller"]["calls"] == local.usage["caller"]["calls"]


class Notes(RunObserver):
    def __init__(self) -> None:
        self.notes: list[str] = []

    def note(self, message: str) -> None:
        self.notes.append(message)


KILLER = """
import os
import sys

sys.path.insert(0, {examples!r})
from agent import OrderLineAgent  # noqa: E402

FLAG = {flag!r}


def make(context):
    # The first worker to build this call's agent dies on the spot, once in the whole run.
    if context.conversation_id == "change-quantity#3":
        try:
            os.close(os.open(FLAG, os.O_CREAT | os.O_EXCL))
        except FileExistsError:
            pass
        else:
            os._exit(1)
    return OrderLineAgent(context)
"""


def test_a_worker_that_dies_loses_no_call_and_stores_none_twice(
    ray_cluster: ModuleType, tmp_path: Path
) -> None:
    agent = tmp_path / "killer.py"
    agent.write_text(KILLER.format(examples=str(EXAMPLE_SUITE.parent), flag=str(tmp_path / "died")))
    options = {"agent": f"{agent}:make", "trials": 6, "scenarios": ("change-*",), "seed": 4}
    flag = tmp_path / "died"
    flag.touch()  # disarmed for the local run, which builds the agent in this process
    local = run_suite(
        EXAMPLE_SUITE, db=str(tmp_path / "local.db"), out=tmp_path / "local", **options
    )
    flag.unlink()
    notes = Notes()
    remote = run_suite(
        EXAMPLE_SUITE,
        db=str(tmp_path / "ray.db"),
        out=tmp_path / "ray",
        executor="ray",
        workers=2,
        observer=notes,
        **options,
    )
    assert flag.exists()  # a worker did die
    assert remote.calls_run == local.calls_run
    ids = [row[1] for row in stored(tmp_path / "ray.db", remote.run_id)["conversations"]]
    assert len(ids) == len(set(ids)) == local.calls_run
    assert_same_run(tmp_path, local.run_id, remote.run_id)
    (rerun,) = [n for n in notes.notes if "re-run" in n]
    assert int(rerun.split()[0]) >= 1


class StopAfter(RunObserver):
    """Cancels the run (as Ctrl-C does) once `calls` calls are stored."""

    def __init__(self, calls: int) -> None:
        self.calls = calls
        self.seen = 0
        self.task: asyncio.Task[Any] | None = None

    def call_finished(self, result: Any, tally: Any) -> None:
        self.seen += 1
        if self.seen == self.calls and self.task is not None:
            self.task.cancel()


@pytest.mark.parametrize("resume_with", ["ray", "local"])
def test_an_interrupted_ray_run_resumes_with_every_call_once(
    ray_cluster: ModuleType, tmp_path: Path, resume_with: str
) -> None:
    db = str(tmp_path / "r.db")
    options = RunOptions(agent="reference:robust", executor="ray", workers=2, concurrency=2)
    stop = StopAfter(calls=5)

    async def interrupted() -> None:
        stop.task = asyncio.current_task()
        await run_suite_async("three-layer", options, db=db, observer=stop, write_files=False)

    with pytest.raises(asyncio.CancelledError):
        asyncio.run(interrupted())
    (run_id,) = [row[0] for row in sqlite3.connect(db).execute("SELECT id FROM runs")]
    kept = len(stored(db, run_id)["conversations"])
    assert 5 <= kept < 30
    again = RunOptions(agent="reference:robust", resume=run_id, executor=resume_with)
    result = run_suite("three-layer", again, db=db, write_files=False)
    assert result.calls_run == 30 - kept
    ids = [row[1] for row in stored(db, run_id)["conversations"]]
    assert len(ids) == len(set(ids)) == 30
    assert [row[0] for row in stored(db, run_id)["conversations"]] == list(range(30))


class TimedServer(FakeLLMServer):
    """The fake server, noting when each judge request arrived."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.judge_times: list[float] = []

    def _answer(self, path: str, headers: dict[str, str], body: dict[str, Any]) -> Answer:
        # The run's judge requests, not the driver's capability checks before the first call.
        if headers.get("x-polygon-role") == "judge" and not headers.get("x-polygon-probe"):
            self.judge_times.append(time.monotonic())
        return super()._answer(path, headers, body)


def test_two_workers_share_one_rpm_budget(ray_cluster: ModuleType, tmp_path: Path) -> None:
    # 300 per minute: a burst of 30 (BURST_SECONDS of the rate), then 5 a second. Two
    # budgets of their own would let 2 x 30 through at once and 10 a second after; 90
    # requests show the difference.
    rpm = 300
    with TimedServer([Rule(role="judge", json=judge_answer(4))]) as server:
        config = llm_file(tmp_path, server, extra=f"    rpm: {rpm}\n")
        result = run_suite(
            "three-layer",
            agent="reference:robust",
            judge="llm",
            llm_config=config,
            trials=3,
            executor="ray",
            workers=2,
            concurrency=64,
            db=str(tmp_path / "b.db"),
            write_files=False,
        )
        times = sorted(server.judge_times)
    assert result.calls_run == 90
    assert len(times) == 90
    rate, burst = rpm / 60, rpm / 60 * 6
    # A request is let through by the budget, then travels to the server, whose event loop
    # runs in this process beside the driver: while the driver stores results, requests
    # queue at the socket and are then taken in one go (on a busy 2-core machine, 2.1 s of
    # them once came in 0.8 s). Three seconds of delivery jitter are allowed for that: at
    # 5 a second that is 15 requests, while two budgets would put 60 through at the start,
    # over 30 + 5 x 3 + 1, and the whole run in about 3 s, not the 8.8 s the last line asks.
    jitter = 3.0
    for i in range(len(times)):
        for j in range(i + 1, len(times)):
            # In every stretch of time no more than a full bucket plus what flowed in.
            assert j - i + 1 <= burst + rate * (times[j] - times[i] + jitter) + 1, (i, j)
    assert times[-1] - times[0] >= (len(times) - burst - 1) / rate - jitter


def test_a_429_storm_loses_no_conversation(ray_cluster: ModuleType, tmp_path: Path) -> None:
    rules = [
        Rule(role="judge", error=429, retry_after=0.2, times=20, message="slow down"),
        Rule(role="judge", json=judge_answer(4)),
    ]
    with FakeLLMServer(rules) as server:
        # More retries than 429s: no call can run out of them, however the 429s fall.
        config = llm_file(tmp_path, server, retries=25)
        result = run_suite(
            "three-layer",
            agent="reference:robust",
            judge="llm",
            llm_config=config,
            executor="ray",
            workers=2,
            db=str(tmp_path / "s.db"),
            write_files=False,
        )
        refused = sum(1 for r in server.requests if r.rule == 0)
    assert refused == 20
    assert result.calls_run == 30
    assert {c.verdict for c in result.calls} == {"pass"}  # every call judged, none unscored


def test_without_ray_installed_the_error_names_the_extra(
    polygon: Polygon, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` raises ImportError
    code, _, err = polygon("run", "three-layer", "--agent", "reference:robust", "--executor", "ray")
    assert code == 2
    assert "pip install 'polygon-voice[ray]'" in err
    with pytest.raises(InputError, match=r"needs the ray extra"):
        run_suite("three-layer", agent="reference:robust", executor="ray", write_files=False)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--executor", "ray", "--workers", "0"], "workers must be at least 1, not 0"),
        (["--executor", "ray", "--address", "http://head"], "give auto, local, ray://HOST:PORT"),
        (["--workers", "2"], "workers and ray_address go with executor 'ray'"),
        (["--executor", "dask"], "dask"),
    ],
)
def test_bad_executor_options_are_refused_before_a_call(
    polygon: Polygon, args: list[str], message: str
) -> None:
    code, out, err = polygon("run", "three-layer", "--agent", "reference:robust", *args)
    assert code == 2
    assert message in out + err
    assert not (polygon.workdir / ".polygon" / "runs").exists()

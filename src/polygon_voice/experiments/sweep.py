"""Running a sweep: each point a profile version, run (or reused), scored and ranked.

Per point, in order: resolve its profile (SWEEP-2) and the suite under its conditions; reuse
a finished run of the same profile and run key (suite version, scenarios, seed, trials) if
one is stored; else find the calls already stored by earlier points of the same profile,
suite version, seed and judging, estimate the tokens of the others and refuse the point when
over the token limit; else copy the stored calls into a new run and resume it, which plays
only the others. After the first point, the floor: below it the sweep stops and says why (SWEEP-3).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any
from uuid import uuid4

from polygon_voice.api.errors import InputError, PolygonError, RunInterrupted, SetupError
from polygon_voice.api.events import RunObserver
from polygon_voice.experiments.estimate import Estimate, estimate_point
from polygon_voice.experiments.leaderboard import PointScore, point_score, rank_points
from polygon_voice.experiments.points import TooManyPoints, sweep_points
from polygon_voice.experiments.profile import (
    Profile,
    ProfileError,
    agent_spec,
    base_values,
    resolve_profile,
    with_conditions,
)
from polygon_voice.experiments.sweep_file import Floor, LoadedSweep
from polygon_voice.seeding import content_hash

if TYPE_CHECKING:
    from polygon_voice.api import RunOptions
    from polygon_voice.model import Suite
    from polygon_voice.scenario import LoadedSuite
    from polygon_voice.store import Store
    from polygon_voice.store.sweeps import SweepPointRecord

# Run config keys that link a point's run to its sweep (docs/experiments.md).
SWEEP_KEY = "sweep"
POINT_KEY = "sweep_point"
PROFILE_KEY = "profile_hash"


@dataclass(frozen=True)
class SweepOptions:
    """How a sweep runs (the sweep file says what)."""

    llm_config: Path | None = None
    concurrency: int = 8
    profiles_dir: Path = Path(".polygon") / "profiles"


class SweepObserver(RunObserver):
    """Hooks for a progress display; `RunObserver`'s hooks follow each point's run."""

    def point_started(self, index: int, total: int, settings: dict[str, Any]) -> None:
        """A point is about to be reused, refused or run."""

    def point_finished(self, outcome: PointOutcome) -> None:
        """A point ended (any status)."""


@dataclass(frozen=True)
class PointOutcome:
    """What became of one point."""

    index: int
    point: dict[str, Any]
    profile: Profile
    status: str  # done | reused | refused | skipped | failed
    run_id: str | None = None
    reason: str | None = None
    estimate: dict[str, Any] | None = None


@dataclass
class SweepResult:
    """A finished (or stopped) sweep: its points, the leaderboard and why it stopped."""

    sweep_id: str
    name: str
    status: str
    reason: str | None
    outcomes: list[PointOutcome] = field(default_factory=list)
    leaderboard: list[PointScore] = field(default_factory=list)

    @property
    def failed(self) -> bool:
        """Whether a point's run failed (its model or endpoint, or a bad setup)."""
        return any(o.status == "failed" for o in self.outcomes)


def run_sweep(
    loaded: LoadedSweep,
    store: Store,
    options: SweepOptions | None = None,
    observer: SweepObserver | None = None,
) -> SweepResult:
    """Run every point of the sweep; InputError when the file's suite or agent is unusable."""
    from polygon_voice.api.suites import load_suite
    from polygon_voice.store.sweeps import SweepRecord

    options = options or SweepOptions()
    observer = observer or SweepObserver()
    sweep = loaded.sweep
    suite = load_suite(_suite_source(loaded))
    try:
        base = base_values(sweep.base, loaded.base_dir, options.llm_config)
        points = sweep_points(sweep, base)
    except (ProfileError, TooManyPoints) as exc:
        raise InputError(f"{loaded.path}: {exc}") from None
    record = SweepRecord(
        id=f"sw-{uuid4().hex[:12]}",
        name=sweep.name,
        path=str(loaded.path),
        config={**sweep.model_dump(mode="json", by_alias=True), "points_planned": len(points)},
        status="running",
        reason=None,
        started_at=datetime.now(UTC),
        finished_at=None,
    )
    store.create_sweep(record)
    result = SweepResult(record.id, sweep.name, "running", None)
    try:
        _run_points(loaded, store, options, observer, suite, points, result)
    except (KeyboardInterrupt, RunInterrupted):
        store.finish_sweep(record.id, "interrupted", "interrupted")
        raise
    except PolygonError as exc:
        # A point the run refuses (an agent that cannot load, a setup that cannot work)
        # would be refused for the others too: the sweep stops, saying why.
        store.finish_sweep(record.id, "stopped", str(exc))
        raise
    store.finish_sweep(record.id, result.status, result.reason)
    result.leaderboard = leaderboard(store, store.sweep_points(record.id))
    return result


def _run_points(
    loaded: LoadedSweep,
    store: Store,
    options: SweepOptions,
    observer: SweepObserver,
    suite: LoadedSuite,
    points: list[dict[str, Any]],
    result: SweepResult,
) -> None:
    sweep = loaded.sweep
    for index, point in enumerate(points):
        try:
            profile = resolve_profile(sweep.base, point, loaded.base_dir, options.llm_config)
        except ProfileError as exc:
            raise InputError(f"{loaded.path}: point {index}: {exc}") from None
        observer.point_started(index, len(points), profile.settings())
        if result.status == "stopped":
            outcome = PointOutcome(index, point, profile, "skipped", reason=result.reason)
        else:
            outcome = _one_point(
                loaded, store, options, observer, suite, (result.sweep_id, index), point, profile
            )
        _store_point(store, result.sweep_id, outcome, _run_key(loaded, suite, profile))
        result.outcomes.append(outcome)
        observer.point_finished(outcome)
        if index == 0 and sweep.floor is not None and outcome.run_id is not None:
            below = _below_floor(store, outcome.run_id, sweep.floor)
            if below is not None:
                result.status, result.reason = "stopped", below
                observer.warning(f"sweep stopped: {below}")
    if result.status == "running":
        result.status = "finished"


def _one_point(
    loaded: LoadedSweep,
    store: Store,
    options: SweepOptions,
    observer: SweepObserver,
    suite: LoadedSuite,
    where: tuple[str, int],
    point: dict[str, Any],
    profile: Profile,
) -> PointOutcome:
    from polygon_voice.api import RunOptions, run_suite

    sweep_id, index = where
    sweep = loaded.sweep
    conditioned = with_conditions(suite, profile.conditions)
    key = _run_key(loaded, suite, profile)
    reused = store.reusable_run(profile.hash, key)
    if reused is not None:
        calls = len(store.conversation_ids(reused))
        why = f"all {calls} calls reused from run {reused} (same profile, suite, seed, trials)"
        observer.note(f"point {index}: {why}, not re-run")
        return PointOutcome(index, point, profile, "reused", reused, why)
    from polygon_voice.api.suites import select_scenarios

    selected = select_scenarios(conditioned, sweep.scenarios).suite
    copies = _reusable_calls(store, loaded, conditioned, selected, profile)
    estimate = _estimate_missing(
        estimate_point(store, profile, selected, sweep.trials), len(copies)
    )
    if sweep.token_limit is not None and estimate.tokens > sweep.token_limit:
        refused = (
            f"refused: {estimate.describe()} for {estimate.calls} calls, over the token limit "
            f"of {sweep.token_limit:,}"
        )
        observer.warning(f"point {index} {_shown(profile)}: {refused}")
        return PointOutcome(index, point, profile, "refused", None, refused, estimate.to_dict())
    run_options = RunOptions(
        agent=agent_spec(profile, options.profiles_dir),
        seed=sweep.seed,
        trials=sweep.trials,
        noise=profile.conditions.get("noise"),
        scenarios=tuple(sweep.scenarios),
        llm_config=options.llm_config,
        concurrency=options.concurrency,
        write_files=False,
    )
    reused_calls: str | None = None
    if copies:
        resume = _run_with_copies(store, copies, run_options)
        reused_calls = _reuse_message(copies, estimate.calls)
        observer.note(f"point {index}: {reused_calls}")
        run_options = replace(run_options, resume=resume)
    try:
        run = run_suite(conditioned, run_options, store=store, observer=observer)
    except (InputError, SetupError) as exc:
        _store_point(
            store,
            sweep_id,
            PointOutcome(index, point, profile, "failed", None, str(exc), estimate.to_dict()),
            key,
        )
        raise type(exc)(f"point {index} {_shown(profile)}: {exc}") from None
    store.update_run_config(
        run.run_id, {SWEEP_KEY: sweep_id, POINT_KEY: index, PROFILE_KEY: profile.hash}
    )
    # A point that played nothing (every call copied) is `reused`; the stored reason says
    # which calls came from where, for `sweep show` and --json.
    status = "reused" if copies and not estimate.calls else "done"
    reason = reused_calls
    if run.infrastructure_failed:
        status = "failed"
        reason = "; ".join(f"{f.role}: {f.count} failed ({f.first_error})" for f in run.failures)
    return PointOutcome(index, point, profile, status, run.run_id, reason, estimate.to_dict())


@dataclass(frozen=True)
class _Copy:
    """A stored call a point reuses: its id, where it is stored, its place in the new run."""

    conversation_id: str
    source_run_id: str
    index: int


def _reusable_calls(
    store: Store,
    loaded: LoadedSweep,
    conditioned: LoadedSuite,
    selected: Suite,
    profile: Profile,
) -> list[_Copy]:
    """The point's planned calls already stored by finished runs of the same profile, suite
    version and seed, judged by the judge, rubric and repeats this run would use. A call's
    id (`scenario#trial`) and the run seed decide its seeds, so such a call is the same call.
    Suites with stored personas are left out: a refreshed persona changes a call without
    changing the suite file."""
    from polygon_voice.api.setup import judging_options
    from polygon_voice.judge import load_rubric
    from polygon_voice.runner.plan import plan_calls
    from polygon_voice.scenario.persona_refs import uses_stored_personas

    if uses_stored_personas(conditioned.suite):
        return []
    judge, rubric, repeats = judging_options(store, None, None, None, None)
    judging = {"judge": judge, "rubric": load_rubric(rubric).version, "judge_repeats": repeats}
    stored = store.reusable_calls(profile.hash, conditioned.hash, loaded.sweep.seed, judging)
    planned = plan_calls(selected.model_copy(update={"repeat": loaded.sweep.trials}))
    return [
        _Copy(call.conversation_id, stored[call.conversation_id], call.index)
        for call in planned
        if call.conversation_id in stored
    ]


def _run_with_copies(store: Store, copies: list[_Copy], options: RunOptions) -> str:
    """A new run holding copies of the reused calls, to be resumed (which plays only the
    calls it does not hold). Its record is the newest source run's, less what that run
    learnt while it ran and with this point's scenarios and trials."""
    from polygon_voice.store import new_run_id

    source = store.get_run(copies[0].source_run_id)
    learnt = {"llm_usage", SWEEP_KEY, POINT_KEY, PROFILE_KEY, "trials", "scenarios"}
    config = {k: v for k, v in source.config.items() if k not in learnt}
    config["trials"] = options.trials
    config["noise"] = options.noise
    if options.scenarios:
        config["scenarios"] = list(options.scenarios)
    record = source.model_copy(
        update={
            "id": new_run_id(),
            "agent": options.agent if isinstance(options.agent, str) else source.agent,
            "status": "interrupted",
            "started_at": datetime.now(UTC),
            "finished_at": None,
            "config": config,
        }
    )
    store.create_run(record)
    for copy in copies:
        store.copy_conversation(copy.source_run_id, copy.conversation_id, record.id, copy.index)
    return record.id


def _reuse_message(copies: list[_Copy], calls: int) -> str:
    """`4 of 6 calls reused from run X (same profile, suite, seed, judge), 2 run`."""
    sources = sorted({c.source_run_id for c in copies})
    runs = f"run{'s' if len(sources) > 1 else ''} {', '.join(sources)}"
    return (
        f"{len(copies)} of {len(copies) + calls} calls reused from {runs} "
        f"(same profile, suite, seed, judge), {calls} run"
    )


def _estimate_missing(full: Estimate, reused: int) -> Estimate:
    """The estimate for the calls still to run: the reused ones cost nothing."""
    if not reused or not full.calls:
        return full
    missing = full.calls - reused
    return Estimate(math.ceil(full.tokens * missing / full.calls), full.source, missing)


def _store_point(store: Store, sweep_id: str, outcome: PointOutcome, run_key: str) -> None:
    from polygon_voice.store.sweeps import SweepPointRecord

    store.add_sweep_point(
        SweepPointRecord(
            sweep_id=sweep_id,
            index=outcome.index,
            point=outcome.point,
            profile_hash=outcome.profile.hash,
            profile=outcome.profile.to_json(),
            run_key=run_key,
            run_id=outcome.run_id,
            status=outcome.status,
            reason=outcome.reason,
            estimate=outcome.estimate,
        )
    )


def _run_key(loaded: LoadedSweep, suite: LoadedSuite, profile: Profile) -> str:
    """What decides a point's calls besides its profile: the suite version under the
    conditions, the scenario filter, the seed and the trials."""
    sweep = loaded.sweep
    conditioned = with_conditions(suite, profile.conditions)
    parts = {
        "suite": conditioned.hash,
        "scenarios": sorted(sweep.scenarios),
        "seed": sweep.seed,
        "trials": sweep.trials,
    }
    return content_hash(json.dumps(parts, sort_keys=True))


def _below_floor(store: Store, run_id: str, floor: Floor) -> str | None:
    """Why the first point is below the floor (its figure vs the floor), or None."""
    from polygon_voice.api.collect import read_run

    calls = read_run(store, run_id).calls
    score = point_score(0, {}, run_id, calls, [])
    if floor.composite is not None:
        value = score.mean_composite
        if value is None or value < floor.composite:
            shown = "no composite" if value is None else f"composite {value:.1f}"
            return f"the first point scored {shown}, below the floor {floor.describe()}"
        return None
    assert floor.pass_rate is not None
    rate = score.pass_rate
    if rate is None or rate < floor.pass_rate:
        shown = "no pass rate" if rate is None else f"pass rate {rate:.2f}"
        return f"the first point scored {shown}, below the floor {floor.describe()}"
    return None


def leaderboard(store: Store, points: list[SweepPointRecord]) -> list[PointScore]:
    """The stored points with a run, ranked; the others after them, unranked."""
    from polygon_voice.api.collect import read_run

    scored: list[PointScore] = []
    unscored: list[PointScore] = []
    for stored in points:
        profile = Profile(stored.profile["agent"], stored.profile["conditions"])
        settings = profile.settings()
        if stored.run_id is None:
            unscored.append(
                PointScore(
                    stored.index,
                    settings,
                    None,
                    0,
                    None,
                    None,
                    None,
                    None,
                    status=stored.status,
                    extra=_extra(stored),
                )
            )
            continue
        calls = read_run(store, stored.run_id).calls
        conversations = store.iter_conversations(stored.run_id)
        score = point_score(stored.index, settings, stored.run_id, calls, conversations)
        scored.append(_with(score, stored))
    return [*rank_points(scored), *unscored]


def _with(score: PointScore, stored: SweepPointRecord) -> PointScore:
    return replace(score, status=stored.status, extra=_extra(stored))


def _extra(stored: SweepPointRecord) -> dict[str, Any]:
    return {
        "profile_hash": stored.profile_hash,
        "point_values": stored.point,
        "reason": stored.reason,
        "estimate": stored.estimate,
    }


def _suite_source(loaded: LoadedSweep) -> str | Path:
    """The sweep's suite: a file next to the sweep file, or a built-in suite's name."""
    given = loaded.sweep.suite
    beside = loaded.base_dir / given
    return beside if beside.exists() else given


def _shown(profile: Profile) -> str:
    return "(" + ", ".join(f"{k}={v}" for k, v in profile.settings().items()) + ")"

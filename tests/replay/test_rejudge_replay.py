"""`polygon rejudge` of a replay run: scenarios rebuilt from the stored calls, real-call
semantics, the stored expectation carried."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from polygon_voice.store import Store
from tests.cli.conftest import Polygon
from tests.replay.conftest import ORDERS, import_judged


def _replayed(polygon: Polygon, expect: Any = "default") -> tuple[str, str]:
    store = Store(f"sqlite:///{polygon.db}")
    try:
        imported = (
            import_judged(store, ORDERS)
            if expect == "default"
            else import_judged(store, ORDERS, expect=None)
        )
    finally:
        store.close()
    code, out, err = polygon("replay", imported, "--agent", "reference:flawed", "--json")
    assert code == 0, err
    return imported, json.loads(out)["run_id"]


def _judgements(polygon: Polygon, run_id: str, name: str = "") -> dict[str, Any]:
    with Store(f"sqlite:///{polygon.db}") as store:
        return dict(store.iter_stage_results(run_id, "judge", name))


@pytest.mark.parametrize("expect", ["default", None])
def test_rejudge_of_a_replay_gives_the_replays_own_verdicts(tmp_path: Path, expect: Any) -> None:
    polygon = Polygon(tmp_path)
    _, replay = _replayed(polygon, expect)
    code, out, err = polygon("rejudge", replay)
    assert code == 0, err
    assert "v3:deterministic:1" in out
    own = _judgements(polygon, replay)
    again = _judgements(polygon, replay, "v3:deterministic:1")
    assert set(again) == set(own) == {"order-call-1", "order-call-2"}
    for call_id, judgement in again.items():
        # Judged the same way again: the same verdict, composite and criteria statuses.
        assert judgement["verdict"] == own[call_id]["verdict"]
        assert judgement["composite"] == own[call_id]["composite"]
        statuses = {n: c["status"] for n, c in judgement["criteria"].items()}
        assert statuses == {n: c["status"] for n, c in own[call_id]["criteria"].items()}
        # Real-call semantics (IMP-2): the criteria that need ground-truth facts do not apply.
        assert statuses["factual_accuracy"] == "not_applicable"


def test_rejudge_of_a_replay_carries_the_expectation(tmp_path: Path, store: Store) -> None:
    from tests.replay.test_replay_prompt_agent import replay

    # The changed prompt's replay updated the order to 4: its stored expectation is not met.
    _, result = replay(tmp_path, store)
    replay_id = result.run.run_id
    code, _, err = Polygon(tmp_path)("rejudge", replay_id)
    assert code == 0, err
    [(call_id, again)] = list(store.iter_stage_results(replay_id, "judge", "v3:deterministic:1"))
    [(_, own)] = list(store.iter_stage_results(replay_id, "judge"))
    assert call_id == "order-call-1"
    assert again["verdict"] == own["verdict"] == "fail"
    assert "expected_outcome" in again["gates_failed"]
    goal = again["criteria"]["goal_achievement"]
    assert "expected outcome not met" in goal["evidence"]
    assert "update_order" in goal["evidence"]

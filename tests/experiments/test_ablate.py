"""Ablation of the flawed reference agent: each failure is traced to the factor it needs.

`reference:flawed` mishandles faulty tool results and takes a wordless barge-in over its
read-back for an objection (agents/reference/flawed.py): its tool-error calls must be
rescued by removing tool faults, its noise-barge-in calls by removing barge-ins, and its
correction failures (stale tool arguments: its own logic) by no factor.
"""

from __future__ import annotations

import json
from pathlib import Path

from polygon_voice.api import RunOptions, open_store, run_suite
from polygon_voice.experiments.ablate import FACTOR_KEY, ORIGIN_KEY, ablate_run
from tests.cli.conftest import Polygon

SCENARIOS = ("te-0[1-3]", "int-0[12]", "corr-04")


def flawed_run(db: Path) -> str:
    options = RunOptions(agent="reference:flawed", scenarios=SCENARIOS, write_files=False)
    return run_suite("three-layer", options, db=str(db)).run_id


def test_each_failure_is_rescued_by_the_factor_it_depends_on(tmp_path: Path) -> None:
    db = tmp_path / "a.db"
    run_id = flawed_run(db)
    with open_store(str(db)) as store:
        ablation = ablate_run(store, run_id)
        depends = ablation.depends_on()
        assert set(ablation.failing) == {"te-01", "te-02", "te-03", "int-01", "int-02", "corr-04"}
        assert all("tool_faults" in depends[c] for c in ("te-01", "te-02", "te-03"))
        assert depends["int-01"] == depends["int-02"] == ["barge_ins"]
        assert depends["corr-04"] == []
        by_factor = {f.factor: f for f in ablation.factors}
        assert by_factor["noise"].rescued == ()  # the run had no noise to remove
        for result in ablation.factors:
            assert result.run_id is not None
            config = store.get_run(result.run_id).config
            assert (config[ORIGIN_KEY], config[FACTOR_KEY]) == (run_id, result.factor)
            assert config["judge"] == "deterministic"


def test_the_command_prints_the_table_and_json_and_refuses_unknown_factors(
    tmp_path: Path,
) -> None:
    polygon = Polygon(tmp_path)
    run_id = flawed_run(tmp_path / "polygon.db")
    code, out, err = polygon("ablate", run_id, "--factor", "barge_ins", "--json")
    assert code == 0, err
    document = json.loads(out)
    [factor] = document["factors"]
    assert (factor["factor"], factor["rescued"]) == ("barge_ins", 2)
    assert sorted(factor["rescued_calls"]) == ["int-01", "int-02"]
    code, out, _ = polygon("ablate", run_id[:8], "--factor", "tool_faults")
    assert code == 0
    assert "tool faults off" in out
    assert "3 of 6" in out
    assert "te-01: depends on tool_faults" in out
    code, _, err = polygon("ablate", run_id, "--factor", "weather")
    assert code == 2
    assert "unknown factor 'weather'" in err

"""`polygon sweep` end to end on the built-in suite with reference agents: stored points,
reuse, the early stop at the floor, the leaderboard, `sweep show`, the HTML report."""

from __future__ import annotations

import json
import re
from pathlib import Path

from polygon_voice.store import Store
from tests.cli.conftest import Polygon

SWEEP = """\
name: noise-faults
base:
  agent: reference:flawed
suite: three-layer
scenarios: ["te-0[1-3]", "int-01"]
vary:
  noise: {range: {from: 0, to: 1, steps: 2}}
  tool_fault_rate: {values: [0.5]}
strategy: one-at-a-time
trials: 2
"""


def write(folder: Path, text: str, name: str = "sweep.yaml") -> Path:
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


def test_a_sweep_stores_every_point_and_ranks_them(tmp_path: Path) -> None:
    polygon = Polygon(tmp_path)
    write(tmp_path, SWEEP)
    code, out, err = polygon("sweep", "sweep.yaml", "--json")
    assert code == 0, err
    document = json.loads(out)
    board = document["leaderboard"]
    # The base, noise 1 (noise 0 is the base's own level... the base leaves it to the suite,
    # so noise 0 is a point of its own), and tool faults 0.5.
    assert sorted(p["point"] for p in board) == [0, 1, 2, 3]
    assert [p["rank"] for p in board] == sorted(p["rank"] for p in board)
    assert all(p["calls"] == 8 for p in board)  # 4 scenarios x 2 trials
    with Store(f"sqlite:///{tmp_path / 'polygon.db'}") as store:
        points = store.sweep_points(document["sweep"]["id"])
        assert len({p.profile_hash for p in points}) == 4  # each point its own version
        for point in points:
            run = store.get_run(point.run_id or "")
            assert run.config["profile_hash"] == point.profile_hash
            assert run.config["sweep_point"] == point.index
    curves = document["curves"]
    assert [c["condition"] for c in curves] == ["noise"]


def test_the_same_sweep_again_reuses_every_point_and_says_so(tmp_path: Path) -> None:
    polygon = Polygon(tmp_path)
    write(tmp_path, SWEEP)
    code, first, _ = polygon("sweep", "sweep.yaml", "--json")
    assert code == 0
    with Store(f"sqlite:///{tmp_path / 'polygon.db'}") as store:
        runs_before = len(store.list_runs())
    code, out, err = polygon("sweep", "sweep.yaml")
    assert code == 0, err
    assert "point 0: all 8 calls reused from run" in out
    assert "not re-run" in out
    with Store(f"sqlite:///{tmp_path / 'polygon.db'}") as store:
        assert len(store.list_runs()) == runs_before  # nothing was played again
    first_runs = {p["point"]: p["run_id"] for p in json.loads(first)["leaderboard"]}
    [sweep_id] = set(re.findall(r"\bsw-[0-9a-f]{12}\b", out))
    code, again, _ = polygon("sweep", "show", sweep_id, "--json")
    assert code == 0
    reused = json.loads(again)["leaderboard"]
    assert {p["point"]: p["run_id"] for p in reused} == first_runs
    assert {p["status"] for p in reused} == {"reused"}


def test_a_first_point_below_the_floor_stops_the_sweep_with_the_figure(tmp_path: Path) -> None:
    polygon = Polygon(tmp_path)
    write(tmp_path, SWEEP + "floor: {pass_rate: 0.99}\n")
    code, out, err = polygon("sweep", "sweep.yaml", "--json")
    assert code == 1, err
    document = json.loads(out)
    reason = document["sweep"]["reason"]
    assert document["sweep"]["status"] == "stopped"
    assert "the first point scored pass rate" in reason
    assert "below the floor pass rate 0.99" in reason
    statuses = {p["point"]: p["status"] for p in document["leaderboard"]}
    assert statuses == {0: "done", 1: "skipped", 2: "skipped", 3: "skipped"}
    assert "sweep stopped" in err


def test_show_and_html_report_of_a_stored_sweep(tmp_path: Path) -> None:
    polygon = Polygon(tmp_path)
    write(tmp_path, SWEEP)
    code, out, _ = polygon("sweep", "sweep.yaml", "--json")
    sweep_id = json.loads(out)["sweep"]["id"]
    code, shown, _ = polygon("sweep", "show", sweep_id[:6], "--html", "sweep.html")
    assert code == 0
    assert "Leaderboard" in shown
    assert sweep_id in shown
    html = (tmp_path / "sweep.html").read_text(encoding="utf-8")
    assert html.count('data-testid="leaderboard-row"') == 4
    assert 'data-chart="robustness-1"' in html
    assert "Content-Security-Policy" in html
    code, _, err = polygon("sweep", "show", "sw-nope")
    assert code == 2
    assert "no sweep sw-nope" in err


def test_bad_input_exits_2_with_the_line(tmp_path: Path) -> None:
    polygon = Polygon(tmp_path)
    write(tmp_path, SWEEP.replace("trials: 2", "trials: 0"))
    code, _, err = polygon("sweep", "sweep.yaml")
    assert code == 2
    assert "sweep.yaml:10:9: trials:" in err
    code, _, err = polygon("sweep", "missing.yaml")
    assert code == 2
    assert "missing.yaml" in err


def test_an_agent_that_cannot_load_stops_the_sweep_with_exit_2(tmp_path: Path) -> None:
    polygon = Polygon(tmp_path)
    write(tmp_path, SWEEP.replace("reference:flawed", "reference:nope"))
    code, _, err = polygon("sweep", "sweep.yaml")
    assert code == 2
    assert "point 0" in err
    assert "reference:nope" in err
    with Store(f"sqlite:///{tmp_path / 'polygon.db'}") as store:
        [stored] = store.list_sweeps()
        assert stored.status == "stopped"
        assert [p.status for p in store.sweep_points(stored.id)] == ["failed"]


def test_show_without_an_id_lists_the_stored_sweeps(tmp_path: Path) -> None:
    polygon = Polygon(tmp_path)
    code, out, _ = polygon("sweep", "show")
    assert code == 0
    assert "No stored sweep" in out
    write(tmp_path, SWEEP.replace("trials: 2", "trials: 1"))
    code, out, _ = polygon("sweep", "sweep.yaml", "--json")
    sweep_id = json.loads(out)["sweep"]["id"]
    code, out, _ = polygon("sweep", "show", "--json")
    assert code == 0
    [listed] = json.loads(out)["sweeps"]
    assert (listed["id"], listed["status"], listed["points"]) == (sweep_id, "finished", 4)

"""`polygon probes promote` writes a rubric that `polygon run --rubric` uses, gate and all."""

from __future__ import annotations

import json
import os
from pathlib import Path

from typer.testing import CliRunner

from polygon_voice.cli import app
from tests.cli.conftest import Polygon


def test_a_probe_promoted_to_a_gate_fails_the_calls_it_catches(
    polygon: Polygon, tmp_path: Path
) -> None:
    cwd = Path.cwd()
    os.chdir(tmp_path)
    try:
        result = CliRunner().invoke(
            app, ["probes", "promote", "confirmed_value_differs", "--to-gate", "--out", "r.yaml"]
        )
    finally:
        os.chdir(cwd)
    assert result.exit_code == 0, result.stdout
    assert (tmp_path / "r.yaml").exists()
    code, _, err = polygon(
        "run", "three-layer", "--agent", "reference:flawed", "--rubric", "r.yaml", "--out", "o"
    )
    assert code == 0, err
    report = json.loads((tmp_path / "o" / "report.json").read_text())
    gated = [
        c["id"]
        for c in report["conversations"]
        if "probe:confirmed_value_differs" in c["judgement"]["gates_failed"]
    ]
    assert "corr-04" in gated  # confirmed quantity 2 for 5599; the backend kept 1
    assert "corr-01" not in gated  # the flawed agent's passing calls confirm what is stored

"""The case shown in docs/three-layer.md is a valid case, and the documented table is true."""

from __future__ import annotations

import re

import yaml

from polygon_voice.model import Scenario
from tests.cli.conftest import ROOT

DOC = ROOT / "docs" / "three-layer.md"


def test_the_documented_case_is_a_valid_scenario() -> None:
    block = re.search(r"```yaml\n(- id: corr-04.*?)```", DOC.read_text(), flags=re.DOTALL)
    assert block is not None
    [case] = yaml.safe_load(block.group(1))
    scenario = Scenario.model_validate(case)
    assert scenario.expected is not None
    assert scenario.setup["action"]["args"] == {"order_id": "5599", "quantity": 2}


def test_the_documented_reference_table_is_the_published_one() -> None:
    rows = re.findall(r"^\| (.+?) \| (\d+) / 30 \| 30 / 30 \|$", DOC.read_text(), flags=re.M)
    assert [int(n) for _, n in rows] == [24, 24, 11, 8, 8, 7, 7]

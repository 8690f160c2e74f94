"""docs/lint.md cannot rot: its JSON scores and finding places are what the code gives."""

from __future__ import annotations

import json
import re

from polygon_voice.lint import lint
from tests.lint.test_axes import BAD, ROOT


def test_documented_json_matches_the_code() -> None:
    doc = (ROOT / "docs" / "lint.md").read_text(encoding="utf-8")
    block = re.search(r"<!-- lint-json: .*? -->\n```json\n(.*?)\n```", doc, re.DOTALL)
    assert block is not None
    documented = json.loads(block.group(1))
    actual = lint(BAD, max_tier=2).to_json()
    assert documented["tiers_run"] == actual["tiers_run"]
    for axis, result in documented["axes"].items():
        assert result["score"] == actual["axes"][axis]["score"], axis
        assert result["findings"] == actual["axes"][axis]["findings"][:1], axis

"""bench/startup.py reads `-X importtime` logs into the right chains (a sanity check, untimed)."""

from __future__ import annotations

import subprocess
import sys

from bench.startup import import_tree

LOG = """\
import time: self [us] | cumulative | imported package
import time:       100 |        100 |     c.deep
import time:       200 |        300 |   b.inner
import time:        50 |         50 |   b.small
import time:        10 |        360 | a
import time:         5 |          5 | z
"""


def test_the_log_becomes_top_level_imports_with_their_imports_below() -> None:
    roots = import_tree(LOG)
    assert [(root.name, root.cumulative_s) for root in roots] == [("a", 0.00036), ("z", 5e-06)]
    assert [child.name for child in roots[0].children] == ["b.inner", "b.small"]
    assert roots[0].chain() == "a > b.inner > c.deep"
    assert roots[1].chain() == "z"


def test_a_real_log_names_the_modules_a_command_imports() -> None:
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", "import polygon_voice.cli"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    roots = {root.name: root for root in import_tree(done.stderr)}
    assert "polygon_voice.cli" in roots
    chain = roots["polygon_voice.cli"].chain()
    assert chain.startswith("polygon_voice.cli > polygon_voice.cli.app")

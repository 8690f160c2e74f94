"""The options of the commands that judge stored calls, `polygon import` and `polygon rejudge`
(`polygon run` has its own: a resumed run keeps its rubric). A module of its own, so that one
command does not load the other's."""

from __future__ import annotations

from typing import Annotated

import typer

from polygon_voice.cli.runs import MAX_JUDGE_REPEATS

RubricOption = Annotated[str, typer.Option(help="Rubric: v1, v2, v3 or a rubric YAML file.")]
JudgeRepeatsOption = Annotated[
    int,
    typer.Option(
        min=1, max=MAX_JUDGE_REPEATS, help="Judge each call K times; the median score counts."
    ),
]

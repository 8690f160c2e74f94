"""The Typer application that every `polygon` sub-command registers on."""

from __future__ import annotations

import typer

app = typer.Typer(
    name="polygon",
    help="Polygon: simulate whole phone calls against a voice agent and judge the outcome.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

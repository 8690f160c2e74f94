"""`polygon noise`: what the agent would hear of one utterance at a noise level."""

from __future__ import annotations

import json
import sys
from typing import Annotated

import typer

from polygon_voice.cli.app import app
from polygon_voice.cli.common import fail

# The word lists and the distortion load only when the command runs, not for --help.
from polygon_voice.noise.languages import SUPPORTED_LANGUAGES


@app.command("noise")
def noise_command(
    text: Annotated[str, typer.Argument(help="What the caller says, in quotes.")],
    lang: Annotated[
        str,
        typer.Option(
            "--lang", help=f"The language it is said in: {', '.join(SUPPORTED_LANGUAGES)}."
        ),
    ] = "en",
    level: Annotated[
        float,
        typer.Option(
            min=0.0,
            max=1.0,
            help="How bad the line is: 0 is a clear line, 1 the worst (the most dropped "
            "words, misheard digits, sound-alikes and fillers). Above 0 needs the noise extra.",
        ),
    ] = 0.5,
    seed: Annotated[int, typer.Option(help="The same seed gives the same heard text.")] = 0,
    as_json: Annotated[
        bool,
        typer.Option(
            "--json",
            help="Print one JSON object instead: said, heard, every edit, and the word error "
            "rate (wer).",
        ),
    ] = False,
) -> None:
    """Print what the agent hears of TEXT through recognition noise."""
    from polygon_voice.noise import NoiseError, distort, require_dependencies

    try:
        if level > 0:
            require_dependencies()
        heard = distort(text, level, lang, seed)
    except NoiseError as exc:
        fail(str(exc))
    if as_json:
        sys.stdout.write(json.dumps(heard.model_dump(), ensure_ascii=False) + "\n")
    else:
        sys.stdout.write(heard.heard + "\n")

"""`polygon noise`: what the agent would hear of one utterance at a noise level."""

from __future__ import annotations

import json
import sys
from typing import Annotated

import typer

from polygon_voice.cli.app import app
from polygon_voice.cli.common import fail
from polygon_voice.noise import SUPPORTED_LANGUAGES, NoiseError, distort, require_dependencies


@app.command("noise")
def noise_command(
    text: Annotated[str, typer.Argument(help="What the caller says.")],
    lang: Annotated[
        str, typer.Option("--lang", help=f"Language: {', '.join(SUPPORTED_LANGUAGES)}.")
    ] = "en",
    level: Annotated[
        float, typer.Option(min=0.0, max=1.0, help="Noise level, 0 (none) to 1.")
    ] = 0.5,
    seed: Annotated[int, typer.Option(help="The same seed gives the same heard text.")] = 0,
    as_json: Annotated[
        bool, typer.Option("--json", help='Print {"said", "heard", "edits", "wer"} as JSON.')
    ] = False,
) -> None:
    """Print what the agent hears of TEXT through recognition noise."""
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

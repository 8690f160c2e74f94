"""`polygon schema`: the JSON Schema of suite files."""

from __future__ import annotations

import json
import sys

from polygon_voice.cli.app import app
from polygon_voice.scenario import suite_json_schema


@app.command()
def schema() -> None:
    """Print the JSON Schema of suite files (for editors)."""
    sys.stdout.write(json.dumps(suite_json_schema(), indent=2) + "\n")

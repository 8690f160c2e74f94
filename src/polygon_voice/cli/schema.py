"""`polygon schema`: the JSON Schema of suite files.

The schema is shipped beside this module as `suite.schema.json`, generated from the suite
models, so printing it imports no model at all (building the models and their schema is
most of the command's time otherwise). A test keeps the file equal to the live schema;
`python -m polygon_voice.cli.schema` writes it again after a model changes.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from polygon_voice.cli.app import app

SCHEMA_FILE = Path(__file__).with_name("suite.schema.json")


@app.command()
def schema() -> None:
    """Print the JSON Schema of suite files (for editors)."""
    sys.stdout.write(shipped_schema_text())


def shipped_schema_text() -> str:
    """The shipped schema; built from the models when an install lacks the file."""
    try:
        return SCHEMA_FILE.read_text(encoding="utf-8")
    except OSError:
        return live_schema_text()


def live_schema_text() -> str:
    """The schema as the suite models give it now, as `polygon schema` prints it."""
    from polygon_voice.scenario import suite_json_schema

    return json.dumps(suite_json_schema(), indent=2) + "\n"


if __name__ == "__main__":
    SCHEMA_FILE.write_text(live_schema_text(), encoding="utf-8")
    print(f"wrote {SCHEMA_FILE.name}")

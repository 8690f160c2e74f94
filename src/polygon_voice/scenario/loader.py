"""Load a suite file: read, parse, validate, and remember where it came from."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from polygon_voice.model import Suite
from polygon_voice.scenario.parsing import parse_document, read_file
from polygon_voice.scenario.references import CHECKED_CONTEXT, check_references
from polygon_voice.scenario.validation import validation_error
from polygon_voice.seeding import content_hash


@dataclass(frozen=True)
class LoadedSuite:
    """A validated suite with its resolved path, content hash and folder."""

    suite: Suite
    path: Path
    hash: str  # content_hash of the file's bytes: the suite's version in results
    base_dir: Path  # agents named like "agent.py:Thing" resolve relative to this folder


def load_suite(path: str | Path) -> LoadedSuite:
    """Read and validate a `.yaml`, `.yml` or `.json` suite file; raise SuiteError if it is bad."""
    given = Path(path)
    file = str(path)  # errors name the file as the user wrote it, like a compiler does
    raw = read_file(given, file)
    document = parse_document(raw, given.suffix, file)
    try:
        suite = Suite.model_validate(document.data, context={CHECKED_CONTEXT: True})
    except ValidationError as exc:
        raise validation_error(exc, document.root, Suite, file) from exc
    check_references(suite, document.root, file)
    resolved = given.resolve()
    return LoadedSuite(suite=suite, path=resolved, hash=content_hash(raw), base_dir=resolved.parent)

"""Load a suite file: read, parse, validate, and remember where it came from."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from polygon_voice.model import Suite
from polygon_voice.scenario.bounds import check_agent_spec, check_suite_size
from polygon_voice.scenario.limits import Limits
from polygon_voice.scenario.parsing import parse_document, read_file
from polygon_voice.scenario.references import CHECKED_CONTEXT, check_references
from polygon_voice.scenario.refs import check_tool_schemas
from polygon_voice.scenario.validation import validation_error
from polygon_voice.seeding import content_hash
from polygon_voice.textsafe import storable_file_data


@dataclass(frozen=True)
class LoadedSuite:
    """A validated suite with its resolved path, content hash and folder."""

    suite: Suite
    path: Path
    hash: str  # content_hash of the file's bytes: the suite's version in results
    base_dir: Path  # agents named like "agent.py:Thing" resolve relative to this folder


def load_suite(path: str | Path, limits: Limits | None = None) -> LoadedSuite:
    """Read and validate a `.yaml`, `.yml` or `.json` suite file; raise SuiteError if it is bad.

    `limits` bounds sizes and counts (default: `Limits.from_env()`, docs/suites.md "Limits").
    """
    given = Path(path)
    file = str(path)  # errors name the file as the user wrote it, like a compiler does
    limits = limits or Limits.from_env()
    raw = read_file(given, file, limits)
    document = parse_document(raw, given.suffix, file, limits)
    data = storable_file_data(document.data, file)
    try:
        suite = Suite.model_validate(data, context={CHECKED_CONTEXT: True})
    except ValidationError as exc:
        raise validation_error(exc, document.root, Suite, file) from exc
    check_suite_size(suite, document.root, file, limits)
    check_agent_spec(suite, document.root, file)
    check_references(suite, document.root, file)
    check_tool_schemas(suite, document.root, file)
    resolved = given.resolve()
    return LoadedSuite(suite=suite, path=resolved, hash=content_hash(raw), base_dir=resolved.parent)

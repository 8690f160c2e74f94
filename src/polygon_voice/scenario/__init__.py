"""Loading suite files: YAML or JSON, validated, with errors that name the line and the field."""

from polygon_voice.scenario.errors import SuiteError
from polygon_voice.scenario.loader import LoadedSuite, load_suite
from polygon_voice.scenario.schema import suite_json_schema

__all__ = ["LoadedSuite", "SuiteError", "load_suite", "suite_json_schema"]

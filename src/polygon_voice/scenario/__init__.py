"""Loading suite files: YAML or JSON, validated, with errors that name the line and the field."""

from typing import TYPE_CHECKING

from polygon_voice._lazy import lazy_exports

if TYPE_CHECKING:
    from polygon_voice.scenario.errors import SuiteError
    from polygon_voice.scenario.loader import LoadedSuite, load_suite
    from polygon_voice.scenario.schema import suite_json_schema
else:
    # Each name's module is imported when the name is first read.
    __getattr__, __dir__ = lazy_exports(
        __name__,
        {
            "polygon_voice.scenario.errors": ("SuiteError",),
            "polygon_voice.scenario.loader": ("LoadedSuite", "load_suite"),
            "polygon_voice.scenario.schema": ("suite_json_schema",),
        },
    )

__all__ = ["LoadedSuite", "SuiteError", "load_suite", "suite_json_schema"]

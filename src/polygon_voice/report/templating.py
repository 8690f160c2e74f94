"""The Jinja2 environment shared by the HTML report and the web app.

Autoescape is on for every template whatever its name, and undefined names fail loudly
(StrictUndefined): a typo in a template must not render as an empty string. Data is never
marked safe; JSON for the page goes through `json_script`, which escapes `<`, `>` and `&`
so that no text inside it can close the `<script>` element it sits in.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from importlib import resources
from pathlib import Path
from typing import Any

from jinja2 import ChoiceLoader, Environment, FileSystemLoader, PackageLoader, StrictUndefined
from markupsafe import Markup

TEMPLATES_PACKAGE = "polygon_voice.report"
SCRIPT_FILES = (
    "vendor/vega.min.js",
    "vendor/vega-lite.min.js",
    "vendor/vega-embed.min.js",
    "vendor/vega-interpreter.js",
    "charts.js",
)
"""The page scripts in load order (under assets/): the chart library, then what draws."""
STYLE_FILE = "polygon.css"

_JSON_ESCAPES = {ord("<"): "\\u003c", ord(">"): "\\u003e", ord("&"): "\\u0026"}
# U+2028 and U+2029 end a line in older JavaScript; they are escaped like the rest.
_JSON_ESCAPES.update({0x2028: "\\u2028", 0x2029: "\\u2029"})


def json_for_script(value: Any) -> str:
    """`value` as JSON safe to put inside `<script type="application/json">`."""
    text = json.dumps(value, ensure_ascii=False, sort_keys=False, default=str)
    return text.translate(_JSON_ESCAPES)


def _json_script_filter(value: Any) -> Markup:
    # Safe by construction: no `<`, `>` or `&` is left in the text, so it cannot form markup.
    return Markup(json_for_script(value))


def _number(value: Any, digits: int = 1) -> str:
    """A number for a table cell; "—" for none."""
    if value is None:
        return "—"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def _percent(value: Any, digits: int = 0) -> str:
    """A fraction 0..1 as a percentage; "—" for none."""
    if value is None:
        return "—"
    return f"{float(value) * 100:.{digits}f} %"


def _compact_json(value: Any) -> str:
    """Tool arguments and results, shown as text (escaped by autoescape like any text)."""
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)


def asset(name: str) -> str:
    """The text of a file under the report's assets/ (SCRIPT_FILES, STYLE_FILE)."""
    return resources.files(TEMPLATES_PACKAGE).joinpath("assets", name).read_text("utf-8")


def environment(extra_dirs: Iterable[Path] = ()) -> Environment:
    """A Jinja2 environment over the report's templates, and `extra_dirs` searched first."""
    dirs = [str(d) for d in extra_dirs]
    loaders: list[Any] = [FileSystemLoader(dirs)] if dirs else []
    loaders.append(PackageLoader(TEMPLATES_PACKAGE, "templates"))
    env = Environment(
        loader=ChoiceLoader(loaders),
        autoescape=True,  # every template, whatever its file name
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters["json_script"] = _json_script_filter
    env.filters["num"] = _number
    env.filters["pct"] = _percent
    env.filters["compact_json"] = _compact_json
    return env

"""Rendering the app's pages: the shared Jinja2 environment, links between pages, responses."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

from fastapi.responses import HTMLResponse
from jinja2 import Environment

from polygon_voice.report.templating import environment

TEMPLATES = Path(__file__).parent / "templates"
STATIC = Path(__file__).parent / "static"


@lru_cache(maxsize=1)
def pages() -> Environment:
    """The report's environment (autoescape on, strict undefined) with the app's templates."""
    return environment(extra_dirs=(TEMPLATES,))


def _part(value: str) -> str:
    # Every character that could end a path segment or start a query is escaped.
    return quote(value, safe="")


class AppLinks:
    """Where the shared partials link to in the app: real URLs, not the report's anchors."""

    def run(self, run_id: str) -> str:
        """The run page."""
        return f"/runs/{_part(run_id)}"

    def conversation(self, run_id: str, conversation_id: str) -> str:
        """The conversation viewer."""
        return f"/runs/{_part(run_id)}/conversations/{_part(conversation_id)}"

    def persona(self, persona_id: str) -> str:
        """A persona's page."""
        return f"/personas/{_part(persona_id)}"

    def compare(self, run_ids: list[str]) -> str:
        """The comparison of these runs."""
        return "/compare?" + urlencode([("run", run_id) for run_id in run_ids])

    def prompt(self, path: str) -> str:
        """The prompt editor on one file."""
        return "/prompts/edit?" + urlencode({"path": path})


LINKS = AppLinks()


def page(name: str, status: int = 200, **context: Any) -> HTMLResponse:
    """Template `name` rendered with `context` (and the links) as an HTML response."""
    html = pages().get_template(name).render(links=LINKS, **context)
    return HTMLResponse(html, status_code=status)


def message_page(status: int, title: str, message: str, csrf: str = "") -> HTMLResponse:
    """A plain page that says what went wrong and what to do (404, 401, 503, ...)."""
    return page("app_message.html.j2", status, title=title, message=message, csrf=csrf, nav="")

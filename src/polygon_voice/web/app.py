"""The local web app over the stored runs: `create_app(settings)` (docs/web.md).

Routes (GET unless said, and HEAD wherever GET is; every form also carries the hidden
field `csrf`):

- `/`: runs list. Filters `form[data-testid=run-filters]`, GET params `agent`, `suite`,
  `status`, `rubric`; a checkbox `run` (value: the run id) per row and
  `[data-testid=compare-button]` submitting GET `/compare?run=A&run=B`.
- `/runs/{run_id}`: the run page; `/runs/{run_id}/conversations/{conversation_id}`: the
  conversation viewer. Both take an optional `set` (a judgement set's name).
- `/compare?run=A&run=B[&run=C...]`: the comparison; refused with status 409 and
  `[data-testid=compare-refused]` giving the reason (RUB-6 mixed rubric versions, fewer than
  two runs); an unknown run is a 404.
- `/prompts`: the editable prompt files. `/prompts/edit?path=P`: the file linted.
  POST `/prompts/edit?path=P` with fields `text` and `action` (`lint`: lint the posted
  text without saving; `save`: write the file atomically, then lint it again).
- `/personas`: personas browser, GET params `type`, `outcome`, `difficulty`,
  `staleness` (`stale|current`), `realism` (`unrealistic|realistic`).
  `/personas/{persona_id}`: one persona; POST `/personas/{persona_id}/realism` with fields
  `unrealistic` (`1` marks it unrealistic, `0` realistic again) and `note` (optional).
- `/sweeps`: the stored sweeps; `/sweeps/{sweep_id}`: one's leaderboard and robustness curves
  (`[data-testid=leaderboard]`, one `[data-testid=leaderboard-row]` per point).
- `/static/...`: the report's assets (vendored chart libraries, charts.js, CSS);
  `/static/app/...`: the app's own stylesheet.

Lint marks: `mark.lint-finding` elements cover pieces of the text; `data-start` and
`data-end` are that piece's character offsets in the text (so the mark's text is
`text[start:end]`), `data-axis` and `data-kind` list the axes and rules of every finding
over it (space-separated when findings overlap), `data-findings` their numbers in the
list below (`#finding-N`), and `title` their messages.
"""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Annotated, Any, TypeVar

from fastapi import FastAPI, Form, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import RedirectResponse, Response
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException as StarletteHTTPException

from polygon_voice.lint import LintError, LintReport, lint
from polygon_voice.lint.model import AXES, TIER_NAMES
from polygon_voice.model.persona import Outcome, PersonaType
from polygon_voice.store import RUN_STATUSES, RunRecord, Store, StoreError
from polygon_voice.web import personas as persona_data
from polygon_voice.web import prompts as prompt_files
from polygon_voice.web.head import HeadAsGet
from polygon_voice.web.pages import LINKS, STATIC, message_page, page
from polygon_voice.web.security import SECURITY_HEADERS, check_csrf, make_guard
from polygon_voice.web.settings import WebSettings
from polygon_voice.web.sweeps import sweep_routes

REPORT_ASSETS = Path(__file__).resolve().parent.parent / "report" / "assets"
RUN_FILTERS = ("agent", "suite", "status", "rubric")
MAX_NOTE_CHARS = 2000  # why a persona is unrealistic: a sentence or two, not a document
_T = TypeVar("_T")


class PageNotFound(Exception):
    """An unknown run, conversation, persona or prompt file: a 404 page with this message."""


class DatabaseDown(Exception):
    """The results database cannot be opened or read: a 503 page with this message."""


class _Stores:
    """The results database, opened on first use (a server may start before it exists)."""

    def __init__(self, url: str) -> None:
        self._url = url
        self._store: Store | None = None
        self._lock = threading.Lock()

    def get(self) -> Store:
        with self._lock:
            if self._store is None:
                try:
                    self._store = Store(self._url)
                except StoreError as exc:
                    raise DatabaseDown(str(exc)) from exc
            return self._store

    def close(self) -> None:
        with self._lock:
            if self._store is not None:
                self._store.close()
                self._store = None


def create_app(settings: WebSettings) -> FastAPI:
    """The app for `settings`; a non-loopback host without a token is refused (ValueError)."""
    if settings.needs_token and not settings.token:
        raise ValueError(
            f"host {settings.host} is reachable from other machines: give an access token"
        )
    stores = _Stores(settings.db_url)

    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        yield
        stores.close()

    app = FastAPI(
        title="Polygon", docs_url=None, redoc_url=None, openapi_url=None, lifespan=lifespan
    )
    app.state.stores = stores
    app.state.settings = settings

    def refuse(_request: Request, status: int, title: str, message: str) -> Response:
        return message_page(status, title, message)

    app.middleware("http")(make_guard(settings, refuse))
    # Added last, so outermost: a HEAD request is a GET by the time the checks see it.
    app.add_middleware(HeadAsGet)
    _error_pages(app, settings)
    app.mount("/static/app", StaticFiles(directory=STATIC), name="app-static")
    app.mount("/static", StaticFiles(directory=REPORT_ASSETS, check_dir=False), name="static")

    @app.get("/favicon.ico", include_in_schema=False)
    def favicon() -> Response:
        return Response(status_code=204)  # no icon: a browser stops asking

    _run_routes(app, settings, stores)
    _prompt_routes(app, settings, stores)
    _persona_routes(app, settings, stores)
    sweep_routes(app, stores.get, _found, lambda nav, **extra: _context(settings, nav, **extra))
    return app


# -- errors --------------------------------------------------------------------------------


def _error_pages(app: FastAPI, settings: WebSettings) -> None:
    csrf = settings.csrf_token

    @app.exception_handler(PageNotFound)
    async def not_found(_request: Request, exc: PageNotFound) -> Response:
        return message_page(404, "Not found", str(exc), csrf)

    @app.exception_handler(DatabaseDown)
    async def database_down(_request: Request, exc: DatabaseDown) -> Response:
        return message_page(503, "The results database cannot be read", str(exc), csrf)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(_request: Request, exc: StarletteHTTPException) -> Response:
        if exc.status_code == 404:
            message = "There is no page at this address. The runs list is at /."
            return message_page(404, "Not found", message, csrf)
        return message_page(exc.status_code, "Request refused", str(exc.detail), csrf)

    @app.exception_handler(RequestValidationError)
    async def bad_request(_request: Request, exc: RequestValidationError) -> Response:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in error.get('loc', ()))}: {error.get('msg', '')}"
            for error in exc.errors()
        )
        return message_page(400, "Bad request", problems or "the request is malformed", csrf)

    @app.exception_handler(Exception)
    async def internal_error(_request: Request, _exc: Exception) -> Response:
        # The traceback goes to the server's log (uvicorn), never into the page.
        message = "Something went wrong on the server; its log says what. Try again or go back."
        response = message_page(500, "Internal error", message, csrf)
        # Answered outside the middleware stack (Starlette's error middleware): the
        # security headers are added here.
        response.headers.update(SECURITY_HEADERS)
        return response


def _found(store: Store, what: Callable[[], _T]) -> _T:
    """`what()`, with a store error shown as a 404 (unknown id) or a 503 (database down)."""
    try:
        return what()
    except StoreError as exc:
        message = str(exc)
    try:
        store.list_runs(limit=1)
    except StoreError as down:
        raise DatabaseDown(str(down)) from None
    raise PageNotFound(message)


def _context(settings: WebSettings, nav: str, **extra: Any) -> dict[str, Any]:
    return {"csrf": settings.csrf_token, "nav": nav, **extra}


# -- runs, conversations, comparison -------------------------------------------------------


def rubric_of(run: RunRecord) -> str:
    """The rubric version a run was judged under, as its config records it."""
    value = run.config.get("rubric")
    return str(value) if value else "v3"


def _run_filter_value(run: RunRecord, name: str) -> str:
    if name == "rubric":
        return rubric_of(run)
    return str(getattr(run, name))


def _run_id(store: Store, key: str) -> str:
    """The full id of the run `key` names (an id or a unique prefix), else a 404."""
    return _found(store, lambda: store.get_run(key)).id


def _check_set(store: Store, run_id: str, judgement_set: str) -> None:
    """A 404 naming the run's sets when `?set=` is not one of them: rendered, a mistyped
    name would show the run as if it had never been judged."""
    if not judgement_set:
        return
    names = _found(store, lambda: store.stage_result_names(run_id, "judge"))
    if judgement_set not in names:
        known = ", ".join(repr(name) for name in names if name) or "none besides its own"
        raise PageNotFound(f"run {run_id} has no judgement set {judgement_set!r} (it has: {known})")


def _run_routes(app: FastAPI, settings: WebSettings, stores: _Stores) -> None:
    @app.get("/")
    def runs_list(agent: str = "", suite: str = "", status: str = "", rubric: str = "") -> Response:
        store = stores.get()
        try:
            runs = store.list_runs()
        except StoreError as exc:
            raise DatabaseDown(str(exc)) from exc
        chosen = {"agent": agent, "suite": suite, "status": status, "rubric": rubric}
        options = {
            name: sorted({_run_filter_value(run, name) for run in runs}) for name in RUN_FILTERS
        }
        options["status"] = sorted(set(options["status"]) | RUN_STATUSES)
        shown = [
            run
            for run in runs
            if all(not v or _run_filter_value(run, k) == v for k, v in chosen.items())
        ]
        return page(
            "app_runs.html.j2",
            **_context(
                settings,
                "runs",
                runs=shown,
                total=len(runs),
                chosen=chosen,
                options=options,
                rubric_of=rubric_of,
            ),
        )

    @app.get("/runs/{run_id}")
    def run_page(run_id: str, judgement_set: Annotated[str, Query(alias="set")] = "") -> Response:
        from polygon_voice.report.views import run_view

        store = stores.get()
        record = _found(store, lambda: store.get_run(run_id))
        _check_set(store, record.id, judgement_set)
        view = _found(store, lambda: run_view(store, record.id, judgement_set))
        return page("app_run.html.j2", **_context(settings, "runs", run=view, record=record))

    @app.get("/runs/{run_id}/conversations/{conversation_id}")
    def conversation_page(
        run_id: str,
        conversation_id: str,
        judgement_set: Annotated[str, Query(alias="set")] = "",
    ) -> Response:
        from polygon_voice.report.views import conversation_view

        store = stores.get()
        record = _found(store, lambda: store.get_run(run_id))
        _check_set(store, record.id, judgement_set)
        view = _found(
            store, lambda: conversation_view(store, record.id, conversation_id, judgement_set)
        )
        return page(
            "app_conversation.html.j2",
            **_context(settings, "runs", conv=view, record=record),
        )

    @app.get("/compare")
    def compare_page(
        run: Annotated[list[str] | None, Query()] = None,
        judgement_set: Annotated[str, Query(alias="set")] = "",
    ) -> Response:
        from polygon_voice.report.views import ComparisonRefused, comparison_view

        store = stores.get()
        given = list(dict.fromkeys(r.strip() for r in run or () if r.strip()))
        run_ids = list(dict.fromkeys(_run_id(store, key) for key in given))
        for run_id in run_ids:
            _check_set(store, run_id, judgement_set)
        try:
            view = comparison_view(store, run_ids, judgement_set)
        except ComparisonRefused as exc:
            return page(
                "app_compare.html.j2",
                409,
                **_context(settings, "runs", cmp=None, reason=str(exc), run_ids=run_ids),
            )
        except StoreError as exc:
            raise DatabaseDown(str(exc)) from exc
        return page(
            "app_compare.html.j2",
            **_context(settings, "runs", cmp=view, reason="", run_ids=run_ids),
        )


# -- prompt editor -------------------------------------------------------------------------


def _known(settings: WebSettings, store: Store) -> list[prompt_files.PromptFile]:
    try:
        personas = store.list_personas()
    except StoreError as exc:
        raise DatabaseDown(str(exc)) from exc
    return prompt_files.known_prompts(settings.prompt_files, personas)


def _lint_text(text: str, max_tier: int) -> tuple[LintReport | None, str]:
    """The lint of `text`, or the reason it cannot be linted (shown on the page)."""
    try:
        return lint(text, max_tier=max_tier), ""
    except LintError as exc:
        return None, str(exc)


def _editor(
    settings: WebSettings,
    store: Store,
    prompt: prompt_files.PromptFile,
    text: str,
    *,
    notice: str = "",
    error: str = "",
    saved_text: str | None = None,
) -> Response:
    """The editor page: `text` in the textarea, linted and marked; the file's personas."""
    report, lint_error = _lint_text(text, settings.lint_max_tier)
    findings = prompt_files.ordered_findings(report) if report is not None else []
    pieces = prompt_files.marked_pieces(text, findings)
    try:
        records = store.list_personas(prompt_path=prompt.path)
    except StoreError as exc:
        raise DatabaseDown(str(exc)) from exc
    rows = persona_data.persona_rows(records)
    return page(
        "app_prompt_edit.html.j2",
        **_context(
            settings,
            "prompts",
            prompt=prompt,
            text=text,
            report=report,
            lint_error=lint_error,
            findings=findings,
            pieces=pieces,
            axes=AXES,
            tier_names=TIER_NAMES,
            max_tier=settings.lint_max_tier,
            personas=rows,
            notice=notice,
            error=error,
            unsaved=saved_text is not None and saved_text != text,
        ),
    )


def _prompt_routes(app: FastAPI, settings: WebSettings, stores: _Stores) -> None:
    def known_file(path: str) -> prompt_files.PromptFile:
        found = prompt_files.find_prompt(_known(settings, stores.get()), path)
        if found is None:
            raise PageNotFound(
                "This file is not one of the prompt files this server may edit: those given "
                "to `polygon serve --prompt` and those stored personas were made from (see "
                "/prompts)."
            )
        return found

    def read_or_none(path: str) -> tuple[str | None, str]:
        try:
            return prompt_files.read_prompt(path), ""
        except (OSError, UnicodeDecodeError) as exc:
            return None, f"cannot read {path}: {exc}"

    @app.get("/prompts")
    def prompts_list() -> Response:
        store = stores.get()
        files = _known(settings, store)
        rows = []
        for prompt in files:
            try:
                records = store.list_personas(prompt_path=prompt.path)
            except StoreError as exc:
                raise DatabaseDown(str(exc)) from exc
            personas = persona_data.persona_rows(records)
            rows.append((prompt, sum(row.stale for row in personas)))
        return page("app_prompts.html.j2", **_context(settings, "prompts", files=rows))

    @app.get("/prompts/edit")
    def prompt_edit(path: str = "") -> Response:
        prompt = known_file(path)
        text, error = read_or_none(prompt.path)
        return _editor(settings, stores.get(), prompt, text or "", error=error, saved_text=text)

    @app.post("/prompts/edit")
    def prompt_post(
        path: str = "",
        text: Annotated[str, Form()] = "",
        action: Annotated[str, Form()] = "lint",
        csrf: Annotated[str | None, Form()] = None,
    ) -> Response:
        if not check_csrf(settings, csrf):
            return _csrf_refused(settings)
        prompt = known_file(path)
        original, read_error = read_or_none(prompt.path)
        text = prompt_files.posted_text(text, original)
        store = stores.get()
        if action == "save":
            try:
                prompt_files.save_prompt(prompt.path, text)
            except OSError as exc:
                message = f"not saved: cannot write {prompt.path}: {exc}"
                return _editor(settings, store, prompt, text, error=message, saved_text=original)
            saved, error = read_or_none(prompt.path)
            return _editor(
                settings, store, prompt, saved or "", notice="Saved.", error=error, saved_text=saved
            )
        if action != "lint":
            message = f"unknown action {action!r}: the editor's buttons send lint or save"
            return message_page(400, "Bad request", message, settings.csrf_token)
        notice = "Linted; not saved."
        return _editor(
            settings, store, prompt, text, notice=notice, error=read_error, saved_text=original
        )


def _csrf_refused(settings: WebSettings) -> Response:
    return message_page(
        403,
        "Form refused",
        "This form does not carry this server's form token (it was sent from another page, "
        "or by a server that has restarted since). Reload the page and send it again.",
        settings.csrf_token,
    )


# -- personas ------------------------------------------------------------------------------


def _persona_routes(app: FastAPI, settings: WebSettings, stores: _Stores) -> None:
    @app.get("/personas")
    def personas_list(
        type: str = "",
        outcome: str = "",
        difficulty: str = "",
        staleness: str = "",
        realism: str = "",
    ) -> Response:
        store = stores.get()
        try:
            records = store.list_personas()
        except StoreError as exc:
            raise DatabaseDown(str(exc)) from exc
        rows = persona_data.persona_rows(records)
        chosen = {
            "type": type,
            "outcome": outcome,
            "difficulty": difficulty,
            "staleness": staleness,
            "realism": realism,
        }
        options = {
            "type": [t.value for t in PersonaType],
            "outcome": [o.value for o in Outcome],
            "difficulty": [str(d) for d in range(1, 6)],
            "staleness": list(persona_data.STALENESS),
            "realism": list(persona_data.REALISM),
        }
        return page(
            "app_personas.html.j2",
            **_context(
                settings,
                "personas",
                rows=persona_data.filter_rows(rows, chosen),
                total=len(rows),
                chosen=chosen,
                options=options,
            ),
        )

    @app.get("/personas/{persona_id}")
    def persona_page(persona_id: str) -> Response:
        store = stores.get()
        record = _found(store, lambda: store.get_persona(persona_id))
        row = persona_data.persona_rows([record])[0]
        calls = _found(store, lambda: persona_data.played_calls(store, record))
        return page(
            "app_persona.html.j2",
            **_context(
                settings, "personas", row=row, record=record, calls=calls, max_note=MAX_NOTE_CHARS
            ),
        )

    @app.post("/personas/{persona_id}/realism")
    def persona_realism(
        persona_id: str,
        unrealistic: Annotated[str, Form()] = "1",
        note: Annotated[str, Form()] = "",
        csrf: Annotated[str | None, Form()] = None,
    ) -> Response:
        if not check_csrf(settings, csrf):
            return _csrf_refused(settings)
        if len(note) > MAX_NOTE_CHARS:
            message = f"The note is {len(note):,} characters; keep it under {MAX_NOTE_CHARS:,}."
            return message_page(400, "Note too long", message, settings.csrf_token)
        store = stores.get()
        marked = unrealistic.strip() not in ("0", "false", "")
        record = _found(store, lambda: store.mark_persona(persona_id, marked, note or None))
        # Post/redirect/get: reloading the persona's page does not send the form again.
        return RedirectResponse(LINKS.persona(record.id), status_code=303)

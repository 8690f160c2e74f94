"""Personas on the command line: `polygon personas generate | list | refresh | show | sample`."""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator, Callable, Coroutine, Iterable, Sequence
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path
from typing import Annotated, TypeVar

import typer
from rich.console import Group, RenderableType
from rich.markup import escape
from rich.panel import Panel
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

from polygon_voice.cli.app import app
from polygon_voice.cli.common import (
    DbOption,
    LlmConfigOption,
    console,
    errors,
    fail,
    open_store,
)
from polygon_voice.llm import LLMClient, LLMConfigError, LLMSettings, load_llm_config, make_client
from polygon_voice.model import Outcome, Persona, PersonaType
from polygon_voice.report.terminal import conversation_view
from polygon_voice.scenario.persona_refs import (
    persona_version,
)
from polygon_voice.scenario.personas import (
    GenerationResult,
    PersonaPlan,
    generate_personas,
    make_personas,
    persona_status,
    prompt_hash_of,
    replan,
)
from polygon_voice.scenario.prompt_reading import read_prompt
from polygon_voice.seeding import content_hash, derive_seed
from polygon_voice.store import (
    PersonaConversation,
    PersonaRecord,
    Store,
    StoreError,
    new_persona_id,
)

personas_app = typer.Typer(
    help="Simulated callers generated from an agent's prompt: generate, list, refresh, sample.",
    no_args_is_help=True,
)
app.add_typer(personas_app, name="personas")

_E = TypeVar("_E", bound=StrEnum)
_T = TypeVar("_T")
# The work under a progress bar: given the bar, make the personas.
_Work = Callable[["_Bar"], Coroutine[object, object, GenerationResult]]
_STATUS_TEXT = {"current": ("current", "green"), "stale": ("STALE", "yellow")}


@personas_app.command()
def generate(
    prompt: Annotated[Path, typer.Option("--prompt", help="The agent's prompt file.")],
    n: Annotated[int, typer.Option("--n", min=1, help="How many personas to make.")] = 5,
    types: Annotated[
        str | None, typer.Option(help="Comma-separated persona types (default: all, in turn).")
    ] = None,
    outcomes: Annotated[
        str | None, typer.Option(help="Comma-separated intended outcomes (default: all).")
    ] = None,
    seed: Annotated[int, typer.Option(help="Seed of the plan and of the facts.")] = 0,
    language: Annotated[
        str | None, typer.Option(help="Callers' language (default: the prompt's own).")
    ] = None,
    concurrency: Annotated[int, typer.Option(min=1, help="Model requests at once.")] = 8,
    llm_config: LlmConfigOption = None,
    db: DbOption = None,
) -> None:
    """Make N personas from an agent's prompt: one model request each, or without a model."""
    text, path = _read_prompt(prompt)
    chosen_types = _parse_choices(types, PersonaType, "--types")
    chosen_outcomes = _parse_choices(outcomes, Outcome, "--outcomes")
    settings = _settings(llm_config)
    store = open_store(db)
    start = len(_or_fail(lambda: store.list_personas(prompt_path=path)))

    async def work(bar: _Bar) -> GenerationResult:
        async with _client_or_none(settings) as client:
            return await generate_personas(
                text,
                n,
                chosen_types,
                chosen_outcomes,
                client=client,
                seed=seed,
                start=start,
                language=language,
                concurrency=concurrency,
                on_done=bar.done,
            )

    result = _with_progress(f"personas from {prompt}", n, work)
    records = _records(result, path)
    _or_fail(lambda: store.add_personas(records))
    if records:
        console.print(personas_table(records, {path: result.prompt_hash}, "Generated personas"))
    _print_failures(result)
    console.print(f"{len(records)} of {n} personas stored. Use one in a suite: persona_ref: ID")
    if not records:
        raise typer.Exit(1)


@personas_app.command("list")
def list_(
    prompt: Annotated[
        Path | None, typer.Option("--prompt", help="Only the personas of this prompt file.")
    ] = None,
    stale: Annotated[bool, typer.Option("--stale", help="Only the stale ones.")] = False,
    db: DbOption = None,
) -> None:
    """List stored personas; STALE marks those whose prompt file changed since."""
    store = open_store(db)
    path = str(prompt.resolve()) if prompt is not None else None
    records = _or_fail(lambda: store.list_personas(prompt_path=path))
    hashes = current_hashes(records)
    if stale:
        records = [r for r in records if _status(r, hashes) == "stale"]
    console.print(personas_table(records, hashes, "Personas"))
    count = sum(_status(r, hashes) == "stale" for r in records)
    if count:
        console.print(
            f"{count} stale: their prompt changed. Regenerate them: polygon personas refresh"
        )


@personas_app.command()
def refresh(
    prompt: Annotated[
        Path | None, typer.Option("--prompt", help="Only the personas of this prompt file.")
    ] = None,
    concurrency: Annotated[int, typer.Option(min=1, help="Model requests at once.")] = 8,
    llm_config: LlmConfigOption = None,
    db: DbOption = None,
) -> None:
    """Regenerate the stale personas from their prompt as it is now; each keeps its id."""
    settings = _settings(llm_config)
    store = open_store(db)
    path = str(prompt.resolve()) if prompt is not None else None
    records = _or_fail(lambda: store.list_personas(prompt_path=path))
    hashes = current_hashes(records)
    stale = [r for r in records if _status(r, hashes) == "stale"]
    missing = [r for r in records if _status(r, hashes) == "missing"]
    for record in missing:
        errors.print(f"cannot refresh {record.id}: its prompt {escape(record.prompt_path)} is gone")
    if not stale:
        console.print("No stale personas: nothing to refresh.")
        raise typer.Exit(1 if missing else 0)
    refreshed, failed = _refresh(store, stale, settings, concurrency)
    console.print(f"{refreshed} of {len(stale)} stale personas refreshed (same ids).")
    if failed or missing:
        raise typer.Exit(1)


@personas_app.command()
def show(
    persona_id: Annotated[str, typer.Argument(help="Persona id (a unique prefix is enough).")],
    db: DbOption = None,
) -> None:
    """Show one stored persona in full."""
    store = open_store(db)
    record = _or_fail(lambda: store.get_persona(persona_id))
    console.print(persona_panel(record, current_hashes([record])))


@personas_app.command()
def sample(
    n: Annotated[int, typer.Argument(min=1, help="How many personas to show.")],
    seed: Annotated[
        int | None, typer.Option(help="Pick the same personas again (default: random).")
    ] = None,
    db: DbOption = None,
) -> None:
    """Show N random personas, each with one conversation it played, to check realism (READ-2)."""
    store = open_store(db)
    records = _or_fail(lambda: store.list_personas())
    if not records:
        fail("no personas stored yet; make some: polygon personas generate --prompt FILE", 1)
    picked = random.Random(seed).sample(records, min(n, len(records)))
    hashes = current_hashes(picked)
    played = _or_fail(lambda: store.persona_conversations(_versions(picked)))
    for record in picked:
        console.print(persona_panel(record, hashes))
        console.print(_played(record, played.get(record.id)))


# -- views ---------------------------------------------------------------------------------


def current_hashes(records: Iterable[PersonaRecord]) -> dict[str, str | None]:
    """Each prompt file's content hash now (None: the file cannot be read), read once each."""
    return {path: prompt_hash_of(path) for path in {r.prompt_path for r in records}}


def personas_table(
    records: Sequence[PersonaRecord], hashes: dict[str, str | None], title: str
) -> Table:
    """Stored personas, one row each, with their status against their prompt."""
    table = Table(title=title, title_justify="left")
    table.add_column("id", no_wrap=True)
    for column in ("name", "type, outcome, difficulty", "lang", "generator", "prompt"):
        table.add_column(column)
    table.add_column("status", no_wrap=True)
    for record in records:
        persona = record.persona
        table.add_row(
            record.id,
            Text(persona.name),
            f"{persona.type.value}, {persona.intended_outcome.value}, {persona.difficulty}",
            persona.language or "",
            Text(record.generator),
            Text(_shown_path(record.prompt_path)),
            _status_text(_status(record, hashes)),
        )
    return table


def persona_panel(record: PersonaRecord, hashes: dict[str, str | None]) -> Panel:
    """One persona in full: who, what they want, what they know."""
    persona = record.persona
    lines: list[RenderableType] = [
        Text(
            f"{persona.type.value}, wants {persona.intended_outcome.value}, "
            f"difficulty {persona.difficulty}, language {persona.language or 'suite default'}"
        ),
        Text.assemble(("goal  ", "bold"), Text(persona.goal)),
        Text("facts", style="bold"),
        *(Text(f"  {key}: {value}") for key, value in persona.facts.items()),
        Text.assemble(
            ("prompt  ", "dim"),
            Text(f"{_shown_path(record.prompt_path)} ({record.prompt_hash}), ", style="dim"),
            _status_text(_status(record, hashes)),
            Text(f"  generator {record.generator}", style="dim"),
        ),
    ]
    title = Text.assemble((record.id, "bold"), "  ", Text(persona.name))
    return Panel(Group(*lines), title=title, title_align="left")


def _played(record: PersonaRecord, found: PersonaConversation | None) -> RenderableType:
    if found is None:
        return Text(
            f"No stored conversation yet: use it in a suite (persona_ref: {record.id}) and run it.",
            style="dim",
        )
    note = "" if found.current_version else " (played by an earlier version of this persona)"
    header = Text(f"From run {found.run_id}{note}:", style="dim")
    return Group(header, conversation_view(found.conversation), Text(""))


def _status(record: PersonaRecord, hashes: dict[str, str | None]) -> str:
    return persona_status(record.prompt_hash, hashes.get(record.prompt_path))


def _status_text(status: str) -> Text:
    label, style = _STATUS_TEXT.get(status, ("prompt missing", "red"))
    return Text(label, style=style)


def _shown_path(path: str) -> str:
    try:
        return str(Path(path).relative_to(Path.cwd()))
    except ValueError:
        return path


# -- helpers -------------------------------------------------------------------------------


class _Bar:
    """A progress bar that counts personas as they are done."""

    def __init__(self, progress: Progress, total: int, label: str) -> None:
        self._progress = progress
        self._task = progress.add_task(label, total=total)

    def done(self, plan: PersonaPlan, persona: Persona | None) -> None:
        self._progress.advance(self._task)


def _with_progress(label: str, total: int, work: _Work) -> GenerationResult:
    columns = (
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
    )
    with Progress(*columns, console=console, transient=True) as progress:
        return asyncio.run(work(_Bar(progress, total, escape(label))))


def _refresh(
    store: Store, stale: list[PersonaRecord], settings: LLMSettings, concurrency: int
) -> tuple[int, int]:
    """Regenerate stale personas, one prompt file at a time; (refreshed, failed)."""
    by_prompt: dict[str, list[PersonaRecord]] = {}
    for record in stale:
        by_prompt.setdefault(record.prompt_path, []).append(record)
    refreshed = failed = 0
    for path, records in by_prompt.items():
        done, lost = _refresh_prompt(store, path, records, settings, concurrency)
        refreshed, failed = refreshed + done, failed + lost
    return refreshed, failed


def _refresh_prompt(
    store: Store,
    path: str,
    records: list[PersonaRecord],
    settings: LLMSettings,
    concurrency: int,
) -> tuple[int, int]:
    text, _ = _read_prompt(Path(path))
    language, new_hash = read_prompt(text).language, content_hash(text)
    # Same type, outcome and difficulty; a seed of its own per persona and prompt version.
    plans = [
        replan(record.persona, language=language, seed=derive_seed(record.id, new_hash), index=i)
        for i, record in enumerate(records)
    ]

    async def work(bar: _Bar) -> GenerationResult:
        async with _client_or_none(settings) as client:
            return await make_personas(
                text, plans, client=client, concurrency=concurrency, on_done=bar.done
            )

    result = _with_progress(f"refreshing personas of {_shown_path(path)}", len(plans), work)
    for made in result.personas:
        updated = _refreshed(records[made.plan.index], made.persona, result, made.generator)
        _replace(store, updated)
    _print_failures(result)
    return len(result.personas), len(result.failures)


def _refreshed(
    original: PersonaRecord, persona: Persona, result: GenerationResult, generator: str
) -> PersonaRecord:
    return original.model_copy(
        update={
            "persona": persona,
            "prompt_hash": result.prompt_hash,
            "generator": generator,
            "updated_at": datetime.now(UTC),
        }
    )


def _records(result: GenerationResult, path: str) -> list[PersonaRecord]:
    now = datetime.now(UTC)
    return [
        PersonaRecord(
            id=new_persona_id(),
            persona=made.persona,
            prompt_path=path,
            prompt_hash=result.prompt_hash,
            generator=made.generator,
            created_at=now,
            updated_at=now,
        )
        for made in result.personas
    ]


def _versions(records: Iterable[PersonaRecord]) -> dict[str, str]:
    return {record.id: persona_version(record.persona) for record in records}


def _print_failures(result: GenerationResult) -> None:
    for failure in result.failures:
        plan = failure.plan
        errors.print(
            f"[red]persona {plan.index + 1} ({plan.type.value}, {plan.outcome.value}) failed:[/] "
            f"{escape(failure.message)}"
        )


def _read_prompt(path: Path) -> tuple[str, str]:
    """The prompt's text and its resolved path (what the personas record)."""
    try:
        # Bytes decoded as they are (no newline translation), so the text's hash is the file's.
        return path.read_bytes().decode("utf-8"), str(path.resolve())
    except (OSError, UnicodeDecodeError) as exc:
        fail(f"cannot read the prompt file {path}: {exc}")


def _parse_choices(given: str | None, kind: type[_E], option: str) -> list[_E]:
    if given is None:
        return list(kind)
    chosen = []
    for name in (part.strip() for part in given.split(",")):
        try:
            chosen.append(kind(name))
        except ValueError:
            valid = ", ".join(member.value for member in kind)
            fail(f"{option}: '{name}' is not one of: {valid}")
    return chosen


def _settings(llm_config: Path | None) -> LLMSettings:
    try:
        return load_llm_config(llm_config)
    except LLMConfigError as exc:
        fail(str(exc))


@asynccontextmanager
async def _client_or_none(settings: LLMSettings) -> AsyncIterator[LLMClient | None]:
    """The caller role's client when a model is configured, else None (deterministic)."""
    if not settings.is_configured("caller"):
        yield None
        return
    async with make_client(settings, "caller") as client:
        yield client


def _replace(store: Store, record: PersonaRecord) -> None:
    try:
        store.replace_persona(record)
    except StoreError as exc:
        fail(str(exc))


def _or_fail(action: Callable[[], _T]) -> _T:
    try:
        return action()
    except StoreError as exc:
        fail(str(exc))

"""Personas on the command line: `polygon personas generate | list | refresh | show | mark |
sample`.

Exit codes (docs/personas.md): 0 done; 2 bad input or a model that cannot work (checked
before any request); 3 the model failed for some or all personas (what it made is stored).
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator, Callable, Coroutine, Iterable, Sequence
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, TypeVar

import typer
from rich.console import Group, RenderableType
from rich.markup import escape
from rich.panel import Panel
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

if TYPE_CHECKING:
    from rich.progress import Progress, TaskID
    from rich.table import Table

    from polygon_voice.llm import LLMClient, LLMSettings
    from polygon_voice.model import ConversationResult, Persona
    from polygon_voice.scenario.personas import (
        GeneratedPersona,
        GenerationFailure,
        GenerationResult,
        PersonaPlan,
    )
    from polygon_voice.store import PersonaConversation, PersonaRecord, PersonaUsage, Store

personas_app = typer.Typer(
    help="Simulated callers made from an agent's prompt: generate, list, refresh, sample, mark.",
    no_args_is_help=True,
)
app.add_typer(personas_app, name="personas")

MODEL_FAILED = 3
"""Exit code when the model failed for one persona or more (the others are stored)."""
GENERATOR_NEED = "persona generation"
_E = TypeVar("_E", bound=StrEnum)
_T = TypeVar("_T")
# The work under a progress bar: given the bar, make the personas.
_Work = Callable[["_Bar"], Coroutine[object, object, "GenerationResult"]]
_STATUS_TEXT = {"current": ("current", "green"), "stale": ("STALE", "yellow")}
_SAMPLE_TURNS = 12
_TURN_CHARS = 200
_NAMED_FAILURES = 5


class Realism(StrEnum):
    """`personas list --realism`: the personas marked unrealistic, or the others."""

    UNREALISTIC = "unrealistic"
    REALISTIC = "realistic"


QuietOption = Annotated[
    bool,
    typer.Option(
        "--quiet", "-q", help="No progress bar and no table: only errors and the last line."
    ),
]


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
    quiet: QuietOption = False,
    db: DbOption = None,
) -> None:
    """Make N personas from an agent's prompt: one model request each, or without a model.

    Exit 0 when all were stored, 2 when the caller model cannot work (checked first),
    3 when the model failed for some (the others are stored) or all of them.
    """
    from polygon_voice.model import Outcome, PersonaType
    from polygon_voice.scenario.personas import generate_personas

    text, path = _read_prompt(prompt)
    chosen_types = _parse_choices(types, PersonaType, "--types")
    chosen_outcomes = _parse_choices(outcomes, Outcome, "--outcomes")
    settings = _ready_settings(llm_config)
    store = open_store(db)
    start = len(_or_fail(lambda: store.list_personas(prompt_path=path)))

    async def work(bar: _Bar) -> GenerationResult:
        async with _client_or_none(settings) as client:
            bar.watch(client)
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

    result = _with_progress(f"personas from {prompt}", n, work, quiet)
    records = new_records(result, path)
    _or_fail(lambda: store.add_personas(records))
    if records and not quiet:
        console.print(personas_table(records, {path: result.prompt_hash}, "Generated personas"))
    _print_failures(result.failures)
    if result.usage is not None and not quiet:
        from polygon_voice.scenario.personas import usage_line

        console.print(usage_line(result.usage))
    console.print(_generated_line(len(records), n, records[0].id if records else None))
    if result.failures:
        raise typer.Exit(MODEL_FAILED)


@personas_app.command("list")
def list_(
    prompt: Annotated[
        Path | None, typer.Option("--prompt", help="Only the personas of this prompt file.")
    ] = None,
    stale: Annotated[bool, typer.Option("--stale", help="Only the stale ones.")] = False,
    realism: Annotated[
        Realism | None,
        typer.Option(
            "--realism", help="Only those marked unrealistic, or only the others (realistic)."
        ),
    ] = None,
    db: DbOption = None,
) -> None:
    """List stored personas; STALE marks those whose prompt file changed since, UNREALISTIC
    those a person marked so."""
    store = open_store(db)
    path = str(prompt.resolve()) if prompt is not None else None
    records = _or_fail(lambda: store.list_personas(prompt_path=path))
    hashes = current_hashes(records)
    if stale:
        records = [r for r in records if _status(r, hashes) == "stale"]
    if realism is not None:
        wanted = realism is Realism.UNREALISTIC
        records = [r for r in records if r.unrealistic == wanted]
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
    quiet: QuietOption = False,
    db: DbOption = None,
) -> None:
    """Regenerate the stale personas from their prompt as it is now; each keeps its id.

    Exit 0 when every stale persona was refreshed, 2 when a prompt file is gone or the
    caller model cannot work, 3 when the model failed for some of them.
    """
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
        raise typer.Exit(2 if missing else 0)
    settings = _ready_settings(llm_config)
    refreshed, failed = _refresh(store, stale, settings, concurrency, quiet)
    line = f"{refreshed} of {len(stale)} stale personas refreshed (same ids)"
    console.print(f"{line}; {failed} failed (see above)." if failed else f"{line}.")
    if failed:
        raise typer.Exit(MODEL_FAILED)
    if missing:
        raise typer.Exit(2)


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
def mark(
    persona_id: Annotated[str, typer.Argument(help="Persona id (a unique prefix is enough).")],
    realistic: Annotated[
        bool,
        typer.Option("--realistic", help="Take the mark back: the persona is realistic again."),
    ] = False,
    note: Annotated[
        str | None, typer.Option("--note", help="Why (kept with the mark, shown with it).")
    ] = None,
    db: DbOption = None,
) -> None:
    """Mark a persona as unrealistic: later runs leave out the scenarios it plays.

    `polygon run --include-unrealistic` runs them anyway; --realistic takes the mark back.
    """
    store = open_store(db)
    record = _or_fail(lambda: store.mark_persona(persona_id, not realistic, note))
    if record.unrealistic:
        console.print(
            f"{record.id} ({escape(record.persona.name)}) is marked unrealistic: later runs "
            "leave out the scenarios it plays (polygon run --include-unrealistic runs them)."
        )
    else:
        console.print(f"{record.id} ({escape(record.persona.name)}) is realistic again.")


@personas_app.command()
def sample(
    n: Annotated[int, typer.Argument(min=1, help="How many personas to show.")],
    seed: Annotated[
        int | None, typer.Option(help="Pick the same personas again (default: random).")
    ] = None,
    include_unrealistic: Annotated[
        bool,
        typer.Option(
            "--include-unrealistic", help="Also pick among the personas marked unrealistic."
        ),
    ] = False,
    db: DbOption = None,
) -> None:
    """Show N random personas, each with the last call it played, turn by turn, to read by hand.

    A persona that has not played a call yet says so, and how to give it one. Those marked
    unrealistic are not picked unless --include-unrealistic.
    """
    store = open_store(db)
    records = _or_fail(lambda: store.list_personas())
    if not records:
        fail("no personas stored yet; make some: polygon personas generate --prompt FILE", 1)
    if not include_unrealistic:
        records = [record for record in records if not record.unrealistic]
        if not records:
            fail("every stored persona is marked unrealistic; add --include-unrealistic", 1)
    picked = random.Random(seed).sample(records, min(n, len(records)))
    hashes = current_hashes(picked)
    played = _or_fail(lambda: store.persona_conversations(_versions(picked)))
    for record in picked:
        console.print(persona_panel(record, hashes))
        console.print(_played(record, played.get(record.id)))
    unplayed = [record.id for record in picked if record.id not in played]
    if unplayed:
        console.print(
            f"{len(unplayed)} of {len(picked)} shown have not played a call yet. To get one, "
            f"name it in a scenario of a suite (persona_ref: {unplayed[0]}) and run the suite: "
            "polygon run SUITE (docs/personas.md)."
        )


# -- views ---------------------------------------------------------------------------------


def current_hashes(records: Iterable[PersonaRecord]) -> dict[str, str | None]:
    """Each prompt file's content hash now (None: the file cannot be read), read once each."""
    from polygon_voice.scenario.personas import prompt_hash_of

    return {path: prompt_hash_of(path) for path in {r.prompt_path for r in records}}


def personas_table(
    records: Sequence[PersonaRecord], hashes: dict[str, str | None], title: str
) -> Table:
    """Stored personas, one row each, with their status against their prompt."""
    from rich.table import Table

    table = Table(title=title, title_justify="left")
    table.add_column("id", no_wrap=True)
    for column in ("name", "type, outcome, difficulty", "lang", "generator", "prompt"):
        table.add_column(column)
    table.add_column("status", no_wrap=True)
    priced = any(record.usage is not None for record in records)
    if priced:  # made by a model: what each cost, in tokens in / out
        table.add_column("tokens", justify="right", no_wrap=True)
    for record in records:
        persona = record.persona
        cells: list[RenderableType] = [
            record.id,
            Text(persona.name),
            f"{persona.type.value}, {persona.intended_outcome.value}, {persona.difficulty}",
            persona.language or "",
            Text(record.generator),
            Text(_shown_path(record.prompt_path)),
            _status_cell(record, hashes),
        ]
        if priced:
            usage = record.usage
            cells.append("—" if usage is None else f"{usage.tokens_in}/{usage.tokens_out}")
        table.add_row(*cells)
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
    if record.usage is not None:
        lines.append(Text(f"model usage  {record.usage.line()}", style="dim"))
    lines.extend(_realism_lines(record))
    title = Text.assemble((record.id, "bold"), "  ", Text(persona.name))
    # Not expanded: as wide as its content, whatever the width of the terminal or pipe.
    return Panel(Group(*lines), title=title, title_align="left", expand=False)


def _played(record: PersonaRecord, found: PersonaConversation | None) -> RenderableType:
    if found is None:
        return Text(f"{record.id} has not played a call yet.\n", style="bold")
    call = found.conversation
    note = "" if found.current_version else ", played by an earlier version of this persona"
    header = Text(
        f"Last call it played: run {found.run_id}, scenario {call.scenario_id}{note}; "
        f"ended {call.end.reason}, {len(call.turns)} turns",
        style="bold",
    )
    more = f"polygon show {found.run_id} --conversation {call.id}"
    footer = Text(f"Every event of this call: {more}\n", style="dim")
    return Group(header, *_short_turns(call), footer)


def _short_turns(call: ConversationResult) -> list[Text]:
    """The call's turns, one line each (long ones cut), the first few only."""
    lines = []
    for turn in call.turns[:_SAMPLE_TURNS]:
        said = " ".join(turn.text.split())
        if len(said) > _TURN_CHARS:
            said = said[:_TURN_CHARS] + "..."
        cut = " (cut off)" if turn.interrupted else ""
        lines.append(Text.assemble((f"  {turn.speaker:<7} ", "bold"), Text(said), (cut, "dim")))
    hidden = len(call.turns) - _SAMPLE_TURNS
    if hidden > 0:
        lines.append(Text(f"  ... and {hidden} more turns", style="dim"))
    if not call.turns:
        lines.append(Text(f"  (no turn was spoken: {call.end.message or call.end.reason})"))
    return lines


def _status(record: PersonaRecord, hashes: dict[str, str | None]) -> str:
    from polygon_voice.scenario.personas import persona_status

    return persona_status(record.prompt_hash, hashes.get(record.prompt_path))


def _status_cell(record: PersonaRecord, hashes: dict[str, str | None]) -> Text:
    """The prompt status, and UNREALISTIC when a person marked the persona so."""
    text = _status_text(_status(record, hashes))
    if record.unrealistic:
        text.append(", ")
        text.append("UNREALISTIC", style="red")
    return text


def _realism_lines(record: PersonaRecord) -> list[RenderableType]:
    if not record.unrealistic:
        return []
    when = f" on {record.marked_at:%Y-%m-%d %H:%M} UTC" if record.marked_at is not None else ""
    line = Text.assemble(("UNREALISTIC", "bold red"), f"  marked{when}")
    if record.unrealistic_note:
        line.append(": ")
        line.append(record.unrealistic_note)
    return [line, Text("  left out of later runs unless --include-unrealistic", style="dim")]


def _status_text(status: str) -> Text:
    label, style = _STATUS_TEXT.get(status, ("prompt missing", "red"))
    return Text(label, style=style)


def _shown_path(path: str) -> str:
    try:
        return str(Path(path).relative_to(Path.cwd()))
    except ValueError:
        return path


def _generated_line(stored: int, asked: int, first_id: str | None) -> str:
    if first_id is None:
        return f"No persona stored: the model failed for all {asked} (see above)."
    line = f"{stored} of {asked} personas stored"
    if stored < asked:
        line += f"; {asked - stored} failed (see above)"
    return f"{line}. Use one in a suite: persona_ref: {first_id}"


def _print_failures(failures: Sequence[GenerationFailure]) -> None:
    """Each distinct error once, with the personas it failed."""
    by_message: dict[str, list[PersonaPlan]] = {}
    for failure in failures:
        by_message.setdefault(failure.message, []).append(failure.plan)
    for message, plans in by_message.items():
        named = ", ".join(
            f"{plan.index + 1} ({plan.type.value}, {plan.outcome.value})"
            for plan in plans[:_NAMED_FAILURES]
        )
        if len(plans) > _NAMED_FAILURES:
            named += f" and {len(plans) - _NAMED_FAILURES} more"
        noun = "persona" if len(plans) == 1 else "personas"
        errors.print(f"[red]{noun} {escape(named)} failed:[/] {escape(message)}")


# -- helpers -------------------------------------------------------------------------------


class _Bar:
    """The progress bar of a generation: personas done, failed, and the model's requests."""

    def __init__(self, progress: Progress, total: int, label: str) -> None:
        self._progress = progress
        self._task: TaskID = progress.add_task(label, total=total, status="")
        self._client: LLMClient | None = None
        self.failed = 0

    def watch(self, client: LLMClient | None) -> None:
        """Show this client's requests in flight, retries and failures as they change."""
        self._client = client

    def done(self, plan: PersonaPlan, persona: Persona | None) -> None:
        """One persona made (or failed)."""
        self.failed += persona is None
        self._progress.advance(self._task)
        self.tick()

    def tick(self) -> None:
        """Refresh the live figures after the bar."""
        parts = [f"{self.failed} failed"] if self.failed else []
        if self._client is not None:
            parts.append(f"model requests: {self._client.activity.summary()}")
        self._progress.update(self._task, status=", ".join(parts))


def _with_progress(label: str, total: int, work: _Work, quiet: bool) -> GenerationResult:
    from polygon_voice.cli.progress import progress_bar

    async def run(bar: _Bar) -> GenerationResult:
        ticking = asyncio.create_task(_tick(bar))
        try:
            return await work(bar)
        finally:
            ticking.cancel()

    with progress_bar(console, quiet=quiet) as progress:
        try:
            return asyncio.run(run(_Bar(progress, total, escape(label))))
        except KeyboardInterrupt:
            progress.stop()
            fail("interrupted: no persona of this batch was stored", 130)


async def _tick(bar: _Bar) -> None:
    # Requests start and end between personas: the figures are refreshed a few times a second.
    while True:
        await asyncio.sleep(0.25)
        bar.tick()


def _refresh(
    store: Store,
    stale: list[PersonaRecord],
    settings: LLMSettings,
    concurrency: int,
    quiet: bool,
) -> tuple[int, int]:
    """Regenerate stale personas, one prompt file at a time; (refreshed, failed)."""
    by_prompt: dict[str, list[PersonaRecord]] = {}
    for record in stale:
        by_prompt.setdefault(record.prompt_path, []).append(record)
    refreshed = failed = 0
    for path, records in by_prompt.items():
        done, lost = _refresh_prompt(store, path, records, settings, concurrency, quiet)
        refreshed, failed = refreshed + done, failed + lost
    return refreshed, failed


def _refresh_prompt(
    store: Store,
    path: str,
    records: list[PersonaRecord],
    settings: LLMSettings,
    concurrency: int,
    quiet: bool,
) -> tuple[int, int]:
    from polygon_voice.scenario.personas import make_personas, replan
    from polygon_voice.scenario.prompt_reading import read_prompt
    from polygon_voice.seeding import content_hash, derive_seed

    text, _ = _read_prompt(Path(path))
    language, new_hash = read_prompt(text).language, content_hash(text)
    # Same type, outcome and difficulty; a seed of its own per persona and prompt version.
    plans = [
        replan(record.persona, language=language, seed=derive_seed(record.id, new_hash), index=i)
        for i, record in enumerate(records)
    ]

    async def work(bar: _Bar) -> GenerationResult:
        async with _client_or_none(settings) as client:
            bar.watch(client)
            return await make_personas(
                text, plans, client=client, concurrency=concurrency, on_done=bar.done
            )

    label = f"refreshing personas of {_shown_path(path)}"
    result = _with_progress(label, len(plans), work, quiet)
    for made in result.personas:
        updated = _refreshed(records[made.plan.index], made, result)
        _replace(store, updated)
    _print_failures(result.failures)
    return len(result.personas), len(result.failures)


def _refreshed(
    original: PersonaRecord, made: GeneratedPersona, result: GenerationResult
) -> PersonaRecord:
    # The usage is this version's: what making it again spent.
    return original.model_copy(
        update={
            "persona": made.persona,
            "prompt_hash": result.prompt_hash,
            "generator": made.generator,
            "updated_at": datetime.now(UTC),
            "usage": _usage(made),
        }
    )


def new_records(result: GenerationResult, path: str) -> list[PersonaRecord]:
    """Records for the personas just made from the prompt at `path`, with what each spent."""
    from polygon_voice.store import PersonaRecord, new_persona_id

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
            usage=_usage(made),
        )
        for made in result.personas
    ]


def _usage(made: GeneratedPersona) -> PersonaUsage | None:
    """What a persona's own requests spent, as it is stored; None without a model."""
    from polygon_voice.store import PersonaUsage

    spent = made.usage
    if spent is None:
        return None
    return PersonaUsage(
        requests=spent.calls,
        cached=spent.cached_calls,
        tokens_in=spent.tokens_in,
        tokens_out=spent.tokens_out,
        cost=spent.cost,
    )


def _versions(records: Iterable[PersonaRecord]) -> dict[str, str]:
    from polygon_voice.scenario.persona_refs import persona_version

    return {record.id: persona_version(record.persona) for record in records}


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


def _ready_settings(llm_config: Path | None) -> LLMSettings:
    """The LLM settings; when a caller model is named, checked before any persona is asked."""
    from polygon_voice.llm import LLMConfigError, load_llm_config
    from polygon_voice.preflight import RoleNeed, SetupError, check_roles

    try:
        settings = load_llm_config(llm_config)
    except LLMConfigError as exc:
        fail(str(exc))
    if not settings.is_configured("caller"):
        errors.print(
            "note: no caller model is named, so the personas are made without a model "
            "(set POLYGON_CALLER_MODEL to use one; docs/personas.md)"
        )
        return settings
    problems = check_roles([RoleNeed("caller", GENERATOR_NEED)], settings)
    if problems:
        fail(str(SetupError(problems, GENERATOR_NEED)))
    return settings


@asynccontextmanager
async def _client_or_none(settings: LLMSettings) -> AsyncIterator[LLMClient | None]:
    """The caller role's client when a model is configured, else None (deterministic)."""
    from polygon_voice.llm import make_client

    if not settings.is_configured("caller"):
        yield None
        return
    async with make_client(settings, "caller") as client:
        yield client


def _replace(store: Store, record: PersonaRecord) -> None:
    from polygon_voice.store import StoreError

    try:
        store.replace_persona(record)
    except StoreError as exc:
        fail(str(exc))


def _or_fail(action: Callable[[], _T]) -> _T:
    from polygon_voice.store import StoreError

    try:
        return action()
    except StoreError as exc:
        fail(str(exc))

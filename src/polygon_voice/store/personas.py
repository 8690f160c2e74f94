"""The store's persona methods: generated personas by id, and the conversations they played.

A mixin of `Store`, kept apart so store.py stays about runs and conversations. Which
persona played which call is read from each run's config (`personas`: a list of
{scenario, persona, version}), written by `polygon run` when a suite references stored
personas: the conversation record itself stays as the engine made it.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from contextlib import AbstractContextManager
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa
from pydantic import ValidationError
from sqlalchemy.engine import Connection, Engine, RowMapping
from sqlalchemy.exc import IntegrityError, SQLAlchemyError

from polygon_voice.model.persona import Persona
from polygon_voice.model.trace import ConversationResult
from polygon_voice.store.errors import StoreError
from polygon_voice.store.records import PersonaConversation, PersonaRecord, PersonaUsage, utc
from polygon_voice.store.schema import conversations, personas, runs

# How many ids an unknown or ambiguous persona id lists.
_SHOWN = 10


class PersonaStore:
    """Persona methods of `Store` (which provides the engine and the error helpers)."""

    url: str
    _engine: Engine

    if TYPE_CHECKING:

        def _reading(self, action: str) -> AbstractContextManager[Connection]: ...

        def _failure(self, action: str, exc: SQLAlchemyError) -> StoreError: ...

    def add_personas(self, records: Sequence[PersonaRecord]) -> None:
        """Store new personas in one commit: all of them or none."""
        if not records:
            return
        rows = [_row(record) for record in records]
        try:
            with self._engine.begin() as conn:
                conn.execute(sa.insert(personas), rows)
        except IntegrityError as exc:
            ids = ", ".join(record.id for record in records)
            raise StoreError(f"a persona id among {ids} is already stored in {self.url}") from exc
        except SQLAlchemyError as exc:
            raise self._failure(f"store {len(records)} personas", exc) from exc

    def list_personas(self, prompt_path: str | None = None) -> list[PersonaRecord]:
        """Stored personas in the order they were made, optionally of one prompt file."""
        stmt = sa.select(*personas.c).order_by(personas.c.pk)
        if prompt_path is not None:
            stmt = stmt.where(personas.c.prompt_path == prompt_path)
        with self._reading("list personas") as conn:
            return [_record(row._mapping) for row in conn.execute(stmt)]

    def get_persona(self, persona_id_or_prefix: str) -> PersonaRecord:
        """The persona with this id, or the only one whose id starts with it."""
        key = persona_id_or_prefix.strip()
        if not key:
            raise StoreError("give a persona id, or the first characters of one")
        with self._reading(f"find persona {key}") as conn:
            exact = conn.execute(sa.select(*personas.c).where(personas.c.persona_id == key))
            row = exact.first()
            if row is not None:
                return _record(row._mapping)
            stmt = (
                sa.select(*personas.c)
                .where(personas.c.persona_id.startswith(key, autoescape=True))
                .order_by(personas.c.pk)
                .limit(_SHOWN + 1)
            )
            matches = [_record(found._mapping) for found in conn.execute(stmt)]
        if len(matches) == 1:
            return matches[0]
        if matches:
            shown = ", ".join(m.id for m in matches[:_SHOWN])
            raise StoreError(f"'{key}' is the start of more than one persona id: {shown}")
        raise StoreError(
            f"no persona with id '{key}' in {self.url}; `polygon personas list` shows them"
        )

    def replace_persona(self, record: PersonaRecord) -> None:
        """Overwrite a stored persona (a refresh): same id, new persona and prompt version."""
        values = _row(record)
        del values["persona_id"], values["created_at"]
        stmt = sa.update(personas).where(personas.c.persona_id == record.id).values(**values)
        try:
            with self._engine.begin() as conn:
                updated = conn.execute(stmt).rowcount
        except SQLAlchemyError as exc:
            raise self._failure(f"replace persona {record.id}", exc) from exc
        if updated == 0:
            raise StoreError(f"no persona with id '{record.id}' in {self.url}")

    def mark_persona(
        self, persona_id_or_prefix: str, unrealistic: bool, note: str | None = None
    ) -> PersonaRecord:
        """Mark a stored persona as unrealistic (or realistic again), with an optional note
        saying why; returns the persona as it is now stored. Later runs leave out scenarios
        played by an unrealistic persona unless asked (READ-2)."""
        record = self.get_persona(persona_id_or_prefix)
        text = note.strip() if note is not None else ""
        values = {
            "unrealistic": unrealistic,
            "unrealistic_note": text or None,
            "marked_at": datetime.now(UTC),
        }
        stmt = sa.update(personas).where(personas.c.persona_id == record.id).values(**values)
        try:
            with self._engine.begin() as conn:
                conn.execute(stmt)
        except SQLAlchemyError as exc:
            raise self._failure(f"mark persona {record.id}", exc) from exc
        return record.model_copy(update=values)

    def persona_conversations(self, versions: Mapping[str, str]) -> dict[str, PersonaConversation]:
        """For each persona id in `versions` (id -> current version), one conversation it played.

        The newest run played by the current version wins; else the newest by any version.
        Personas that played no stored call are absent from the result.
        """
        candidates: dict[str, list[tuple[bool, int, str, str]]] = {}
        with self._reading("find the conversations of personas") as conn:
            for age, (run_id, links) in enumerate(_run_links(conn, versions)):
                for scenario_id, persona_id, version in links:
                    current = versions[persona_id] == version
                    # Sorted below: the current version first, then the newest run.
                    entry = (not current, age, run_id, scenario_id)
                    candidates.setdefault(persona_id, []).append(entry)
            found: dict[str, PersonaConversation] = {}
            for persona_id, entries in candidates.items():
                for stale, _, run_id, scenario_id in sorted(entries):
                    conversation = _first_conversation(conn, run_id, scenario_id)
                    if conversation is not None:
                        found[persona_id] = PersonaConversation(
                            run_id=run_id,
                            persona_id=persona_id,
                            current_version=not stale,
                            conversation=conversation,
                        )
                        break
        return found


def _row(record: PersonaRecord) -> dict[str, Any]:
    return {
        "persona_id": record.id,
        "name": record.persona.name,
        "data": record.persona.model_dump_json(),
        "prompt_path": record.prompt_path,
        "prompt_hash": record.prompt_hash,
        "generator": record.generator,
        "created_at": utc(record.created_at),
        "updated_at": utc(record.updated_at),
        "usage": None if record.usage is None else record.usage.model_dump_json(),
        "unrealistic": record.unrealistic,
        "unrealistic_note": record.unrealistic_note,
        "marked_at": None if record.marked_at is None else utc(record.marked_at),
    }


def _record(row: RowMapping) -> PersonaRecord:
    try:
        persona = Persona.model_validate_json(row["data"])
    except ValidationError as exc:
        raise StoreError(
            f"persona {row['persona_id']} does not match this version's format "
            f"({exc.error_count()} errors, first: {exc.errors()[0]['msg']})"
        ) from exc
    return PersonaRecord(
        id=row["persona_id"],
        persona=persona,
        prompt_path=row["prompt_path"],
        prompt_hash=row["prompt_hash"],
        generator=row["generator"],
        created_at=row["created_at"],
        updated_at=row["updated_at"],
        usage=_usage(row["usage"]),
        unrealistic=bool(row["unrealistic"]),
        unrealistic_note=row["unrealistic_note"],
        marked_at=row["marked_at"],
    )


def _usage(text: str | None) -> PersonaUsage | None:
    """A persona's stored usage; an unreadable one is shown as unknown, never an error."""
    if text is None:
        return None
    try:
        return PersonaUsage.model_validate_json(text)
    except ValidationError:
        return None


def _run_links(
    conn: Connection, wanted: Collection[str]
) -> Iterable[tuple[str, list[tuple[str, str, str]]]]:
    """(run id, [(scenario, persona, version)]) of the runs that played wanted personas, newest."""
    stmt = sa.select(runs.c.id, runs.c.config).order_by(runs.c.started_at.desc(), runs.c.id.desc())
    for run_id, config in conn.execute(stmt):
        entries = config.get("personas") if isinstance(config, dict) else None
        links = [
            (str(e.get("scenario")), str(e.get("persona")), str(e.get("version")))
            for e in entries or ()
            if isinstance(e, dict) and e.get("persona") in wanted
        ]
        if links:
            yield run_id, links


def _first_conversation(
    conn: Connection, run_id: str, scenario_id: str
) -> ConversationResult | None:
    stmt = (
        sa.select(conversations.c.data)
        .where(conversations.c.run_id == run_id, conversations.c.scenario_id == scenario_id)
        .order_by(conversations.c.idx, conversations.c.pk)
        .limit(1)
    )
    data = conn.execute(stmt).scalar_one_or_none()
    if data is None:
        return None
    try:
        return ConversationResult.model_validate_json(data)
    except ValidationError:
        return None  # a record of an older format: sampling shows another or none

"""The personas browser's data: filters, staleness, and every stored call a persona played."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from polygon_voice.scenario.persona_refs import persona_version
from polygon_voice.scenario.personas import persona_status, prompt_hash_of
from polygon_voice.store import PersonaRecord, Store

FILTERS = ("type", "outcome", "difficulty", "staleness", "realism")
STALENESS = ("stale", "current")
REALISM = ("unrealistic", "realistic")


@dataclass(frozen=True)
class PersonaRow:
    """A stored persona and its status against its prompt file as it is now."""

    record: PersonaRecord
    status: str  # current, stale or missing (the prompt file is gone)

    @property
    def stale(self) -> bool:
        """Whether its prompt changed since it was made (SIM-3); a gone file counts too."""
        return self.status != "current"


@dataclass(frozen=True)
class PlayedCall:
    """One stored conversation a persona played."""

    run_id: str
    conversation_id: str
    scenario_id: str
    end_reason: str
    turn_count: int
    current_version: bool  # played by the persona as it is stored now


def persona_rows(records: Iterable[PersonaRecord]) -> list[PersonaRow]:
    """The personas with their status; each prompt file is hashed once."""
    listed = list(records)
    hashes = {path: prompt_hash_of(path) for path in {r.prompt_path for r in listed}}
    return [PersonaRow(r, persona_status(r.prompt_hash, hashes[r.prompt_path])) for r in listed]


def filter_rows(rows: Sequence[PersonaRow], chosen: Mapping[str, str]) -> list[PersonaRow]:
    """The rows that match every chosen filter (an empty value matches all)."""
    return [row for row in rows if all(_matches(row, k, v) for k, v in chosen.items() if v)]


def _matches(row: PersonaRow, name: str, value: str) -> bool:
    persona = row.record.persona
    if name == "type":
        return persona.type.value == value
    if name == "outcome":
        return persona.intended_outcome.value == value
    if name == "difficulty":
        return str(persona.difficulty) == value
    if name == "staleness":
        return ("stale" if row.stale else "current") == value
    if name == "realism":
        return ("unrealistic" if row.record.unrealistic else "realistic") == value
    return True


def played_calls(store: Store, record: PersonaRecord) -> list[PlayedCall]:
    """Every stored conversation this persona played, newest run first.

    A run records which stored persona played which scenario in its config (`personas`);
    the conversations of those scenarios in that run are the persona's.
    """
    current = persona_version(record.persona)
    calls: list[PlayedCall] = []
    for run in store.list_runs():
        entries = run.config.get("personas")
        versions = {
            str(entry.get("scenario")): str(entry.get("version")) == current
            for entry in entries or ()
            if isinstance(entry, dict) and entry.get("persona") == record.id
        }
        if not versions:
            continue
        for summary in store.iter_summaries(run.id):
            if summary.scenario_id in versions:
                calls.append(
                    PlayedCall(
                        run_id=run.id,
                        conversation_id=summary.id,
                        scenario_id=summary.scenario_id,
                        end_reason=summary.end_reason,
                        turn_count=summary.turn_count,
                        current_version=versions[summary.scenario_id],
                    )
                )
    return calls

"""The persona glue `polygon run` uses: a suite's `persona_ref`s filled in from the database,
the caller model's client when a scenario has `caller: llm`, and what a run records."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from polygon_voice.caller.llm import llm_caller_client
from polygon_voice.cli.common import fail
from polygon_voice.llm import LLMClient, LLMConfigError, load_llm_config
from polygon_voice.model import Persona, Suite
from polygon_voice.scenario import LoadedSuite, SuiteError
from polygon_voice.scenario.persona_refs import (
    persona_links,
    resolve_persona_refs,
    uses_stored_personas,
)
from polygon_voice.store import RunRecord, Store, StoreError


def with_stored_personas(store: Store, loaded: LoadedSuite) -> LoadedSuite:
    """The suite with its `persona_ref`s filled in from the database; exits when one is unknown."""
    if not uses_stored_personas(loaded.suite):
        return loaded

    def lookup(persona_id: str) -> Persona:
        try:
            record = store.get_persona(persona_id)
        except StoreError as exc:
            raise LookupError(str(exc)) from exc
        if record.id != persona_id:  # a prefix: a suite must name the persona exactly
            raise LookupError(f"no persona has this id (did you mean {record.id}?)")
        return record.persona

    try:
        return resolve_persona_refs(loaded, lookup)
    except SuiteError as exc:
        fail(str(exc))


def caller_client_for(loaded: LoadedSuite, llm_config: Path | None) -> LLMClient | None:
    """The caller model's client when a scenario has `caller: llm`; exits when none is set up."""
    try:
        return llm_caller_client(loaded.suite, load_llm_config(llm_config))
    except LLMConfigError as exc:
        fail(f"{loaded.path}: {exc}")


def run_persona_config(suite: Suite) -> dict[str, Any]:
    """What a run records of its stored personas: which one (and version) played which scenario."""
    links = persona_links(suite)
    return {"personas": links} if links else {}


def check_resumed_personas(record: RunRecord, loaded: LoadedSuite) -> None:
    """Exit when a stored persona of the run changed (refreshed) since the run started."""
    if record.config.get("personas", []) != persona_links(loaded.suite):
        fail(
            f"run {record.id} was started with other versions of its stored personas "
            "(refreshed since?); start a new run instead"
        )

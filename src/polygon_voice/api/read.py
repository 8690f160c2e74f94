"""Reading what a run stored: one call whole (turns, tool calls, state updates, writes); the
names the checks give root causes."""

from __future__ import annotations

from typing import TYPE_CHECKING

from polygon_voice.api.errors import InputError

if TYPE_CHECKING:
    from polygon_voice.model import ConversationResult
    from polygon_voice.store import Store


def read_conversation(
    run_id: str, conversation_id: str, *, store: Store | None = None, db: str | None = None
) -> ConversationResult:
    """The stored record of one call (`CallResult.id`) of run `run_id` (an id or a unique
    prefix): every turn with what was said and heard, the tool calls with their lifecycle,
    the state updates and the backend writes — what `polygon show RUN --conversation ID`
    prints. Read from `store`, or from `db` (default: POLYGON_DB or .polygon/polygon.db).
    InputError when the run or the call is not stored."""
    from polygon_voice.api.run import open_store
    from polygon_voice.store import StoreError

    opened = store if store is not None else open_store(db)
    try:
        run = opened.get_run(run_id)
        return opened.get_conversation(run.id, conversation_id)
    except StoreError as exc:
        raise InputError(str(exc)) from None
    finally:
        if store is None:
            opened.close()


def root_causes() -> dict[str, str | None]:
    """Every root cause the three-layer checks can name (`CallResult.root_cause`), with the
    layer it says to repair (None for `unclassified`), in the fix list's order."""
    from polygon_voice.checks.causes import LAYERS

    return {cause: layer.value if layer is not None else None for cause, layer in LAYERS.items()}

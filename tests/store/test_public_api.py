"""The names the runner and the CLI import from polygon_voice.store."""

from __future__ import annotations

import polygon_voice.store as store


def test_public_api_is_pinned() -> None:
    assert set(store.__all__) == {
        "DB_ENV",
        "RUN_STATUSES",
        "ConversationSummary",
        "PersonaConversation",
        "PersonaRecord",
        "PersonaUsage",
        "RunRecord",
        "RunStatus",
        "Store",
        "StoreError",
        "list_runs_read_only",
        "mask_url",
        "new_persona_id",
        "new_run_id",
        "resolve_db_url",
    }
    for name in store.__all__:
        assert hasattr(store, name)


def test_new_run_id_is_short_hex_and_fresh() -> None:
    ids = {store.new_run_id() for _ in range(100)}
    assert len(ids) == 100
    assert all(len(run_id) == 12 and int(run_id, 16) >= 0 for run_id in ids)

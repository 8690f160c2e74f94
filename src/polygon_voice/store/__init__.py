"""The results database: runs, conversations, personas (SQLite by default, PostgreSQL by URL)."""

from polygon_voice.store.errors import StoreError
from polygon_voice.store.records import (
    RUN_STATUSES,
    ConversationSummary,
    PersonaConversation,
    PersonaRecord,
    RunRecord,
    RunStatus,
    new_persona_id,
    new_run_id,
)
from polygon_voice.store.store import Store
from polygon_voice.store.urls import DB_ENV, mask_url, resolve_db_url

__all__ = [
    "DB_ENV",
    "RUN_STATUSES",
    "ConversationSummary",
    "PersonaConversation",
    "PersonaRecord",
    "RunRecord",
    "RunStatus",
    "Store",
    "StoreError",
    "mask_url",
    "new_persona_id",
    "new_run_id",
    "resolve_db_url",
]

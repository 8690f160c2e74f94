"""The results database: runs, conversations, personas (SQLite by default, PostgreSQL by URL)."""

from typing import TYPE_CHECKING

from polygon_voice._lazy import lazy_exports

if TYPE_CHECKING:
    from polygon_voice.store.errors import StoreError
    from polygon_voice.store.fast_read import list_runs_read_only
    from polygon_voice.store.records import (
        ConversationSummary,
        PersonaConversation,
        PersonaRecord,
        PersonaUsage,
        new_persona_id,
    )
    from polygon_voice.store.run_record import RUN_STATUSES, RunRecord, RunStatus, new_run_id
    from polygon_voice.store.store import Store
    from polygon_voice.store.urls import DB_ENV, mask_url, resolve_db_url
else:
    # Each name's module is imported when the name is first read.
    __getattr__, __dir__ = lazy_exports(
        __name__,
        {
            "polygon_voice.store.errors": ("StoreError",),
            "polygon_voice.store.fast_read": ("list_runs_read_only",),
            "polygon_voice.store.records": (
                "ConversationSummary",
                "PersonaConversation",
                "PersonaRecord",
                "PersonaUsage",
                "new_persona_id",
            ),
            # Apart from the conversation records: listing runs builds no conversation model.
            "polygon_voice.store.run_record": (
                "RUN_STATUSES",
                "RunRecord",
                "RunStatus",
                "new_run_id",
            ),
            "polygon_voice.store.store": ("Store",),
            "polygon_voice.store.urls": ("DB_ENV", "mask_url", "resolve_db_url"),
        },
    )

__all__ = [
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
]

"""Fixtures shared with the conversation and store tests."""

from tests.conversation.conftest import run_call
from tests.store.conftest import db_url, store

__all__ = ["db_url", "run_call", "store"]

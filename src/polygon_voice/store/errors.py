"""The one error the store raises to its callers."""

from __future__ import annotations


class StoreError(Exception):
    """A results-database problem, with a message fit to show the user as is."""


class ConversationExists(StoreError):
    """The run already holds a conversation with this id: a conversation is stored once."""

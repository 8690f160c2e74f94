"""The LLM client's errors: each says what went wrong and where, never with an API key."""

from __future__ import annotations


class LLMError(Exception):
    """Base of every error the LLM client raises."""


class LLMConfigError(LLMError, ValueError):
    """The LLM configuration is wrong or incomplete (names the file or variable and the field)."""


class LLMRequestError(LLMError):
    """A request failed for good: not retryable, or still failing after the last retry."""

    def __init__(
        self, message: str, *, endpoint: str, status: int | None = None, attempts: int = 1
    ) -> None:
        super().__init__(message)
        self.endpoint = endpoint
        self.status = status
        self.attempts = attempts


class LLMFormatError(LLMError):
    """The model's answer cannot be read: not JSON, not valid for the schema, or not a completion.

    `raw` keeps the text as received, so a judge can record what the model really said.
    """

    def __init__(self, message: str, *, raw: str) -> None:
        super().__init__(message)
        self.raw = raw


def redact(text: str, *secrets: str | None) -> str:
    """`text` with every occurrence of each (non-empty) secret replaced by `***`."""
    for secret in secrets:
        if secret:
            text = text.replace(secret, "***")
    return text

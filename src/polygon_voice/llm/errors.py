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


class LLMCutOffError(LLMFormatError):
    """The answer could not be read because it stopped at the token limit (`finish_reason:
    length`): asked again, a model may well finish; the message names the setting to raise."""


class ModelUnavailable(LLMError):
    """The model behind an agent Polygon runs (a `prompt:FILE` agent) could not answer.

    An infrastructure failure — the endpoint kept failing or refused, no key, the `llm` extra
    missing — not something the agent under test did. The engine ends the call with the
    message `agent raised ModelUnavailable: ...`; `is_model_unavailable` tells such an end
    from an agent's own error.
    """


MODEL_UNAVAILABLE_PREFIX = f"agent raised {ModelUnavailable.__name__}: "
"""How the end message of a call whose agent's model failed begins (see ModelUnavailable)."""


def is_model_unavailable(message: str | None) -> bool:
    """Whether a call's end message says the agent's model failed (infrastructure)."""
    return bool(message) and str(message).startswith(MODEL_UNAVAILABLE_PREFIX)


def redact(text: str, *secrets: str | None) -> str:
    """`text` with every occurrence of each (non-empty) secret replaced by `***`."""
    for secret in secrets:
        if secret:
            text = text.replace(secret, "***")
    return text


def on_one_line(text: str, limit: int = 300) -> str:
    """A server's message as a log line shows it: whitespace runs (a pydantic error's line
    breaks, a traceback's indentation) and characters that do not print (a terminal's
    escapes) made one space, cut at `limit` characters. Stored errors keep the whole text;
    only what scrolls past on the screen is shortened."""
    flat = " ".join("".join(c if c.isprintable() else " " for c in text).split())
    return flat if len(flat) <= limit else flat[:limit] + "..."

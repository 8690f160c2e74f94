"""What can go wrong when a suite is run through the library, and the exit code of each.

Standard library only: the command, the agents and the runner import this module without
loading anything else. The library raises these errors and never exits; `polygon` maps each
to its exit code (docs/cli.md, "Exit codes"), and those codes are stable.
"""

from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    """The exit codes of `polygon`; stable, documented in docs/cli.md."""

    OK = 0
    VERDICTS_FAILED = 1  # --fail-on, --min-composite, --gate, `polygon gate`
    BAD_INPUT = 2  # a bad file, an unknown run, a setup that cannot work (preflight)
    INFRASTRUCTURE = 3  # a model or endpoint failed for calls during the run
    INTERRUPTED = 130  # Ctrl-C; finished calls are stored and the run can be resumed


class PolygonError(Exception):
    """Base of the errors the library raises for a person to act on; `str()` says what to do."""

    exit_code: ExitCode = ExitCode.BAD_INPUT


class InputError(PolygonError):
    """A file, option or id that is wrong: the message names the file, line and field."""


class SetupError(PolygonError):
    """A configuration that cannot work: a model not named, a key missing, an endpoint down."""


class InfrastructureError(PolygonError):
    """A model or endpoint could not be reached or kept failing: not the agent's behaviour.

    An agent (or its adapter) that cannot reach its own model or service raises this (or a
    subclass); the engine records it as `agent raised <class name>: …`, and a run with such
    calls counts them as infrastructure failures of the agent (exit 3), not as verdicts.
    """

    exit_code = ExitCode.INFRASTRUCTURE


class RunInterrupted(PolygonError):
    """The run was interrupted (Ctrl-C); its finished calls are stored and it can resume."""

    exit_code = ExitCode.INTERRUPTED

    def __init__(self, message: str, *, run_id: str) -> None:
        super().__init__(message)
        self.run_id = run_id


# Exceptions that mean "the agent's model or service could not be reached", by class name as
# the engine records them (`agent raised NAME: …`): the LLM client's request and
# configuration errors (a prompt agent's model down, its key missing), an HTTP agent that
# refused the connection, and InfrastructureError with its subclasses named here.
AGENT_INFRASTRUCTURE_ERRORS = frozenset(
    {
        "InfrastructureError",
        "ModelUnavailable",
        "LLMRequestError",
        "LLMConfigError",
        "HttpAgentUnreachable",
    }
)


def agent_infrastructure_error(end_message: str) -> str | None:
    """The error of a call that ended because the agent's model or service could not be
    reached (from the call's end message); None for any other end, an agent bug among them."""
    prefix = "agent raised "
    if not end_message.startswith(prefix):
        return None
    name, _, detail = end_message[len(prefix) :].partition(":")
    if name not in AGENT_INFRASTRUCTURE_ERRORS:
        return None
    return detail.strip() or name

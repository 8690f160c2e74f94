"""The LLM caller: a model plays the persona through the LLM client (SIM-1, SIM-5, USE-5).

Each turn is one structured request, answered as `{"say": str, "end_call": bool}`:
`end_call` true means "say this, then hang up" (the caller hangs up at its next turn, after
the agent's answer to the goodbye; an empty `say` hangs up at once). An empty `say` alone
is silence. Hanging up before any line of its own (`HangUp.never_spoke`) leaves the call
not exercised: the persona never played.

Guard rails (see llm_guard.py): a line that states a number found in no fact, or says the
caller is an AI or a simulation, is not passed on. The model gets one retry with a note
saying why; if that fails too, the caller says a safe line ("Sorry, I don't know.") and the
rejected line is kept in `blocked` and logged.

A model error (LLMError: the endpoint kept failing, an unreadable answer) ends the call
cleanly: the caller hangs up (end reason `caller_hangup`), the error is kept in `errors`,
logged as a warning and noted in the trace (`caller_failed`), so the call counts as not
exercised and is never judged a pass. The LLM caller never barges in: talking over the agent needs
exact timing, which is the scripted caller's job (SIM-5).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict, Field

from polygon_voice.caller.base import CallerMove, CallView, HangUp, Interrupt, Speak, StaySilent
from polygon_voice.caller.llm_guard import check_line, fact_numbers
from polygon_voice.caller.llm_prompt import correction, history, system_prompt
from polygon_voice.llm import LLMClient, LLMConfigError, LLMError, LLMSettings, Usage, make_client
from polygon_voice.model import InterruptPoint, Persona, Scenario, Suite
from polygon_voice.seeding import derive_seed

log = logging.getLogger("polygon_voice.caller")

SAFE_LINES = {
    "en": "Sorry, I don't know.",
    "de": "Entschuldigung, das weiß ich nicht.",
    "hr": "Oprostite, ne znam.",
    "ru": "Извините, я не знаю.",
}


class CallerLine(BaseModel):
    """The model's answer for one turn."""

    model_config = ConfigDict(extra="ignore")

    say: str = Field(default="", max_length=2000)
    end_call: bool = False


@dataclass(frozen=True)
class BlockedLine:
    """A line the guard rails kept from the agent: the turn, the text, and why."""

    turn: int
    text: str
    reason: str


class LLMCaller:
    """Plays `persona` in `language` through `client`; one request per turn (two at most)."""

    def __init__(self, persona: Persona, language: str, client: LLMClient, seed: int) -> None:
        self.persona = persona
        self.language = language
        self.client = client
        self.seed = seed
        # What the runner (or a test) can read after the call.
        self.blocked: list[BlockedLine] = []
        self.errors: list[str] = []
        self._system = system_prompt(persona, language)
        self._allowed = fact_numbers(persona)
        self._hang_up_next = False
        self._spoke = False

    async def reply(self, view: CallView) -> CallerMove:
        """The next line from the model, checked; HangUp after a goodbye or a model error."""
        if self._hang_up_next:
            return HangUp()
        try:
            line = await self._checked_line(view)
        except LLMError as exc:
            self.errors.append(str(exc))
            log.warning("LLM caller hangs up after a model error: %s", exc)
            # Not the caller's choice: the call did not play, so it must not be judged.
            return HangUp(failure=str(exc))
        say = line.say.strip()
        if line.end_call:
            if not say:
                # Hung up before saying a word of its part: its persona never played.
                return HangUp(never_spoke=not self._spoke)
            self._hang_up_next = True
        if not say:
            return StaySilent()
        self._spoke = True
        return Speak(say)

    def barge_in(
        self, point: InterruptPoint, view: CallView, tool: str | None = None
    ) -> Interrupt | None:
        """Never: the LLM caller speaks only on its turn."""
        return None

    async def _checked_line(self, view: CallView) -> CallerLine:
        line = await self._ask(view, attempt=0, note="")
        reason = check_line(line.say, self._allowed)
        if reason is None:
            return line
        retry = await self._ask(view, attempt=1, note=correction(reason))
        second = check_line(retry.say, self._allowed)
        if second is None:
            return retry
        turn = len(view.turns)
        self.blocked.append(BlockedLine(turn=turn, text=retry.say, reason=second))
        log.warning("LLM caller: line blocked at turn %d (%s): %r", turn, second, retry.say)
        return CallerLine(say=SAFE_LINES.get(self.language, SAFE_LINES["en"]))

    async def _ask(self, view: CallView, *, attempt: int, note: str) -> CallerLine:
        messages = [{"role": "system", "content": self._system + note}, *history(view.turns)]
        reply = await self.client.chat(
            messages,
            response_schema=CallerLine,
            # Per turn and attempt: a rerun sends the same requests (and hits the cache).
            seed=derive_seed(self.seed, "llm-caller", len(view.turns), attempt) % 2**31,
        )
        line: CallerLine = reply.parsed
        return line


def no_caller_model(scenario_id: str) -> LLMConfigError:
    """The error for a `caller: llm` scenario when no caller model is configured."""
    return LLMConfigError(
        f"scenario {scenario_id!r} uses `caller: llm`, but no caller model is configured: set "
        "POLYGON_CALLER_MODEL (and POLYGON_CALLER_BASE_URL or POLYGON_BASE_URL for the "
        "endpoint), or llm.caller.model in a config file (see docs/llm.md)"
    )


def llm_caller_client(
    suite: Suite, settings: LLMSettings, *, usage: Usage | None = None
) -> LLMClient | None:
    """The caller role's client when a scenario has `caller: llm`, else None (no model needed).

    Raises LLMConfigError naming the first such scenario when the caller role has no model.
    """
    scenarios = [s.id for s in suite.scenarios if _plays_llm(s)]
    if not scenarios:
        return None
    if not settings.is_configured("caller"):
        raise no_caller_model(scenarios[0])
    return make_client(settings, "caller", usage=usage)


def _plays_llm(scenario: Scenario) -> bool:
    # `auto` never means the model: a model is used only when a scenario asks for it.
    return scenario.caller == "llm"

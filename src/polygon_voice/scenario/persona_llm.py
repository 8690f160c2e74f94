"""One persona from a model: one request per persona (SIM-2), answered as JSON.

The plan fixes type, outcome, difficulty and language; the model invents the person, the
goal and the facts from the agent's prompt. The request's seed is the plan's, so a rerun
with the response cache replays the same persona.
"""

from __future__ import annotations

import logging

from pydantic import BaseModel, ConfigDict, Field

from polygon_voice.llm import ChatReply, LLMClient
from polygon_voice.llm.errors import LLMCutOffError
from polygon_voice.llm.usage import RoleUsage
from polygon_voice.model.persona import FactValue, Outcome, Persona, PersonaType
from polygon_voice.scenario.persona_plan import PersonaPlan

log = logging.getLogger("polygon_voice.personas")
# Seeds every server takes (vLLM and Ollama refuse past int64, some servers past int32).
SEED_RANGE = 2**31
LANGUAGES = {"en": "English", "de": "German", "hr": "Croatian", "ru": "Russian"}
TYPE_MANNER = {
    PersonaType.COOPERATIVE: "friendly and helpful; answers what is asked",
    PersonaType.BUSY: "in a hurry; very short answers, impatient with long questions",
    PersonaType.DISTRUSTFUL: "suspicious; asks why details are needed before giving them",
    PersonaType.CONFUSED: "unsure; mixes things up, gives details one at a time",
    PersonaType.AGGRESSIVE: "annoyed and rude; complains and threatens to hang up",
    PersonaType.CHATTY: "talkative; drifts into side stories, then comes back to the point",
}
OUTCOME_ENDING = {
    Outcome.SUCCESS: "the caller gets what they want and the agent confirms it",
    Outcome.REFUSAL: "the caller changes their mind and declines what the agent offers or asks",
    Outcome.CALLBACK: "the caller cannot finish now and asks to be called back later",
    Outcome.TRANSFER: "the caller insists on a human and is put through to one",
}

_SYSTEM = """You write test callers (personas) for a voice agent that answers phone calls.
Read the agent's prompt and invent ONE realistic person who calls this agent.
Answer with JSON only: {"name": str, "goal": str, "facts": {key: value}}.
- goal: one sentence in the caller's language, as the caller would say what they want,
  concrete (e.g. "Change the quantity of order 5590 to 3."). The intended outcome is given
  separately: do not describe it in the goal.
- facts: every detail the caller knows and the agent may ask for (numbers, dates, names,
  addresses), as snake_case keys with plain values. Every detail in the goal must be a fact.
  Use ISO dates (YYYY-MM-DD). Invent plausible values; never use real people's data."""


class PersonaDraft(BaseModel):
    """What the model answers: the person; the plan adds type, outcome and difficulty."""

    model_config = ConfigDict(extra="ignore")

    name: str = Field(min_length=1, max_length=80)
    goal: str = Field(min_length=1, max_length=600)
    facts: dict[str, FactValue] = Field(default_factory=dict)


def generator_name(client: LLMClient) -> str:
    """How a stored persona names its generator: `llm:<model>`."""
    return f"llm:{client.config.model}"


class NoFacts(ValueError):
    """The model's persona has no facts, twice: a caller with nothing to tell cannot be
    checked against anything (SIM-2), so it is not stored."""


async def llm_persona(
    client: LLMClient, prompt_text: str, plan: PersonaPlan, spent: RoleUsage | None = None
) -> Persona:
    """Ask the model for one persona, and once more when it has no facts or its answer was
    cut off at the token limit; raises LLMError (a failed or unreadable answer) or NoFacts.
    The answers' requests and tokens are added to `spent`, so each stored persona can say
    what it cost."""
    spent = spent if spent is not None else RoleUsage()
    draft = await _first_draft(client, prompt_text, plan, spent)
    facts = usable_facts(draft.facts) if draft is not None else {}
    if draft is None or not facts:
        # Another seed, so a cached or deterministic server does not give the same answer.
        draft = await _draft(client, prompt_text, plan, 1, spent)
        facts = usable_facts(draft.facts)
    if not facts:
        raise NoFacts("the model's persona has no facts (asked twice)")
    return Persona(
        name=draft.name.strip(),
        type=plan.type,
        intended_outcome=plan.outcome,
        difficulty=plan.difficulty,
        goal=draft.goal.strip(),
        facts=facts,
        language=plan.language,
    )


def usable_facts(facts: dict[str, FactValue]) -> dict[str, FactValue]:
    """The facts that tell something: a blank key or a blank text value (`"order_id": ""`,
    as small models fill a template) is no detail the caller could give the agent."""
    return {
        key: value
        for key, value in facts.items()
        if key.strip() and not (isinstance(value, str) and not value.strip())
    }


async def _first_draft(
    client: LLMClient, prompt_text: str, plan: PersonaPlan, spent: RoleUsage
) -> PersonaDraft | None:
    """The first answer, None when it was cut off at the token limit (to be asked again)."""
    try:
        return await _draft(client, prompt_text, plan, 0, spent)
    except LLMCutOffError as cut_off:
        # A small model writing on inside a string: another draw usually ends in time.
        log.info("persona %d: %s; asking once more", plan.index + 1, cut_off)
        return None


async def _draft(
    client: LLMClient, prompt_text: str, plan: PersonaPlan, attempt: int, spent: RoleUsage
) -> PersonaDraft:
    reply = await client.chat(
        [
            {"role": "system", "content": _SYSTEM},
            {"role": "user", "content": _ask(prompt_text, plan)},
        ],
        response_schema=PersonaDraft,
        seed=(plan.seed + attempt) % SEED_RANGE,
    )
    _count(client, reply, spent)
    draft: PersonaDraft = reply.parsed
    return draft


def _count(client: LLMClient, reply: ChatReply, spent: RoleUsage) -> None:
    """One answered request into `spent`, priced as the client prices its role's calls."""
    spent.calls += 1
    if reply.cached:
        spent.cached_calls += 1
        return
    spent.tokens_in += reply.tokens_in
    spent.tokens_out += reply.tokens_out
    config = client.config
    spent.cost += (
        reply.tokens_in * config.price_in_per_1k + reply.tokens_out * config.price_out_per_1k
    ) / 1000


def _ask(prompt_text: str, plan: PersonaPlan) -> str:
    language = LANGUAGES.get(plan.language, plan.language)
    return (
        f"The agent's prompt:\n<<<\n{prompt_text.strip()}\n>>>\n\n"
        f"Persona number {plan.index + 1}:\n"
        f"- manner ({plan.type.value}): {TYPE_MANNER[plan.type]}\n"
        f"- intended outcome ({plan.outcome.value}): {OUTCOME_ENDING[plan.outcome]}\n"
        f"- difficulty for the agent: {plan.difficulty} of 5\n"
        f"- language: {language}"
    )

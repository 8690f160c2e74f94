"""What the LLM caller sends: a system prompt that casts the persona, and the call so far.

Roles are from the model's side: the model plays the caller, so the caller's own turns are
`assistant` messages (as the JSON it answered) and the agent's turns are `user` messages
(what the caller *heard*, cut where it was cut). Chat templates that insist on alternating
roles get them: a note stands in for the agent's silence between two caller turns, and for
the open line when the caller speaks first.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from polygon_voice.model import Outcome, Persona, PersonaType, Speaker, Turn

LANGUAGES = {"en": "English", "de": "German", "hr": "Croatian", "ru": "Russian"}
CONNECTED = "(The call is connected. The agent has not said anything yet.)"
SILENCE = "(The agent says nothing.)"

_MANNER = {
    PersonaType.COOPERATIVE: "friendly and helpful; you answer what you are asked",
    PersonaType.BUSY: "in a hurry; very short answers, impatient with long questions",
    PersonaType.DISTRUSTFUL: "suspicious; you ask why a detail is needed before you give it",
    PersonaType.CONFUSED: "unsure; you mix things up, give details one at a time, ask again",
    PersonaType.AGGRESSIVE: "annoyed and rude; you complain, and threaten to hang up",
    PersonaType.CHATTY: "talkative; you drift into side stories, then come back to the point",
}
_ENDING = {
    Outcome.SUCCESS: "you get what you want, and the agent confirms it",
    Outcome.REFUSAL: "in the end you change your mind and decline what the agent offers or asks",
    Outcome.CALLBACK: "you cannot finish now: you ask to be called back later",
    Outcome.TRANSFER: "you insist on talking to a human and let the agent put you through",
}
_DIFFICULTY = {
    1: "easy: clear and direct",
    2: "mostly clear, a detail at a time",
    3: "some vagueness; you need a question or two before you are clear",
    4: "hard: vague, you change details, you correct yourself",
    5: "very hard: vague, you change your mind, you contradict yourself once and correct it",
}


def system_prompt(persona: Persona, language: str) -> str:
    """Cast the model as this caller: who, what they want, what they know, the rules."""
    facts = "\n".join(f"- {key}: {value}" for key, value in persona.facts.items()) or "- (none)"
    return f"""You are a person calling a company's phone line. You are the CALLER, not an
assistant. Stay in character for the whole call.

Who you are:
- Name: {persona.name}
- Manner: {_MANNER[persona.type]}
- What you want: {persona.goal or "(decide from your facts)"}
- How the call should end for you: {_ENDING[persona.intended_outcome]}
- How hard you make it for the agent: {persona.difficulty} of 5, {_DIFFICULTY[persona.difficulty]}
- Language: speak only {LANGUAGES.get(language, language)}.

What you know. These facts are the only truth you may state; you know nothing else:
{facts}

Rules:
- Talk like a real person on the phone: short sentences, one thing at a time, sometimes
  a filler word. Never read out lists.
- Never invent a detail: no number, date, name or address that is not in your facts. When
  the agent asks for something you do not know, say that you do not know it.
- If the agent repeats a detail wrongly, correct it.
- Never say or hint that you are an AI, a model, a bot, a simulation or a test. You are a
  real caller.
- When your goal is reached, or the call should end as described above, say a short
  goodbye and set end_call to true.

Answer with JSON only: {{"say": "what you say next", "end_call": false}}.
"say" may be empty to stay silent; end_call true means you hang up after saying it."""


def correction(reason: str) -> str:
    """Added to the system prompt for the one retry of a line the guard rails rejected."""
    return (
        f"\n\nYour previous answer for this turn was rejected: {reason}. "
        "Answer again, keeping to the rules."
    )


def history(turns: Sequence[Turn]) -> list[dict[str, Any]]:
    """The call so far as chat messages, alternating, ending with the agent's side."""
    messages: list[dict[str, Any]] = []
    for turn in turns:
        if turn.speaker is Speaker.CALLER:
            _add(messages, "assistant", json.dumps({"say": turn.text, "end_call": False}))
        elif turn.heard.strip():
            _add(messages, "user", turn.heard)
    if not messages or messages[-1]["role"] == "assistant":
        messages.append({"role": "user", "content": SILENCE if messages else CONNECTED})
    return messages


def _add(messages: list[dict[str, Any]], role: str, content: str) -> None:
    if not messages and role == "assistant":
        messages.append({"role": "user", "content": CONNECTED})
    elif messages and messages[-1]["role"] == role == "user":
        messages[-1]["content"] += " " + content  # two agent turns in a row: one message
        return
    elif messages and messages[-1]["role"] == role:
        messages.append({"role": "user", "content": SILENCE})
    messages.append({"role": role, "content": content})

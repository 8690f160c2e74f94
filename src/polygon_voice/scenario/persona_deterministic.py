"""Personas without a model: the prompt's task and slots, plausible facts, a goal.

The goal is one sentence the caller could say when asked what they want, as in a suite
written by hand ("Change the quantity of order 5590 to 3."): the task as the prompt says
it, with one of its "X or Y" choices made and its order named. In English the changed
detail is named too ("... to 3"); in de, hr and ru the goal says "I'd like to <task>" and
lists the task's details. How the call should end is the persona's `intended_outcome`, not
part of the goal. Languages other than en, de, hr, ru get English goals.
"""

from __future__ import annotations

import re

from polygon_voice.model.persona import FactValue, Outcome, Persona
from polygon_voice.scenario.persona_facts import (
    CALLBACK_TIMES,
    fact_value,
    label,
    pick_name,
)
from polygon_voice.scenario.persona_plan import PersonaPlan
from polygon_voice.scenario.prompt_reading import PromptReading, drop_alternative, find_slots
from polygon_voice.seeding import rng_for

GENERATOR = "deterministic"

_NO_TASK = {
    "en": "get help with my request",
    "de": "Hilfe bei meinem Anliegen bekommen",
    "hr": "dobiti pomoć oko svog zahtjeva",
    "ru": "получить помощь по своему вопросу",
}
_WANT = {"de": "Ich möchte {task}", "hr": "Želim {task}", "ru": "Я хочу {task}"}
# Slots that say which record the call is about, rather than what changes.
_IDENTIFIERS = ("order_id", "customer_id")
_ORDER = re.compile(r"\b(?:an?|the|your|my) order\b", re.IGNORECASE)
_SETS_TO = re.compile(r"^(?:change|update|move|set|reschedule|correct)\b", re.IGNORECASE)
_BOOKS_FOR = re.compile(r"^(?:book|reserve|schedule|make)\b", re.IGNORECASE)


def deterministic_persona(reading: PromptReading, plan: PersonaPlan) -> Persona:
    """One persona from the prompt's reading, for the plan's type, outcome and difficulty."""
    rng = rng_for(plan.seed, "deterministic-persona")
    language = plan.language
    name = pick_name(rng, language)
    task, dropped = _choose_alternatives(reading, rng.random())
    facts: dict[str, FactValue] = {}
    for slot in reading.slots:
        if slot.name not in dropped:
            facts[slot.name] = fact_value(slot.name, rng, language, name)
    if plan.outcome is Outcome.CALLBACK:
        facts["callback_time"] = CALLBACK_TIMES.get(language, CALLBACK_TIMES["en"])
    return Persona(
        name=name,
        type=plan.type,
        intended_outcome=plan.outcome,
        difficulty=plan.difficulty,
        goal=_goal(task, facts, language),
        facts=facts,
        language=language,
    )


def _choose_alternatives(reading: PromptReading, draw: float) -> tuple[str, set[str]]:
    """The task with one slot kept of each "X or Y" group, and the slots dropped."""
    task, dropped = reading.task, set[str]()
    for group in reading.alternatives:
        keep = group[int(draw * len(group)) % len(group)]
        for name in group:
            if name != keep:
                task = drop_alternative(task, name)
                dropped.add(name)
    return task, dropped


def _goal(task: str, facts: dict[str, FactValue], language: str) -> str:
    """One sentence the caller could say: what they want, with the details that say which."""
    if language not in _WANT:
        return _english_goal(task or _NO_TASK["en"], facts)
    task = task or _NO_TASK[language]
    if language == "de":
        task = re.sub(r"\bzu (\w+)$", r"\1", task)  # "... zu ändern" -> "Ich möchte ... ändern"
    named = {slot.name for slot in find_slots(task)} | set(_IDENTIFIERS)
    details = [f"{label(key, language)} {value}" for key, value in facts.items() if key in named]
    text = _WANT[language].format(task=task)
    return f"{text}: {', '.join(details)}." if details else f"{text}."


def _english_goal(task: str, facts: dict[str, FactValue]) -> str:
    """ "change the quantity of an order" -> "Change the quantity of order 5590 to 3."."""
    if "order_id" in facts:
        task = _ORDER.sub(f"order {facts['order_id']}", task, count=1)
    changed = [
        slot.name
        for slot in find_slots(task)
        if slot.name in facts and slot.name not in _IDENTIFIERS
    ]
    if len(changed) == 1:
        if _SETS_TO.match(task):
            task += f" to {facts[changed[0]]}"
        elif _BOOKS_FOR.match(task):
            task += f" for {facts[changed[0]]}"
    return task[:1].upper() + task[1:].rstrip(".") + "."

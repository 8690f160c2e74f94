"""The persona caller: plays a persona from its facts, type and difficulty; no model (SIM-5).

Each reply reads the agent's last turn (what the caller heard of it, `caller.intents`) and
answers in character:

* the first reply states the goal in the caller's words (`caller.goal`) with as many
  facts as the type and difficulty give up front; a distrustful caller first asks who
  it is talking to and gives nothing until the agent identifies itself;
* a question about a fact is answered with exactly that fact; a question about
  anything else gets "I don't know" (or "I'd rather not say" for personal data); a
  wrong read-back is corrected — the caller never says a number that is not its fact;
* the intended outcome decides the ending: success says goodbye once the agent
  reports the goal done, refusal declines the first proposal, callback and transfer
  ask for a call back or a human after a reply or two (or at the first proposal); a
  caller that said its last line hangs up on its next turn, and every caller hangs up
  after its turn budget;
* type and difficulty (`caller.traits`) add what makes the caller itself: fillers,
  digressions, impatience, hostility, asking again, mixing facts up, talking over the
  agent.

Every choice draws from `rng_for(seed, "reply", n)` (or `"barge_in"`, `"plan"`), so the
same seed and the same agent give the same call. Scripted `events` (a scenario's
`barge_in` steps) fire at their points before the caller's own interruptions.
"""

from __future__ import annotations

import random
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from polygon_voice.caller.base import CallerMove, CallView, HangUp, Interrupt, Speak
from polygon_voice.caller.events import BargeInQueue
from polygon_voice.caller.facts import (
    Register,
    answer_fact,
    canonical,
    is_identifying,
    is_private,
    say_fact,
    spoken,
)
from polygon_voice.caller.goal import goal_facts, topic_line, topic_of, usable_goal
from polygon_voice.caller.intents import Heard, hear, normalise, vocabulary
from polygon_voice.caller.phrases import Lines, caller_language, phrases_for
from polygon_voice.caller.traits import traits_for
from polygon_voice.model import BargeInStep, InterruptPoint, Speaker
from polygon_voice.model.persona import FactValue, Outcome, Persona, PersonaType
from polygon_voice.seeding import rng_for

_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_NUMBER = re.compile(r"(\d+)(?:[.,]\d+)?")
DEFAULT_NAME = "caller"


@dataclass
class _State:
    """What the caller remembers of the call."""

    trusted: bool
    replies: int = 0
    since_open: int = 0
    opened: bool = False
    asked_who: bool = False
    withheld: int = 0
    asked_why: bool = False
    clarified: int = 0
    clarified_last: bool = False
    annoyance: int = 0
    closing: bool = False
    human_asks: int = 0
    mid_points: int = 0
    interrupts: int = 0
    told: set[str] = field(default_factory=set)
    asked: Counter[str] = field(default_factory=Counter)
    used: set[str] = field(default_factory=set)
    last_said: str = ""
    last_heard: str = ""
    seen: int = 0  # turns of the call the caller has taken in
    goal_done: bool = False  # the agent reported the goal done (maybe in a turn cut short)


class PersonaCaller:
    """Plays `persona` in `language` (en, de, hr, ru), deterministically from `seed`."""

    def __init__(
        self,
        persona: Persona,
        language: str,
        seed: int,
        events: Sequence[BargeInStep] | None = None,
    ) -> None:
        self.persona = persona
        self.language = caller_language(language)
        self._say = phrases_for(self.language)
        self._traits = traits_for(persona.type, persona.difficulty)
        self._seed = seed
        self._facts = facts_of(persona)
        self._order = fact_order(persona.type, list(self._facts))
        self._words = vocabulary(self.language, list(self._facts))
        self._events = BargeInQueue(events or ())
        self._goal_keys = goal_keys(persona.goal, self._facts, self.language)
        self._state = _State(trusted=persona.type is not PersonaType.DISTRUSTFUL)
        # A callback or transfer is asked for on the 1st or 2nd reply after the opening.
        self._end_after = (
            1 if persona.type is PersonaType.AGGRESSIVE else rng_for(seed, "plan").randint(1, 2)
        )

    # --- the Caller protocol ------------------------------------------------------

    async def reply(self, view: CallView) -> CallerMove:
        """The caller's answer to the agent's last turn, or a hang-up."""
        state = self._state
        state.replies += 1
        if state.closing or state.replies > self._traits.budget:
            return HangUp()
        rng = rng_for(self._seed, "reply", state.replies)
        heard = hear(agent_speech(view), self._words)
        self._note_done(view)
        lines = self._respond(heard, view, rng)
        state.last_heard, state.seen = heard.text, len(view.turns)
        return Speak(self._speak(lines, rng))

    def _note_done(self, view: CallView) -> None:
        """Remember a "done" from any agent turn since the last reply, cut short or not."""
        for turn in view.turns[self._state.seen :]:
            if turn.speaker is Speaker.AGENT and hear(turn.heard, self._words).done:
                self._state.goal_done = True

    def barge_in(
        self, point: InterruptPoint, view: CallView, tool: str | None = None
    ) -> Interrupt | None:
        """A scripted event for this point, else (mid-speech only) the caller's own cut-in."""
        scripted = self._events.fire(point, tool)
        if scripted is not None:
            self._state.last_said = scripted.text or self._state.last_said
            return scripted
        if point is not InterruptPoint.MID_SPEECH or not self._may_interrupt(view):
            return None
        self._state.mid_points += 1
        rng = rng_for(self._seed, "barge_in", self._state.mid_points)
        if rng.random() >= self._traits.interrupt:
            return None
        self._state.interrupts += 1
        return Interrupt(" ".join(self._interjection(rng)))

    def unfired(self) -> list[BargeInStep]:
        """Scripted events whose point never came."""
        return self._events.pending

    # --- one reply ---------------------------------------------------------------

    def _respond(self, heard: Heard, view: CallView, rng: random.Random) -> list[str]:
        state = self._state
        if not state.trusted:
            return self._distrust(heard, rng)
        if not state.opened:
            return self._open(heard, rng, self._lead(rng))
        state.since_open += 1
        mood, stop = self._mood(heard, view, rng)
        if stop:
            return mood
        return mood + self._answer_turn(heard, rng)

    def _answer_turn(self, heard: Heard, rng: random.Random) -> list[str]:
        if heard.empty:
            return [rng.choice(self._say.still_there)]
        if heard.goodbye:
            return self._close([rng.choice(self._say.bye)])
        if heard.repeat and not heard.asked:
            return [rng.choice(self._say.repeat_leads), self._state.last_said]
        ending = self._ending(heard, rng)
        if ending is not None:
            return ending
        if heard.asked:
            return self._answer(heard.asked, rng)
        if heard.unknown is not None:
            return [self._unknown(heard.unknown, rng)]
        if heard.proposal:
            return self._accept(heard, rng)
        return self._carry_on(heard, rng)

    def _ending(self, heard: Heard, rng: random.Random) -> list[str] | None:
        """The intended outcome's move, when this turn calls for it."""
        outcome = self.persona.intended_outcome
        if outcome is Outcome.SUCCESS:
            finished = heard.done or (self._state.goal_done and not heard.asked)
            return self._goodbye(heard, rng) if finished else None
        if outcome is Outcome.REFUSAL:
            if heard.proposal or heard.done:
                return self._close([rng.choice(self._say.refuse)])
            return None
        due = self._state.since_open >= self._end_after or heard.proposal or heard.done
        if outcome is Outcome.CALLBACK:
            return self._callback(rng) if due else None
        if self._state.human_asks and heard.asked:
            return None  # asked for a human already; a question on the way still gets answered
        return self._ask_for_human(rng) if due or self._state.human_asks else None

    def _goodbye(self, heard: Heard, rng: random.Random) -> list[str]:
        wrong = self._wrong(heard, rng)
        if wrong is not None:
            return wrong
        if self._traits.terse:
            return self._close([rng.choice(self._say.bye)])
        lines = [rng.choice(self._say.nothing_else)] if heard.anything_else else []
        return self._close([*lines, rng.choice(self._say.thanks_bye)])

    def _callback(self, rng: random.Random) -> list[str]:
        lines = [rng.choice(self._say.callback)]
        phone = next((k for k in self._order if canonical(k) == "phone"), None)
        if phone is not None:
            number = spoken(self._facts[phone], self.language)
            lines.append(rng.choice(self._say.callback_number).format(value=number))
            self._state.told.add(phone)
        return self._close(lines)

    def _ask_for_human(self, rng: random.Random) -> list[str]:
        asks = self._state.human_asks
        self._state.human_asks += 1
        if asks == 0:
            return [rng.choice(self._say.transfer)]
        if asks == 1:
            return [rng.choice(self._say.transfer_again)]
        return self._close([rng.choice(self._say.give_up)])

    # --- opening and trust ---------------------------------------------------------

    def _lead(self, rng: random.Random) -> list[str]:
        """How each type starts the call, before the goal."""
        say, kind = self._say, self.persona.type
        if kind is PersonaType.BUSY:
            return []
        if kind is PersonaType.AGGRESSIVE:
            return [rng.choice(say.aggressive_open)]
        if kind is PersonaType.CHATTY:
            return [rng.choice(say.chatty_open)]
        if kind is PersonaType.CONFUSED:
            return [rng.choice(say.hello), rng.choice(say.confused_open)]
        return [rng.choice(say.hello)]

    def _open(self, heard: Heard, rng: random.Random, lead: list[str]) -> list[str]:
        """State the goal and the facts this caller gives up front."""
        state = self._state
        state.opened = True
        ready = self._opening_facts()
        goal, said = self._goal(ready, rng)
        lines = [*lead, goal]
        lines += [self._state_fact(key, rng) for key in ready if key not in said]
        state.told.update(ready)
        asked = [key for key in heard.asked if key not in state.told]
        lines += [self._fact_answer(key, rng) for key in asked]
        state.told.update(asked)
        if self._traits.terse and rng.random() < 0.5:
            lines.append(rng.choice(self._say.busy_tags))
        return lines

    def _opening_facts(self) -> list[str]:
        count = int(self._traits.opening_share * len(self._order) + 0.5)
        ready = self._order[: max(0, count)]
        if self.persona.intended_outcome is Outcome.SUCCESS:
            return ready
        # A caller who will not see it through keeps a fact of the goal back, so the agent
        # has to ask (or propose) before it can act - the moment the ending happens.
        needed = [key for key in self._order if key in self._goal_keys]
        if needed and all(key in ready for key in needed):
            ready.remove(needed[-1])
        return ready

    def _goal(self, ready: list[str], rng: random.Random) -> tuple[str, set[str]]:
        """The goal sentence and the facts it already states."""
        goal = self.persona.goal
        usable = usable_goal(goal, self._facts, self.language, set(ready))
        if usable is not None:
            sentence, said = usable
            if self._traits.terse:  # the task itself, without "I'd like to"
                sentence = goal.strip().rstrip(".!") + "."
            return sentence, said
        topic = topic_of(goal, list(self._facts))
        return topic_line(topic, self.language, rng), set()

    def _distrust(self, heard: Heard, rng: random.Random) -> list[str]:
        """Nothing but "who are you?" until the agent says who it is."""
        state, say = self._state, self._say
        if not state.asked_who:
            state.asked_who = True
            return [rng.choice(say.who_are_you)]
        if heard.identified:
            state.trusted = True
            return self._open(heard, rng, [rng.choice(say.trust)])
        state.withheld += 1
        if state.withheld >= self._traits.withhold_limit:
            return self._close([rng.choice(say.give_up)])
        return [rng.choice(say.withhold)]

    # --- answering -----------------------------------------------------------------

    def _answer(self, asked: Sequence[str], rng: random.Random) -> list[str]:
        """Answer a question about known facts (in character)."""
        state, say, traits = self._state, self._say, self._traits
        repeated = [key for key in asked if state.asked[key] > 0 or key in state.told]
        state.asked.update(asked)
        if traits.asks_why and not state.asked_why and any(map(is_identifying, asked)):
            state.asked_why = True
            return [rng.choice(say.why_needed)]
        if self._asks_again(rng):
            return [rng.choice(say.clarify)]
        lines: list[str] = []
        if repeated and self.persona.type in (PersonaType.BUSY, PersonaType.AGGRESSIVE):
            lines.append(rng.choice(say.already_said))
        lines += self._mixup(asked, rng)
        plain = traits.terse or self.persona.type is PersonaType.AGGRESSIVE
        if not plain and rng.random() < 0.5:
            lines.append(rng.choice(say.answer_leads))
        order = list(reversed(asked)) if self.persona.type is PersonaType.CONFUSED else asked
        lines += [self._fact_answer(key, rng) for key in order]
        state.told.update(asked)
        return lines

    def _asks_again(self, rng: random.Random) -> bool:
        """Confusion: ask back instead of answering (never twice in a row)."""
        state, traits = self._state, self._traits
        if state.clarified_last:
            state.clarified_last = False
            return False
        first = traits.always_clarifies_first and state.clarified == 0
        if first or rng.random() < traits.clarify:
            state.clarified += 1
            state.clarified_last = True
            return True
        return False

    def _mixup(self, asked: Sequence[str], rng: random.Random) -> list[str]:
        """Give another fact first, then notice and correct (only true facts either way)."""
        others = [key for key in self._order if key not in asked]
        if not others or rng.random() >= self._traits.mixup:
            return []
        other = next((key for key in others if key not in self._state.told), others[0])
        self._state.told.add(other)
        return [self._state_fact(other, rng), rng.choice(self._say.mixup_fix)]

    def _unknown(self, key: str, rng: random.Random) -> str:
        lines = self._say.private if is_private(key) else self._say.dont_know
        return rng.choice(lines)

    def _accept(self, heard: Heard, rng: random.Random) -> list[str]:
        """A proposal or read-back: correct it when it is wrong, else agree."""
        wrong = self._wrong(heard, rng)
        if wrong is not None:
            return wrong
        agree = self._say.yes if heard.values else self._say.accept
        untold = [key for key in heard.mentioned if key not in self._state.told]
        self._state.told.update(untold)
        return [rng.choice(agree), *(self._state_fact(key, rng) for key in untold)]

    def _wrong(self, heard: Heard, rng: random.Random) -> list[str] | None:
        """A correction when the agent said a number of a fact's shape but not the fact."""
        for key in self._order:
            value = spoken(self._facts[key], self.language)
            shape = value_shape(value)
            said = [v for v in heard.values if shape is not None and value_shape(v) == shape]
            if said and value not in said:
                self._state.told.add(key)
                return [rng.choice(self._say.no_wrong), self._state_fact(key, rng)]
        return None

    def _carry_on(self, heard: Heard, rng: random.Random) -> list[str]:
        """Nothing to answer: give the next facts, else push for the goal."""
        untold = [key for key in self._order if key not in self._state.told]
        if untold:
            chosen = untold[: self._traits.volunteer]
            self._state.told.update(chosen)
            return [self._state_fact(key, rng) for key in chosen]
        if self.persona.type is PersonaType.CONFUSED and rng.random() < 0.5:
            return [rng.choice(self._say.lost)]
        return [rng.choice(self._say.push)]

    # --- moods -----------------------------------------------------------------------

    def _mood(self, heard: Heard, view: CallView, rng: random.Random) -> tuple[list[str], bool]:
        """Impatience (busy) and hostility (aggressive) at a slow or repeating agent."""
        if heard.empty:
            return [], False
        trying = self._slow(view) or self._repeats(heard)
        if self._traits.patience and trying:
            self._state.annoyance += 1
            # Out of patience, unless the agent just got it done: then grumble and say bye.
            done = heard.done and self.persona.intended_outcome is Outcome.SUCCESS
            if done:
                return [rng.choice(self._say.about_time)], False
            if self._state.annoyance >= self._traits.patience:
                return self._close([rng.choice(self._say.give_up)]), True
            return [rng.choice(self._say.impatient)], False
        if self.persona.type is PersonaType.AGGRESSIVE and trying:
            return [rng.choice(self._say.hostile)], False
        return [], False

    def _slow(self, view: CallView) -> bool:
        """The agent kept the caller waiting, or talked too long, since the caller spoke."""
        since, words, speaking = 0.0, 0, 0.0
        for turn in reversed(view.turns):
            if turn.speaker is Speaker.CALLER:
                since = turn.end
                break
            words += len(turn.heard.split())
            speaking += turn.end - turn.start
        waited = view.now - since - speaking
        return waited > self._traits.slow_seconds or words > self._traits.long_words

    def _repeats(self, heard: Heard) -> bool:
        """The agent asks again for a fact it was given, or says the same thing again."""
        again = any(key in self._state.told for key in heard.asked)
        return again or overlap(heard.text, self._state.last_heard) >= 0.8

    # --- interruptions -------------------------------------------------------------

    def _may_interrupt(self, view: CallView) -> bool:
        """Only with something to say: the goal, an untold fact, or (difficulty 4+) a nudge."""
        state = self._state
        if state.closing or not state.trusted or state.interrupts >= self._traits.max_interrupts:
            return False
        if state.human_asks:
            return False  # it asked to be put through: talking over the hand-over would stop it
        if not state.opened:
            return self.persona.type is PersonaType.AGGRESSIVE
        if any(key not in state.told for key in self._order):
            return True
        # A nudge ("Just do it!") makes no sense once the agent said it is done.
        return self.persona.difficulty >= 4 and not hear(last_agent_turn(view), self._words).done

    def _interjection(self, rng: random.Random) -> list[str]:
        """What the caller says over the agent: its opening, a fact, or impatience."""
        say, kind = self._say, self.persona.type
        lead = [rng.choice(say.interrupt_leads)] if kind is PersonaType.AGGRESSIVE else []
        state = self._state
        if not state.opened:
            lines = [*lead, *self._open(Heard(text=""), rng, [])]
        else:
            state.since_open += 1  # a cut-in is a turn of its own
            lines = [*lead, *self._cut_in(rng)]
        state.last_said = " ".join(lines)
        return lines

    def _cut_in(self, rng: random.Random) -> list[str]:
        """A caller who wants a human demands one; others push their next fact, or nudge."""
        state = self._state
        wants_human = self.persona.intended_outcome is Outcome.TRANSFER
        if wants_human and state.since_open >= self._end_after:
            return self._ask_for_human(rng)
        untold = [key for key in self._order if key not in state.told]
        if untold:
            state.told.add(untold[0])
            return [self._state_fact(untold[0], rng)]
        return [rng.choice(self._nudges())]

    def _nudges(self) -> Lines:
        say = self._say
        return {
            PersonaType.AGGRESSIVE: say.just_do_it,
            PersonaType.BUSY: say.impatient,
            PersonaType.CONFUSED: say.clarify,
            PersonaType.CHATTY: say.digressions,
        }.get(self.persona.type, say.push)

    # --- speaking ----------------------------------------------------------------------

    def _state_fact(self, key: str, rng: random.Random) -> str:
        register: Register = "terse" if self._traits.terse else "state"
        return say_fact(key, self._facts[key], self.language, rng, register)

    def _fact_answer(self, key: str, rng: random.Random) -> str:
        register: Register = "terse" if self._traits.terse else "state"
        return answer_fact(key, self._facts[key], self.language, rng, register)

    def _close(self, lines: list[str]) -> list[str]:
        """The caller's last words: it hangs up on its next turn."""
        self._state.closing = True
        return lines

    def _speak(self, lines: list[str], rng: random.Random) -> str:
        self._state.last_said = " ".join(lines)
        return " ".join(self._decorate(lines, rng))

    def _decorate(self, lines: list[str], rng: random.Random) -> list[str]:
        """Phone speech: extra details, digressions, hostility and fillers, by type."""
        traits, say, out = self._traits, self._say, list(lines)
        state = self._state
        # Last words stay last; the opening already has its type's own start.
        last = len(out) - 1 if state.closing else len(out)
        ordinary = state.since_open > 0 and not state.closing
        if state.opened and rng.random() < traits.extra and not state.closing:
            self._insert_fresh(out, say.extras, last, rng)
        if rng.random() < traits.digression:
            first = 1 if state.since_open == 0 and len(out) > 1 else 0  # after the greeting
            self._insert_fresh(out, say.digressions, rng.randint(first, max(first, last)), rng)
        hostile = rng.random() < traits.hostility
        if hostile and ordinary and not set(out) & set(say.hostile):
            out.insert(0, rng.choice(say.hostile))
        if out and rng.random() < traits.filler:
            # Nobody hesitates over "hello": the filler goes before what comes after it.
            at = 1 if len(out) > 1 and out[0] in (*say.hello, *say.chatty_open) else 0
            out[at] = f"{rng.choice(say.fillers)} {out[at]}"
        return out

    def _insert_fresh(self, out: list[str], lines: Lines, at: int, rng: random.Random) -> None:
        """Insert a line not said before in this call (nobody tells the same story twice)."""
        fresh = [line for line in lines if line not in self._state.used]
        if fresh:
            line = rng.choice(fresh)
            self._state.used.add(line)
            out.insert(at, line)


def facts_of(persona: Persona) -> dict[str, FactValue]:
    """The persona's facts; its name counts as one when it has a real name and no name fact."""
    facts = dict(persona.facts)
    named = any(canonical(key) == "name" for key in facts)
    if persona.name != DEFAULT_NAME and persona.name.strip() and not named:
        facts["name"] = persona.name
    return facts


def goal_keys(goal: str, facts: dict[str, FactValue], language: str) -> set[str]:
    """The facts the goal needs: those its text names, else all but contact details."""
    named = goal_facts(goal, facts, language) or set()
    return named or {key for key in facts if not is_private(key)} or set(facts)


def fact_order(kind: PersonaType, keys: list[str]) -> list[str]:
    """The order facts come out in: as written, but back to front for a confused caller."""
    return list(reversed(keys)) if kind is PersonaType.CONFUSED else keys


def agent_speech(view: CallView) -> str:
    """What the caller heard of the agent since it last spoke."""
    parts: list[str] = []
    for turn in reversed(view.turns):
        if turn.speaker is Speaker.CALLER:
            break
        parts.append(turn.heard)
    return " ".join(reversed(parts)).strip()


def last_agent_turn(view: CallView) -> str:
    """What the caller heard of the agent's latest turn, even if the caller cut in after it."""
    return next((t.heard for t in reversed(view.turns) if t.speaker is Speaker.AGENT), "")


def value_shape(value: str) -> str | None:
    """A number's kind for read-back checks: a date, a long number (ids), a short one."""
    if _DATE.fullmatch(value):
        return "date"
    match = _NUMBER.fullmatch(value)
    if match is None:
        return None
    return "long" if len(match.group(1)) >= 4 else "short"


def overlap(first: str, second: str) -> float:
    """Shared words over the longer text's words (0..1)."""
    a, b = normalise(first).split(), normalise(second).split()
    longer = max(len(a), len(b))
    if longer == 0:
        return 0.0
    return sum((Counter(a) & Counter(b)).values()) / longer

"""Each language speaks its own phrases, and the caller understands agents in each."""

from __future__ import annotations

import re

import pytest

from polygon_voice.caller.facts import FORMS
from polygon_voice.caller.goal import TOPICS
from polygon_voice.caller.intents import normalise
from polygon_voice.caller.phrases import LANGUAGES, PHRASES
from polygon_voice.model import EndReason, Outcome, PersonaType, Speaker
from tests.caller.agents import LINES, FormAgent
from tests.caller.conftest import call, caller_lines, persona, said_any

GOALS = {
    "en": "Change the quantity of order 5590 to 3.",
    "de": "Die Menge der Bestellung 5590 auf 3 ändern.",
    "hr": "Promijeniti količinu narudžbe 5590 na 3.",
    "ru": "Изменить количество в заказе 5590 на 3.",
}


def vocabulary(language: str) -> set[str]:
    """Every word the caller's tables hold for a language."""
    lines: list[str] = []
    for value in vars(PHRASES[language]).values():
        lines += value if isinstance(value, tuple) else [value]
    for form in FORMS.values():
        lines += [*form.state[language], form.terse[language]]
    for topic in TOPICS.values():
        lines += topic[language]
    return set(normalise(" ".join(lines)).split())


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize("kind", list(PersonaType))
def test_a_caller_speaks_only_its_own_language(language: str, kind: PersonaType) -> None:
    own = vocabulary(language)
    for seed in range(3):
        who = persona(type=kind, goal=GOALS[language], difficulty=3)
        result = call(FormAgent(language=language), who, language=language, seed=seed)
        assert result.end.reason is EndReason.AGENT_HANGUP
        for line in caller_lines(result):
            words = set(normalise(line).split()) - {"5590", "3"}
            assert words <= own, (line, words - own)
            if language == "ru":
                assert not re.search(r"[A-Za-z]", line), line


@pytest.mark.parametrize("language", ["de", "hr", "ru"])
def test_languages_do_not_borrow_each_others_lines(language: str) -> None:
    english = vocabulary("en") - vocabulary(language)
    lines = [
        line
        for seed in range(5)
        for kind in PersonaType
        for line in caller_lines(
            call(
                FormAgent(language=language),
                persona(type=kind, goal=GOALS[language]),
                language=language,
                seed=seed,
            )
        )
    ]
    assert not {w for line in lines for w in normalise(line).split()} & english


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize(
    ("outcome", "agent_line"),
    [
        ("success", "done"),
        ("refusal", "bye"),
        ("callback", "callback"),
        ("transfer", "transfer"),
    ],
)
def test_every_ending_works_in_every_language(
    language: str, outcome: Outcome, agent_line: str
) -> None:
    phrases = PHRASES[language]
    endings = {
        "success": (*phrases.thanks_bye, *phrases.bye),
        "refusal": phrases.refuse,
        "callback": phrases.callback,
        "transfer": phrases.transfer,
    }
    for seed in range(3):
        who = persona(goal=GOALS[language], intended_outcome=outcome)
        result = call(FormAgent(language=language), who, language=language, seed=seed)
        assert said_any(caller_lines(result)[-1], endings[outcome])
        agent_lines = [t.text for t in result.turns if t.speaker is Speaker.AGENT]
        wanted = LINES[language][agent_line].split(":")[0]
        assert any(line.startswith(wanted) for line in agent_lines)


@pytest.mark.parametrize("language", LANGUAGES)
def test_fillers_are_the_languages_own(language: str) -> None:
    fillers = PHRASES[language].fillers
    lines = [
        line
        for seed in range(10)
        for line in caller_lines(
            call(
                FormAgent(language=language),
                persona(type="confused", goal=GOALS[language]),
                language=language,
                seed=seed,
            )
        )
    ]
    assert any(filler in line for filler in fillers for line in lines)
    others = {f for lang in LANGUAGES if lang != language for f in PHRASES[lang].fillers}
    assert not any(f in line for f in others - set(fillers) for line in lines)


@pytest.mark.parametrize("language", LANGUAGES)
def test_the_distrustful_caller_asks_who_it_is_in_every_language(language: str) -> None:
    who = persona(type="distrustful", goal=GOALS[language])
    lines = caller_lines(call(FormAgent(language=language), who, language=language))
    assert said_any(lines[0], PHRASES[language].who_are_you)
    assert "5590" not in lines[0]

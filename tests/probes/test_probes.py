"""Behaviour probes: polarity, N/A, Wilson intervals, the deterministic rules, promotion."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import yaml

from polygon_voice.judge import V2, load_rubric
from polygon_voice.model import CallStatus, EndReason, ProbeAnswer, Speaker, Turn
from polygon_voice.probes import (
    BUILTIN_PROBES,
    Probe,
    ProbeError,
    ProbeInput,
    PromotionError,
    load_probes,
    tally,
    to_criterion,
    to_gate,
    wilson_interval,
    wording_hash,
)
from polygon_voice.probes.deterministic import answer_rule
from polygon_voice.probes.promote import renormalised
from polygon_voice.probes.stats import Compliance
from tests.judge.calls import call, conversation, good_call, turns, write


def answer(value: str, polarity: str = "desired") -> ProbeAnswer:
    return ProbeAnswer.model_validate(
        {"id": "p", "hash": "h", "polarity": polarity, "answer": value, "source": "llm"}
    )


# -- polarity and N/A (PROBE-1, -2) ---------------------------------------------------------


def test_desired_probe_complies_on_yes() -> None:
    c = tally([answer("yes"), answer("yes"), answer("no")])
    assert (c.yes, c.no, c.right) == (2, 1, 2)
    assert c.rate == pytest.approx(2 / 3)


def test_guardrail_probe_complies_on_no() -> None:
    c = tally([answer("yes", "guardrail"), answer("no", "guardrail"), answer("no", "guardrail")])
    assert c.right == 2
    assert c.rate == pytest.approx(2 / 3)


def test_not_applicable_leaves_the_denominator() -> None:
    c = tally([answer("yes"), *[answer("not_applicable")] * 5])
    assert (c.applicable, c.na, c.rate) == (1, 5, 1.0)
    none = tally([answer("not_applicable")])
    assert none.rate is None
    assert none.interval is None
    assert none.text() == "n/a (n=0)"


# -- Wilson 95 % (PROBE-4), against the textbook formula written out independently ------------


def textbook_wilson(k: int, n: int) -> tuple[float, float]:
    # Wilson (1927): (k + z²/2 ± z·sqrt(k(n-k)/n + z²/4)) / (n + z²), z = Φ⁻¹(0.975).
    z = 1.959963984540054
    root = z * math.sqrt(k * (n - k) / n + z * z / 4)
    return (k + z * z / 2 - root) / (n + z * z), (k + z * z / 2 + root) / (n + z * z)


@pytest.mark.parametrize(("k", "n"), [(3, 4), (0, 10), (10, 10)])
def test_wilson_matches_the_textbook_formula(k: int, n: int) -> None:
    low, high = wilson_interval(k, n) or (-1.0, -1.0)
    want_low, want_high = textbook_wilson(k, n)
    assert low == pytest.approx(max(0.0, want_low), abs=1e-12)
    assert high == pytest.approx(min(1.0, want_high), abs=1e-12)


def test_wilson_known_values_and_display() -> None:
    assert wilson_interval(3, 4) == pytest.approx((0.3006, 0.9544), abs=1e-4)
    assert wilson_interval(0, 10) == pytest.approx((0.0, 0.2775), abs=1e-4)
    assert wilson_interval(10, 10) == pytest.approx((0.7225, 1.0), abs=1e-4)
    assert wilson_interval(0, 0) is None
    assert Compliance(yes=3, no=1, na=0, right=3).text() == "75 % (30-95 %, n=4)"


# -- definitions and wording hash (PROBE-5) -------------------------------------------------


def test_hash_ignores_whitespace_but_not_wording() -> None:
    assert wording_hash("Did the agent  ask\nagain?") == wording_hash(" Did the agent ask again? ")
    assert wording_hash("Did the agent ask again?") != wording_hash("Did the agent re-ask?")


def test_probe_file_loads_and_refuses_bad_fields(tmp_path: Path) -> None:
    good = tmp_path / "probes.yaml"
    good.write_text(
        yaml.safe_dump(
            {
                "probes": [
                    {"id": "a", "question": "Q?", "polarity": "desired", "applies_when": "x"},
                    {"id": "b", "question": "R?", "polarity": "guardrail",
                     "rule": "promise_without_tool_call"},
                ]
            }
        )
    )  # fmt: skip
    a, b = load_probes(good)
    assert (a.source, b.source, a.applies_when) == ("llm", "deterministic", "x")
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump([{"id": "a", "question": "Q?", "polarity": "maybe"}]))
    with pytest.raises(ProbeError, match=r"bad.yaml:2:13: \[0\]\.polarity: one of"):
        load_probes(bad)


# -- the deterministic probes: positive, negative, not applicable ---------------------------


def rule(name: str, *args: object) -> str:
    result = args[0]
    return answer_rule(name, ProbeInput(result)).answer  # type: ignore[arg-type]


def garbled_call(reply: str) -> object:
    lines = turns(
        ("agent", "What is your order number?"),
        ("caller", "It is five five nine zero."),
        ("agent", reply),
    )
    lines[1] = Turn(**{**lines[1].model_dump(), "heard": "eat is hive high"})
    return conversation(lines)


def test_asked_again_after_garbled() -> None:
    assert rule("asked_again_after_garbled", garbled_call("Sorry, could you repeat that?")) == "yes"
    assert rule("asked_again_after_garbled", garbled_call("What is your order number?")) == "yes"
    assert rule("asked_again_after_garbled", garbled_call("Great, it is updated.")) == "no"
    assert rule("asked_again_after_garbled", good_call()) == "not_applicable"


def test_nothing_recognisable_heard_is_garbled() -> None:
    lines = turns(("agent", "Your name?"), ("caller", "Anna Miller."), ("agent", "Thanks."))
    lines[1] = Turn(**{**lines[1].model_dump(), "heard": "..."})
    assert rule("asked_again_after_garbled", conversation(lines)) == "no"


def test_gave_reason_for_refusal() -> None:
    why = turns(("caller", "Cancel it."), ("agent", "I can't, because it has already shipped."))
    bare = turns(("caller", "Cancel it."), ("agent", "Unfortunately I cannot do that."))
    assert rule("gave_reason_for_refusal", conversation(why)) == "yes"
    assert rule("gave_reason_for_refusal", conversation(bare)) == "no"
    assert rule("gave_reason_for_refusal", good_call()) == "not_applicable"
    handoff = turns(("caller", "Change it."), ("agent", "Let me transfer you."))
    assert rule("gave_reason_for_refusal", conversation(handoff, end=EndReason.TRANSFERRED)) == "no"


def test_promise_without_tool_call() -> None:
    early = turns(("caller", "Change 5590 to 3."), ("agent", "Done, it is updated."))
    assert rule("promise_without_tool_call", conversation(early)) == "yes"
    assert rule("promise_without_tool_call", good_call()) == "no"
    chat = turns(("caller", "Hi."), ("agent", "Hello, how can I help?"))
    assert rule("promise_without_tool_call", conversation(chat)) == "not_applicable"
    failed = turns(("caller", "Change it."), ("agent", "x"), ("agent", "All set, order updated."))
    c1 = call("c1", {"quantity": 3}, at=1.0, status=CallStatus.FAILED)
    assert rule("promise_without_tool_call", conversation(failed, calls=[c1])) == "yes"


def test_confirmed_value_differs() -> None:
    assert rule("confirmed_value_differs", good_call()) == "no"
    lines = turns(
        ("caller", "Change order 5590 to 3."), ("agent", "One moment."),
        ("agent", "Done: order 5590 now has 4 items."),
    )  # fmt: skip
    c1 = call("c1", {"order_id": "5590", "quantity": 3}, at=3.0)
    wrong = conversation(lines, calls=[c1], writes=[write("5590", "quantity", 3, at=3.5)])
    assert rule("confirmed_value_differs", wrong) == "yes"
    chat = turns(("caller", "Hi."), ("agent", "Hello."))
    assert rule("confirmed_value_differs", conversation(chat)) == "not_applicable"


def test_builtin_probes_are_labelled_deterministic() -> None:
    assert {p.source for p in BUILTIN_PROBES} == {"deterministic"}
    assert {p.polarity for p in BUILTIN_PROBES} == {"desired", "guardrail"}
    assert all(t.speaker is Speaker.AGENT for t in good_call().turns[3:4])


# -- promotion (PROBE-6) --------------------------------------------------------------------


def test_promotion_to_a_criterion_makes_a_new_rubric_version(tmp_path: Path) -> None:
    probe = BUILTIN_PROBES[1]
    made = to_criterion(V2, probe, "gives_reasons", 10)
    assert made.rubric.version != V2.version
    assert made.rubric.weights["gives_reasons"] == 10
    assert sum(made.rubric.weights.values()) == 100
    path = made.write(tmp_path / "r.yaml")
    assert load_rubric(str(path)).version == made.rubric.version  # loadable, same version
    other = to_criterion(V2, probe, "gives_reasons", 20)
    assert other.rubric.version != made.rubric.version


def test_promotion_to_a_gate_and_refusals() -> None:
    probe = Probe("p", "Did it?", "guardrail", rule="promise_without_tool_call")
    gated = to_gate(V2, probe)
    assert gated.rubric.version not in (
        "v2",
        to_gate(V2, Probe("p", "Did it so?", "guardrail")).rubric.version,
    )
    assert gated.data["probe_gates"][0]["hash"] == probe.hash
    with pytest.raises(PromotionError):
        to_criterion(V2, probe, "goal_achievement", 10)
    with pytest.raises(PromotionError):
        to_criterion(V2, probe, "new", 95)


def test_renormalised_sums_to_the_room_left() -> None:
    for w in (1, 5, 10, 33, 92):
        scaled = renormalised(V2.weights, w)
        assert sum(scaled.values()) == 100 - w
        assert min(scaled.values()) >= 1

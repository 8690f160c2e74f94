"""What the reference agents understand of a caller, and how they ask again.

The scripted caller says quantities as "change the quantity to 4", "quantity 4" or "make it
4", and the order-line prompt allows order numbers of four or more digits; the reference
agents must follow all of those, or generated personas' calls end in loops that test
nothing.
"""

from __future__ import annotations

import pytest

from polygon_voice.agents.reference.base import REPHRASED
from polygon_voice.agents.reference.parsing import understand
from polygon_voice.api import RunOptions, load_suite, run_suite
from polygon_voice.store import Store


@pytest.mark.parametrize(
    ("said", "expected"),
    [
        ("Change the quantity to 4, please.", {"quantity": 4}),
        ("Quantity 2.", {"quantity": 2}),
        ("Make it 12, please.", {"quantity": 12}),
        ("Please change order 5590 to 3 items.", {"order_id": "5590", "quantity": 3}),
        (
            "Change the quantity of order 38381 to 2. Quickly, please.",
            {"order_id": "38381", "quantity": 2},
        ),
        ("The order number is 68031.", {"order_id": "68031"}),
        ("Make it 2026-12-10.", {"delivery_date": "2026-12-10"}),
        ("It's order 4281, quantity 4281 no wait", {"order_id": "4281"}),
    ],
)
def test_caller_phrasings_are_understood(said: str, expected: dict[str, object]) -> None:
    assert understand(said).values == expected


def test_a_seven_digit_number_is_no_order_number() -> None:
    # A phone or customer number is longer than the order line's numbers.
    assert "order_id" not in understand("Call me on 5551234.").values


def test_a_question_not_followed_is_asked_in_other_words_then_as_at_first() -> None:
    from polygon_voice.agents.reference.robust import RobustAgent

    agent = RobustAgent(None)  # its context is read only once a call is under way
    asked = [getattr(next(iter(agent.proceed())), "text", None) for _ in range(3)]
    first = "Which order is it about? Please tell me the order number."
    assert asked == [first, REPHRASED[first], first]


def test_demo_persona_calls_change_the_backend(tmp_path: object) -> None:
    from pathlib import Path

    from polygon_voice.cli.demo_personas import demo_personas, demo_prompt, write_persona_suite

    out = Path(str(tmp_path))
    with Store(f"sqlite:///{out / 'p.db'}") as store:
        records = demo_personas(store, demo_prompt(out), seed=0)
        suite = write_persona_suite(out, records)
        result = run_suite(
            load_suite(suite), RunOptions(agent="reference:robust", out=out / "r"), store=store
        )
        judged = [
            store.get_stage_result(result.run_id, summary.id, "expect")
            for summary in store.iter_summaries(result.run_id)
        ]
    # Every persona's order ends as its facts ask: the expectation is met, not just stated.
    assert len(judged) == len(records) >= 3
    assert all(data is not None and data.get("met") for data in judged)

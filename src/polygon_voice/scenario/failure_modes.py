"""The failure-mode matrix (SPEC 9.1) as case generators over the order-service domain.

Every subtype of FM-1..4 gets a case, plus combined cases (FM-5). The cases use the
tools and records of the built-in `three-layer` suite, and follow its conventions
(docs/three-layer.md): `setup.action` is the call a correct system makes.

    python -m polygon_voice.scenario.failure_modes > failure-modes.yaml

writes the built-in `failure-modes` suite (a test keeps the shipped file equal to this).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import yaml

Case = dict[str, Any]
EXPECT_ALL = dict.fromkeys(
    (
        "captured",
        "active_state_correct",
        "tool_args_correct",
        "stale_write_prevented",
        "backend_correct",
        "confirmation_matches_backend",
        "should_execute",
    ),
    True,
)
BYE = {"say": "Thanks, bye."}


def update(order: str, **change: Any) -> dict[str, Any]:
    """The wanted update_order call."""
    return {"tool": "update_order", "args": {"order_id": order, **change}}


def refund(order: str, amount: int) -> dict[str, Any]:
    """The wanted issue_refund call."""
    return {"tool": "issue_refund", "args": {"order_id": order, "amount": amount}}


def barge(
    at: str, say: str | None = None, tool: str | None = None, on_call: int | None = None
) -> dict[str, Any]:
    """A barge-in script step."""
    step: dict[str, Any] = {"at": at}
    for key, value in (("say", say), ("tool", tool), ("on_call", on_call)):
        if value is not None:
            step[key] = value
    return {"barge_in": step}


def case(
    case_id: str,
    category: str,
    description: str,
    script: list[dict[str, Any]],
    action: dict[str, Any],
    setup: dict[str, Any] | None = None,
    faults: dict[str, Any] | None = None,
    execute: bool = True,
) -> Case:
    """One case in the schema of SPEC 9.2."""
    built: Case = {
        "id": case_id,
        "category": category,
        "description": description,
        "persona": {"goal": description, "facts": dict(action["args"])},
        "script": [*script, BYE],
        "setup": {**(setup or {}), "action": action},
        "expected": {**EXPECT_ALL, "should_execute": execute},
    }
    if faults:
        built["faults"] = faults
    return built


def correction(field: str, old: Any, new: Any, stage: str) -> dict[str, Any]:
    """The setup of a correction in the seed's schema."""
    return {"field": field, "initial_value": old, "corrected_value": new, "interrupt_stage": stage}


def interruption_cases() -> list[Case]:
    """FM-1: talking over the agent before it finished, while a call is built, right after
    it fired, and background noise that should never have stopped it."""
    return [
        case(
            "fm-int-before-finished",
            "interruption",
            "The caller talks over the read-back with a new quantity.",
            [{"say": "Please change order 5590 to 3 items."}, barge("mid_speech", "No, 4 items.")],
            update("5590", quantity=4),
            correction("quantity", 3, 4, "mid_speech"),
        ),
        case(
            "fm-int-during-tool-prep",
            "interruption",
            "The caller cuts in while the update is being built.",
            [
                {"say": "Please change order 4821 to 6 items."},
                barge("during_tool_prep", "Hold on, 8 items.", "update_order"),
            ],
            update("4821", quantity=8),
            correction("quantity", 6, 8, "during_tool_prep"),
        ),
        case(
            "fm-int-after-tool-fired",
            "interruption",
            "The caller cuts in right after the update was sent.",
            [
                {"say": "Order 5599 should come on 2026-12-15."},
                barge("after_tool_fired", "No, 2026-12-16.", "update_order"),
            ],
            update("5599", delivery_date="2026-12-16"),
            correction("delivery_date", "2026-12-15", "2026-12-16", "after_tool_fired"),
        ),
        case(
            "fm-int-background-noise",
            "interruption",
            "Background noise over the read-back; nobody spoke.",
            [
                {"say": "Please change order 7310 to 2 items."},
                barge("mid_speech"),
                {"say": "Hello? Yes, go ahead."},
            ],
            update("7310", quantity=2),
            {"noise": True, "interrupt_stage": "mid_speech"},
        ),
    ]


def correction_cases() -> list[Case]:
    """FM-2: a changed order number, a new delivery date, a different quantity, negation."""
    prep = "during_tool_prep"
    return [
        case(
            "fm-corr-order-number",
            "correction",
            "The order number changes while the update is built.",
            [
                {"say": "Please change order 4281 to 2 items."},
                barge(prep, "Sorry, it's order 4821.", "update_order"),
            ],
            update("4821", quantity=2),
            correction("order_number", "4281", "4821", prep),
        ),
        case(
            "fm-corr-delivery-date",
            "correction",
            "The delivery date changes while the update is built.",
            [
                {"say": "Order 7130 should come on 2026-12-12."},
                barge(prep, "Sorry, 2026-12-13.", "update_order"),
            ],
            update("7130", delivery_date="2026-12-13"),
            correction("delivery_date", "2026-12-12", "2026-12-13", prep),
        ),
        case(
            "fm-corr-quantity",
            "correction",
            "The quantity changes while the update is built.",
            [
                {"say": "Change order 5590 to 7 items."},
                barge(prep, "Make that 9 items.", "update_order"),
            ],
            update("5590", quantity=9),
            correction("quantity", 7, 9, prep),
        ),
        case(
            "fm-corr-negation",
            "correction",
            "'Send it' followed by 'no, don't'.",
            [
                {"say": "Please refund 35 euros on order 7310."},
                barge(prep, "No, don't do it.", "issue_refund"),
            ],
            refund("7310", 35),
            correction("execute", True, False, prep),
            execute=False,
        ),
    ]


def tool_error_cases() -> list[Case]:
    """FM-3: timeout, empty result, wrong record, backend 500, late success, duplicate."""
    stored_5599 = {
        "order_id": "5599",
        "quantity": 1,
        "delivery_date": "2026-12-10",
        "total": 80,
        "status": "processing",
    }
    return [
        case(
            "fm-te-timeout",
            "tool_error",
            "The update times out and nothing was written.",
            [{"say": "Change order 4281 to 5 items."}],
            update("4281", quantity=5),
            {"fault": "timeout", "tool": "update_order"},
            {"update_order": [{"kind": "timeout", "on_call": 1}]},
        ),
        case(
            "fm-te-empty-result",
            "tool_error",
            "The lookup answers with an empty record.",
            [{"say": "Please add one more item to order 7130."}],
            update("7130", quantity=3),
            {"fault": "empty_result", "tool": "lookup_order"},
            {"lookup_order": [{"kind": "empty_result", "on_call": 1}]},
        ),
        case(
            "fm-te-wrong-record",
            "tool_error",
            "The lookup answers with another order's record.",
            [{"say": "Order 5590 should come on 2026-12-18."}],
            update("5590", delivery_date="2026-12-18"),
            {"fault": "wrong_record", "tool": "lookup_order"},
            {"lookup_order": [{"kind": "wrong_record", "on_call": 1, "record": stored_5599}]},
        ),
        case(
            "fm-te-http-500",
            "tool_error",
            "The refund is booked, but the answer is a 500.",
            [{"say": "Please refund 55 euros on order 7130."}],
            refund("7130", 55),
            {"fault": "http_500", "tool": "issue_refund", "write_lands": True},
            {"issue_refund": [{"kind": "http_500", "on_call": 1, "write_lands": True}]},
        ),
        case(
            "fm-te-late-success",
            "tool_error",
            "The update times out and lands later.",
            [{"say": "Order 5599 should come on 2026-12-11."}],
            update("5599", delivery_date="2026-12-11"),
            {"fault": "late_success", "tool": "update_order"},
            {"update_order": [{"kind": "late_success", "on_call": 1, "latency": 8, "delay": 1}]},
        ),
        case(
            "fm-te-duplicate",
            "tool_error",
            "The network delivers the refund request twice.",
            [{"say": "Please refund 20 euros on order 4821."}],
            refund("4821", 20),
            {"fault": "duplicate_write", "tool": "issue_refund"},
            {"issue_refund": [{"kind": "duplicate_write", "on_call": 1}]},
        ),
    ]


def state_conflict_cases() -> list[Case]:
    """FM-4: transcript, live state and the payload sent can each say something else."""
    return [
        case(
            "fm-sc-two-corrections",
            "state_conflict",
            "Two corrections, one while the update is built and one right after a call fired.",
            [
                {"say": "Please change order 4821 to 2 items."},
                barge("during_tool_prep", "Make that 3 items.", "update_order"),
                barge("after_tool_fired", "No, 4 items after all.", "update_order"),
            ],
            update("4821", quantity=4),
            correction("quantity", 2, 4, "after_tool_fired"),
        ),
    ]


def combined_cases() -> list[Case]:
    """FM-5: a correction arriving during a retry after a tool error."""
    return [
        case(
            "fm-combo-correction-during-retry",
            "correction",
            "The update fails with a 500; the caller corrects while the retry is built.",
            [
                {"say": "Please change order 5590 to 5 items."},
                barge("during_tool_prep", "Actually, 6 items.", "update_order", on_call=2),
            ],
            update("5590", quantity=6),
            {**correction("quantity", 5, 6, "during_tool_prep"), "combined_with": "tool_error"},
            {"update_order": [{"kind": "http_500", "on_call": 1}]},
        ),
    ]


GENERATORS: list[Callable[[], list[Case]]] = [
    interruption_cases,
    correction_cases,
    tool_error_cases,
    state_conflict_cases,
    combined_cases,
]


def failure_mode_matrix() -> list[Case]:
    """Every generated case, in matrix order."""
    return [c for generate in GENERATORS for c in generate()]


def failure_modes_suite(base: dict[str, Any]) -> dict[str, Any]:
    """The matrix as a suite, on the tools and records of `base` (the three-layer suite)."""
    return {
        "name": "failure-modes",
        "description": "Every failure-mode subtype of SPEC 9.1 once, plus combined cases.",
        "agent": base.get("agent"),
        "language": base.get("language", "en"),
        "tools": base["tools"],
        "backend": base["backend"],
        "scenarios": failure_mode_matrix(),
    }


def main() -> None:
    """Print the failure-modes suite as YAML."""
    from polygon_voice.suites import builtin_suite_path

    path = builtin_suite_path("three-layer")
    assert path is not None
    base = yaml.safe_load(path.read_text())
    header = (
        "# Generated by `python -m polygon_voice.scenario.failure_modes`; do not edit by hand.\n"
    )
    sys.stdout.write(header + yaml.safe_dump(failure_modes_suite(base), sort_keys=False, width=100))


if __name__ == "__main__":
    main()

"""`reference:robust` — what the three-layer harness asks of a production agent.

* Every change of its working state gets a new version; a consequential call is built
  from the current version only, and a call built on an older version is cancelled,
  whether it is still prepared or already running.
* A barge-in without words changes nothing: it picks up where it was cut off.
* A tool result is checked before it is used: a record that is empty or is not the
  order asked for is read again.
* Every consequential call carries an idempotency key derived from the state version;
  a retry reuses it, so a retried or duplicated request writes once.
* A critical write is verified by reading the record back, and the caller is told what
  the backend holds, not what the tool's answer claimed. A write that timed out is
  looked for in the backend and, if it is not there, retried under the same key.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from polygon_voice.agents.reference.base import (
    GET_REFUND,
    LOOKUP,
    Pending,
    ReferenceAgent,
    outcome,
)
from polygon_voice.model import Action, Say, ToolError, ToolResult


class RobustAgent(ReferenceAgent):
    """Versioned state, cancellation, checked results, idempotency, verified writes."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.last_action: Pending | None = None

    def idempotency_key(self) -> str:
        """One key per request version: the same version never writes twice."""
        return f"{self.context.conversation_id}:{self.kind}:v{self.version}"

    def retry_key(self, pending: Pending) -> str | None:
        """A retry is the same request."""
        return pending.key

    def on_lookup(self, pending: Pending, result: Any) -> Iterator[Action]:
        """Use the record only if it is the order asked for; else read it again."""
        wanted = self.state.get("order_id")
        if isinstance(result, dict) and result and str(result.get("order_id")) == wanted:
            self.accept_record(result)
            yield from self.proceed()
            return
        yield from self.retry(pending)

    def on_correction(self, said: str) -> Iterator[Action]:
        """Cancel what was built on the old version; rebuild from the new one."""
        yield from self.cancel_action_calls()
        yield from self.restart(said)

    def on_negation(self) -> Iterator[Action]:
        """Nothing goes out after "no, don't"."""
        yield self.set_state("execute", False)
        yield from self.cancel_action_calls()
        self.phase = "cancelled"
        yield Say(text="Okay, I have not changed anything. Is there anything else?")

    def on_noise(self) -> Iterator[Action]:
        """Not an interruption: carry on."""
        if self.phase == "acting" and self.unsent_action() is None and self.record is not None:
            yield from self.act(prefix="Sorry, I was saying: ")
        else:
            yield Say(text="Sorry, there was some noise on the line. Please go on.")

    def act(self, prefix: str = "") -> Iterator[Action]:
        """As the base, remembering the call to verify."""
        for action in super().act(prefix):
            if action.kind == "prepare_tool_call":
                self.last_action = self.pending[action.call_id]
            yield action

    def on_action_result(self, pending: Pending, event: ToolResult) -> Iterator[Action]:
        """A success report is a claim: read the record back before telling the caller."""
        pending.done = True
        self.last_action = pending
        yield from self.verify(event.result)

    def on_action_error(self, pending: Pending, event: ToolError) -> Iterator[Action]:
        """A timeout may still have written: look first. Other errors: retry, same key."""
        self.last_action = pending
        if event.error == "timeout" and pending.tool != "issue_refund":
            pending.done = True
            yield Say(text="The system is slow today. Let me check whether it went through.")
            yield from self.verify(None)
            return
        yield Say(text="Sorry, that did not work. Let me try again.")
        yield from self.retry(pending)

    def verify(self, answer: Any) -> Iterator[Action]:
        """Read back the record the action wrote."""
        self.phase = "verifying"
        if self.kind == "refund":
            refund_id = answer.get("refund_id") if isinstance(answer, dict) else None
            yield from self.call(GET_REFUND, {"refund_id": refund_id}, "verify")
        else:
            yield from self.call(LOOKUP, {"order_id": self.state["order_id"]}, "verify")

    def on_verified(self, pending: Pending, result: Any) -> Iterator[Action]:
        """Confirm what is stored; if the write is not there yet, wait and look again."""
        action = self.last_action
        assert action is not None
        stored = result if isinstance(result, dict) else {}
        if all(str(stored.get(k)) == str(v) for k, v in action.args.items()):
            told = {name: stored.get(name, value) for name, value in action.args.items()}
            yield from self.confirm(outcome(self.kind, told))
            return
        # Not there: send it again under the same key. Should the first request still
        # land, the backend knows the key and writes it once.
        yield from self.retry(action)

"""`reference:flawed` — the seed's rule-based mock pipeline, flaws and all.

It transcribes precisely and handles turn-taking well, but:

1. it never invalidates a tool call that is already built or sent: after a correction
   or a "no, don't" it still sends the call it had prepared, and never cancels one that
   is running (root causes `stale_tool_args`, `inflight_call_not_cancelled`);
2. it re-checks a tool result only when it recognises it as faulty: an error makes it
   retry, but a wrong or empty record is taken as it comes and later arguments are built
   from it (`unchecked_tool_result`);

and, documented here because the reference run needs every root cause to occur:

3. a barge-in without words is taken for the caller objecting to the change being read
   back, so it rolls those fields back to the record's stored values and waits for a go
   (`noise_taken_as_interruption`);
4. it puts no idempotency key on an action, and a retry gets a fresh key of its own, so
   it can never match the request it repeats (`unsafe_retry_after_backend_error`; a
   request delivered twice has no key at all: `missing_idempotency_key`);
5. after a timeout it assumes the backend will finish on its own and confirms at once
   (`confirmed_before_result`);
6. it confirms what it heard the caller ask for, never what the backend reports.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from polygon_voice.agents.reference.base import CHANGE_FIELDS, Pending, ReferenceAgent, outcome
from polygon_voice.model import Action, Say, SendToolCall, ToolError, ToolResult


class FlawedAgent(ReferenceAgent):
    """The mock pipeline of the published reference run."""

    def idempotency_key(self) -> str | None:
        """Flaw 4: no key."""
        return None

    def retry_key(self, pending: Pending) -> str | None:
        """Flaw 4: a key made for the retry, never the one of the request it repeats."""
        return f"{self.context.conversation_id}:retry-{pending.attempt + 1}"

    def on_lookup(self, pending: Pending, result: Any) -> Iterator[Action]:
        """Flaw 2: whatever came back is the caller's order."""
        record = result if isinstance(result, dict) else {}
        returned = record.get("order_id")
        if returned is not None and str(returned) != self.state.get("order_id"):
            yield self.set_state("order_id", str(returned))
        self.accept_record(record)
        yield from self.proceed()

    def on_correction(self, said: str) -> Iterator[Action]:
        """Flaw 1: takes the new value into its state, but sends what it had built."""
        if not self.built_action():
            yield from self.restart(said)  # nothing built yet: turn-taking is its strength
            return
        yield from self.send_what_was_built()
        yield Say(text=f"Understood, {said}.")

    def on_negation(self) -> Iterator[Action]:
        """Flaw 1 again: "no, don't" is noted, and the prepared call goes out anyway."""
        yield self.set_state("execute", False)
        yield from self.send_what_was_built()
        self.phase = "cancelled"
        yield Say(text="Okay, I won't do it. Is there anything else?")

    def send_what_was_built(self) -> Iterator[Action]:
        """Send a prepared action call that a barge-in had held up."""
        unsent = self.unsent_action()
        if unsent is not None:
            unsent.sent = True
            yield SendToolCall(call_id=unsent.call_id)

    def on_noise(self) -> Iterator[Action]:
        """Flaw 3: noise over the read-back reads as "no, not that"."""
        if self.phase == "acting" and self.unsent_action() is None and self.record is not None:
            for name in CHANGE_FIELDS:
                if name in self.state and self.record.get(name) is not None:
                    yield self.set_state(name, self.record[name])
            self.phase = "waiting_go"
        yield Say(text="Sorry, go ahead?")

    def on_action_result(self, pending: Pending, event: ToolResult) -> Iterator[Action]:
        """Flaw 6: confirms what the caller asked for."""
        pending.done = True
        if self.phase == "cancelled":
            return
        yield from self.confirm_what_was_heard()

    def on_action_error(self, pending: Pending, event: ToolError) -> Iterator[Action]:
        """Flaw 5 on a timeout, flaw 4 on any other error."""
        if event.error == "timeout":
            pending.done = True
            yield from self.confirm_what_was_heard()
            return
        yield Say(text="Sorry, that did not work. Let me try again.")
        yield from self.retry(pending)

    def confirm_what_was_heard(self) -> Iterator[Action]:
        """The confirmation, from the caller's own words."""
        if self.kind == "add_one":
            text = f"Done: one more item added to order {self.heard.get('order_id')}."
        else:
            text = outcome(self.kind, self.heard)
        yield from self.confirm(text)

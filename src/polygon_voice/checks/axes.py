"""The six axes of SPEC 9.3, each computed from the trace and the write log (docs/three-layer.md).

Setup keys read: `action` ({tool, args}: the consequential call a correct system makes,
or must not make when `expected.should_execute` is false), `corrected_value` (the new
information a correction or interruption brings) and `noise` (a barge-in without words).

The confirmation (AX-6) is read sentence by sentence with the claim parser
(`checks.claims`): a claim is a value the agent ties to one of the action's fields, in a
sentence that says the change is made or states values without promising, negating or
only acknowledging them; the last such sentence after the action first went out counts.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date
from typing import Any

from polygon_voice.checks.claims import FieldHint, claims_done, field_claims, hints_from_schema
from polygon_voice.checks.evidence import EPS, CaseView, same, tokens
from polygon_voice.model import AxisVerdict, CallStatus, CaseCategory, FaultKind, Turn

SUCCESS_SHAPED = (FaultKind.WRONG_RECORD, FaultKind.EMPTY_RESULT)


def verdict(passed: bool, why: str) -> AxisVerdict:
    """An axis result."""
    return AxisVerdict(passed=passed, why=why)


def captured(view: CaseView) -> AxisVerdict:
    """AX-1: did the agent notice the correction, interruption or faulty result at all?"""
    if view.scenario.category is CaseCategory.TOOL_ERROR:
        return _fault_noticed(view)
    if view.scenario.setup.get("noise"):
        return _noise_ignored(view)
    return _change_noticed(view)


def _change_noticed(view: CaseView) -> AxisVerdict:
    new = view.scenario.setup.get("corrected_value")
    event = event_turn(view)
    if event is None:
        return verdict(False, "the caller never brought the new information")
    for update in view.result.state_updates:
        if update.time >= event.start and same(update.value, new):
            return verdict(
                True, f"state {update.field}={new!r} (v{update.version}) after turn {event.index}"
            )
    return verdict(
        False, f"no state update to {new!r} after the caller said it in turn {event.index}"
    )


def event_turn(view: CaseView) -> Turn | None:
    """The caller turn that carries the correction or interruption."""
    new = view.scenario.setup.get("corrected_value")
    callers = view.caller_turns()
    if isinstance(new, bool) or new is None:
        return next((t for t in callers if t.barge_in), callers[0] if callers else None)
    return next((t for t in callers if str(new).lower() in tokens(t.text)), None)


def _noise_ignored(view: CaseView) -> AxisVerdict:
    for time, actions in noise_responses(view):
        changed = noise_changes(view, time, actions)
        if changed:
            fields = ", ".join(f"{a['field']}={a['value']!r}" for a in changed)
            return verdict(
                False, f"background noise at {time:.2f}s was taken as an interruption: {fields}"
            )
    return verdict(True, "background noise changed nothing in the agent's state")


def noise_responses(view: CaseView) -> list[tuple[float, list[dict[str, Any]]]]:
    """The agent's responses to barge-ins without words."""
    return [
        (time, actions) for time, actions in view.responses_to("barge_in") if _is_noise(view, time)
    ]


def noise_changes(
    view: CaseView, time: float, actions: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """The state updates in a response to noise that really changed a value."""
    before: dict[str, Any] = {}
    for update in view.result.state_updates:
        if update.time < time - EPS:
            before[update.field] = update.value
    return [
        a
        for a in actions
        if a["kind"] == "update_state" and not same(before.get(a["field"]), a["value"])
    ]


def _is_noise(view: CaseView, time: float) -> bool:
    return any(
        e.kind == "barge_in" and e.time == time and e.data.get("text") is None
        for e in view.result.trace
    )


def _fault_noticed(view: CaseView) -> AxisVerdict:
    for call in view.result.tool_calls:
        if call.fault in SUCCESS_SHAPED and not rechecked(view, call.call_id):
            return verdict(
                False, f"{call.fault} from {call.call_id} was used without a second look"
            )
    return verdict(True, "every faulty result was recognised (an error, or read again)")


def rechecked(view: CaseView, call_id: str) -> bool:
    """Whether the agent read again what a faulty call returned (same tool, same arguments)
    before it relied on it: before the next call to the action's tool."""
    calls = view.result.tool_calls
    position = next(i for i, c in enumerate(calls) if c.call_id == call_id)
    faulty = calls[position]
    for later in calls[position + 1 :]:
        if later.tool == view.action_tool:
            return False
        if later.tool == faulty.tool and later.args == faulty.args:
            return True
    return False


def active_state_correct(view: CaseView) -> AxisVerdict:
    """AX-2: does the agent's working state end where the customer wants it?"""
    wanted = dict(view.wanted) if view.should_execute else {"execute": False}
    state = view.final_state()
    wrong = {k: state.get(k) for k, v in wanted.items() if not same(state.get(k), v)}
    if wrong:
        return verdict(False, f"state holds {wrong}, the customer wants {wanted}")
    return verdict(True, f"state holds {wanted}")


def tool_args_correct(view: CaseView) -> AxisVerdict:
    """AX-3: were the action's arguments current and consistent in every call that went out?"""
    calls = view.action_calls()
    if not view.should_execute:
        if calls:
            return verdict(False, f"{calls[0].call_id} went out although the caller called it off")
        return verdict(True, "no action went out, as the caller wanted")
    if not calls:
        return verdict(False, f"no {view.action_tool} call went out")
    for call in calls:
        if not view.args_right(call):
            return verdict(
                False, f"{call.call_id} sent {call.args}, the customer wants {view.wanted}"
            )
        if not view.built_on_current(call):
            current = view.version_at_send(call)
            return verdict(
                False, f"{call.call_id} was built on v{call.state_version}, current was v{current}"
            )
    return verdict(True, f"{len(calls)} call(s) with {view.wanted}, built on the current version")


def stale_write_prevented(view: CaseView) -> AxisVerdict:
    """AX-4: was every write built on stale or wrong state, and every repeat, kept out?"""
    ops = view.write_ops()
    calls = {c.call_id: c for c in view.result.tool_calls}
    if not view.should_execute and ops:
        return verdict(False, f"{ops[0].call_id} wrote although the caller called it off")
    for op in ops:
        call = calls.get(op.call_id)
        if call is not None and call.status is CallStatus.CANCELLED:
            return verdict(
                False, f"{op.call_id} was cancelled, but its write landed at {op.time:.2f}s"
            )
        if call is None or not view.args_right(call) or not view.built_on_current(call):
            args = call.args if call is not None else {}
            return verdict(False, f"{op.call_id} wrote {args} at {op.time:.2f}s from stale state")
    if len(ops) > 1:
        return verdict(False, f"the change was written {len(ops)} times")
    return verdict(True, "nothing stale or repeated reached the backend")


def backend_correct(view: CaseView, gold: dict[str, dict[str, Any]]) -> AxisVerdict:
    """AX-5: does the stored result match the gold replay of what the customer wanted?"""
    stub = view.stub(view.action_tool)
    if stub is None:
        return verdict(False, f"{view.action_tool} is not a stateful tool; nothing to compare")
    stored = view.snapshot(stub.collection)
    if stub.op == "create":
        stored_rows, gold_rows = _rows(stored), _rows(gold)
        if stored_rows != gold_rows:
            return verdict(False, f"{stub.collection} holds {stored_rows}, should hold {gold_rows}")
    elif stored != gold:
        keys = sorted(k for k in set(stored) | set(gold) if stored.get(k) != gold.get(k))
        diff = {k: {"stored": stored.get(k), "gold": gold.get(k)} for k in keys}
        return verdict(False, f"{stub.collection} differs from the gold replay: {diff}")
    return verdict(True, f"{stub.collection} matches the gold replay")


def _rows(records: dict[str, dict[str, Any]]) -> list[str]:
    return sorted(repr(sorted((k, str(v)) for k, v in r.items())) for r in records.values())


def confirmation_matches_backend(view: CaseView) -> AxisVerdict:
    """AX-6: is what the agent told the customer what the backend held when it said so?"""
    stub = view.stub(view.action_tool)
    if not view.should_execute:
        if view.write_ops():
            return verdict(False, "the backend was written although the agent was told not to")
        return verdict(True, "nothing was written, and nothing can have been confirmed")
    claim = find_claim(view)
    if claim is None or stub is None:
        return verdict(False, "the agent never told the caller the stored value")
    said = f"turn {claim.turn.index} says {claim.claimed}"
    if not claim.named:
        said = f"turn {claim.turn.index} says it is done (the request: {claim.claimed})"
    # The claim must be true when it is said, and still true when the call is over.
    for moment, when in ((claim.time, f"at {claim.time:.2f}s"), (None, "at the end")):
        held = stored_claim(view, moment)
        if held is None:
            return verdict(False, f"{said}; {when} the backend held no single match")
        wrong = {k: held.get(k) for k, v in claim.claimed.items() if not same(held.get(k), v)}
        if wrong:
            return verdict(False, f"{said}; {when} the backend held {wrong}")
    return verdict(True, f"{said}, as stored then and after")


@dataclass(frozen=True)
class Sentence:
    """One sentence the agent said: its turn, when it was said, and its words."""

    turn: Turn
    time: float
    text: str


@dataclass(frozen=True)
class Confirmation:
    """The agent's statement of what is stored: the action's values it claims, and whether
    it said the change was made. `named` is False for a bare "done", which claims the
    request itself (the wanted values)."""

    turn: Turn
    time: float
    text: str
    claimed: dict[str, str]
    done: bool
    named: bool = True


def find_claim(view: CaseView) -> Confirmation | None:
    """The agent's last statement of the action's values, or of the change being made, said
    after it first sent a call to the action's tool (an earlier acknowledgement is not it)."""
    if "claim" not in view.memo:
        tried = [c for c in view.result.tool_calls if c.tool == view.action_tool]
        sent = [t for c in tried if (t := view.sent_at(c)) is not None]
        said = [s for s in sentences(view) if sent and s.time >= min(sent) - EPS]
        view.memo["claim"] = _last_statement(view, said) if sent else None
    found: Confirmation | None = view.memo["claim"]
    return found


def done_without_call(view: CaseView) -> Confirmation | None:
    """A "done" the agent said although no call of the action went out: its last statement
    after the caller first spoke, if that says the change was made."""
    if "done_without_call" not in view.memo:
        callers = view.caller_turns()
        said = [s for s in sentences(view) if callers and s.time >= callers[0].start]
        view.memo["done_without_call"] = _last_statement(view, said) if callers else None
    found: Confirmation | None = view.memo["done_without_call"]
    return found if found is not None and found.done else None


def _last_statement(view: CaseView, said: list[Sentence]) -> Confirmation | None:
    hints = claim_hints(view)
    language = view.result.language
    today = _reference_date(view)
    claimable = _claimable_fields(view)
    found: Confirmation | None = None
    for sentence in said:
        done = claims_done(sentence.text, language)
        if sentence.text.rstrip().endswith("?") and not done:
            continue  # a question states nothing
        values = {
            c.field: c.value
            for c in field_claims(sentence.text, hints, language, today)
            if c.field in claimable and not _relative(sentence.text, c.start, c.end)
        }
        if values and (done or not _hedged(sentence.text)):
            found = Confirmation(sentence.turn, sentence.time, sentence.text, values, done)
        elif done:
            found = _bare_done(view, sentence, found, claimable)
    return found


def _bare_done(
    view: CaseView, sentence: Sentence, before: Confirmation | None, claimable: set[str]
) -> Confirmation:
    """A "done" without values claims the values the same turn just named, else the
    request itself."""
    if before is not None and before.turn.index == sentence.turn.index:
        return Confirmation(sentence.turn, sentence.time, sentence.text, before.claimed, True)
    wanted = {k: str(v) for k, v in view.wanted.items() if k in claimable}
    return Confirmation(sentence.turn, sentence.time, sentence.text, wanted, True, named=False)


# A sentence with values that promises, negates, conditions or only acknowledges states
# nothing about what is stored: "I'll change it to 3", "I could not set 3", "Understood, 3".
_HEDGES = re.compile(
    r"n't\b|'ll\b|\b(will|shall|going to|would|could|can|cannot|not|no longer|unable|failed|"
    r"try|trying|let me|about to|once|when|if|as soon as|understood|okay|ok|got it|noted|"
    r"alright|werde|wird|werden|nicht|kein\w*|sobald|wenn|falls|versuche|verstanden|"
    r"ću|će|ćemo|neću|nije|nisam|ne|pokušat\w*|kad|ako|čim|razumijem|"
    r"буду|будет|не|нет|попробую|когда|если|понял\w*|хорошо|ясно)\b",
    re.IGNORECASE,
)


def _hedged(text: str) -> bool:
    return _HEDGES.search(text) is not None


# "one more item", "zwei weitere", "još jedan", "ещё два": an amount of change, not the
# value the field now holds.
_RELATIVE_AFTER = re.compile(
    r"\s*(more|extra|additional|fewer|less|mehr|weitere\w*|zusätzliche\w*|weniger|više|"
    r"dodatn\w*|manje|больше|дополнительн\w*|меньше)\b",
    re.IGNORECASE,
)
_RELATIVE_BEFORE = re.compile(r"\b(another|noch|još|ещё|еще)\s*$", re.IGNORECASE)


def _relative(text: str, start: int, end: int) -> bool:
    before = text[max(0, start - 20) : start]
    return bool(_RELATIVE_AFTER.match(text, end) or _RELATIVE_BEFORE.search(before))


_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[^\d\s])")


def sentences(view: CaseView) -> list[Sentence]:
    """What the agent said, sentence by sentence, each with the time its chunk was said
    (a turn is one response; a confirmation can follow a send within the same turn)."""
    turns = view.agent_turns()
    chunks = [
        (entry.time, str(entry.data.get("text") or ""))
        for entry in view.result.trace
        if entry.source == "agent" and entry.kind == "say"
    ]
    if not chunks:  # an imported call may have turns but no trace of its chunks
        chunks = [(t.start, t.text) for t in turns]
    said: list[Sentence] = []
    for time, text in chunks:
        turn = next((t for t in reversed(turns) if t.start <= time + EPS), None)
        if turn is None:
            continue
        said.extend(Sentence(turn, time, part) for part in _SENTENCE_END.split(text) if part)
    return said


def claim_hints(view: CaseView) -> dict[str, FieldHint]:
    """How each of the action's fields looks: from the tool's JSON Schema, else guessed from
    the wanted value."""
    spec = view.tools.get(view.action_tool)
    hints = hints_from_schema(spec.parameters) if spec is not None else {}
    for name, value in view.wanted.items():
        if hints.get(name, FieldHint("text")).kind == "text":  # a schema may say less
            hints[name] = _guess_hint(value)
    return hints


def _guess_hint(value: Any) -> FieldHint:
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        return FieldHint("text")
    if isinstance(value, int):
        return FieldHint("integer")
    if isinstance(value, float):
        return FieldHint("number")
    if _ISO_DATE.fullmatch(value):
        return FieldHint("date")
    return FieldHint("id") if value.isdigit() else FieldHint("text")


_ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


def _claimable_fields(view: CaseView) -> set[str]:
    """The action's fields a confirmation can state; the record key of an update names which
    record, so the stored record is read for it instead."""
    stub = view.stub(view.action_tool)
    key = stub.key if stub is not None and stub.op != "create" else None
    return {name for name in view.wanted if name != key}


def _reference_date(view: CaseView) -> date | None:
    """The scenario's "today", for dates said without a year: the earliest date the case's
    records or its action carry."""
    found = [
        str(v)
        for r in view.initial.get(_collection(view), {}).values()
        for v in r.values()
        if isinstance(v, str) and _ISO_DATE.fullmatch(v)
    ]
    found += [str(v) for v in view.wanted.values() if isinstance(v, str) and _ISO_DATE.fullmatch(v)]
    try:
        return min(date.fromisoformat(v) for v in found) if found else None
    except ValueError:
        return None


def setup_names(field: Any, name: str) -> bool:
    """Whether the setup's `field` is the argument `name`."""
    # The seed's schema calls the order number `order_number`; tools call it `order_id`.
    return field == name or (field == "order_number" and name == "order_id")


def _collection(view: CaseView) -> str:
    stub = view.stub(view.action_tool)
    return stub.collection if stub is not None else ""


def stored_claim(view: CaseView, moment: float | None) -> dict[str, Any] | None:
    """What the backend held for the customer's target at a moment (None: at the end)."""
    stub = view.stub(view.action_tool)
    assert stub is not None
    records = view.snapshot(stub.collection, until=moment)
    if stub.op == "create":
        created = [r for k, r in records.items() if k not in view.initial.get(stub.collection, {})]
        return created[0] if len(created) == 1 else None
    return records.get(str(view.wanted.get(stub.key)))

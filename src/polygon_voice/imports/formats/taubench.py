"""tau-bench (v1) trajectories: `{task_id, reward, info: {task: {user_id, actions, instruction,
outputs}, reward_info, ...}, traj: [chat messages], trial}`, one record per trajectory (a
results file is a JSON list of them).

The conversation is `traj`, OpenAI chat messages, read by the `openai` format's builder; a tool
message whose text starts with "Error" is tau-bench's way of saying the tool refused, so that
call is a failed call. The system message (the agent's policy) is kept as metadata `system`;
`task_id`, `trial`, `reward` and `info` (the instruction, the gold actions, reward_info) are kept
as metadata too. The label (`reward`) is kept, never used to judge.

The gold actions become the call's `expect:`. tau-bench's reward compares the database after
the agent's calls with the database after the gold calls: a read (get_*, search_*, list_*,
calculate, think) changes nothing, and nor does a failed call, so only *completed writes* can
make the two differ. The expectation is therefore `tools.exactly` over the gold writes, with
all of the domain's write tools watched (`exactly_among`), so that an extra or a wrong write
breaks it just as it breaks tau-bench's database comparison; `outputs` (facts the agent must
say) become `says`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from polygon_voice.imports.base import (
    ImportedCall,
    RecordError,
    check_counts,
    expect_type,
    join_path,
    json_args,
    show,
)
from polygon_voice.imports.formats._vendor import (
    RecordFormat,
    as_object,
    identifier,
    item_list,
    objects,
    required_text,
    unmapped,
)
from polygon_voice.imports.formats.openai import _Builder as ChatBuilder

NAME = "taubench"
ERROR_PREFIX = "Error"

# The tools that change tau-bench's database, per domain (tau_bench/envs/<domain>/tools).
WRITE_TOOLS: dict[str, frozenset[str]] = {
    "airline": frozenset(
        {
            "book_reservation",
            "cancel_reservation",
            "update_reservation_flights",
            "update_reservation_baggages",
            "update_reservation_passengers",
            "send_certificate",
        }
    ),
    "retail": frozenset(
        {
            "cancel_pending_order",
            "modify_pending_order_address",
            "modify_pending_order_items",
            "modify_pending_order_payment",
            "modify_user_address",
            "return_delivered_order_items",
            "exchange_delivered_order_items",
        }
    ),
}
# Reads only one domain has: with the writes, they tell the domain from the tool names.
DOMAIN_READS: dict[str, frozenset[str]] = {
    "airline": frozenset(
        {
            "get_reservation_details",
            "search_direct_flight",
            "search_onestop_flight",
            "list_all_airports",
        }
    ),
    "retail": frozenset(
        {
            "find_user_id_by_email",
            "find_user_id_by_name_zip",
            "get_order_details",
            "get_product_details",
            "list_all_product_types",
        }
    ),
}
# In a domain Polygon does not know, a tool named like this is taken as a read.
READ_PREFIXES = ("get_", "search_", "list_", "find_")
READ_NAMES = frozenset({"calculate", "think", "transfer_to_human_agents"})


def detect(record: object) -> bool:
    return isinstance(record, dict) and "task_id" in record and isinstance(record.get("traj"), list)


def parse(record: object) -> ImportedCall:
    top = as_object(record, "(record)")
    task_id = identifier(top.get("task_id"), "task_id")
    trial = _trial(top.get("trial"))
    messages = item_list(top.get("traj"), "traj")
    call = ChatBuilder("traj").build(scoped_tool_ids(messages))
    call.source_format = NAME
    call.call_id = f"tau-{task_id}" if trial is None else f"tau-{task_id}-t{trial}"
    for tool_call in call.tool_calls:
        if isinstance(tool_call.result, str) and tool_call.result.startswith(ERROR_PREFIX):
            tool_call.error = tool_call.result
    info = top.get("info")
    task = _task(info)
    call.metadata.update(unmapped(top, ["traj"]))
    if task is not None:
        used = {tool_call.tool for tool_call in call.tool_calls}
        call.expect = gold_expect(task, used)
    return check_counts(call)


def scoped_tool_ids(messages: list[Any]) -> list[Any]:
    """The messages with each reused tool call id made unique.

    tau-bench's recorded trajectories reuse a tool call id later in the same conversation (each
    call is answered by the very next message), so an id names the latest call that has it:
    the second call with id X becomes `X#2`, and the results after it follow. The id in the
    record is kept in the call's extra (`id_in_record`).
    """
    latest: dict[str, str] = {}
    uses: dict[str, int] = {}
    scoped: list[Any] = []
    for message in messages:
        if not isinstance(message, dict):
            scoped.append(message)
        elif message.get("role") == "tool" and isinstance(message.get("tool_call_id"), str):
            key = message["tool_call_id"]
            scoped.append({**message, "tool_call_id": latest.get(key, key)})
        elif isinstance(message.get("tool_calls"), list):
            calls = [_scoped_call(call, latest, uses) for call in message["tool_calls"]]
            scoped.append({**message, "tool_calls": calls})
        else:
            scoped.append(message)
    return scoped


def _scoped_call(call: object, latest: dict[str, str], uses: dict[str, int]) -> object:
    if not isinstance(call, dict) or not isinstance(call.get("id"), str) or not call["id"]:
        return call  # the builder names what is wrong with it
    key = call["id"]
    uses[key] = uses.get(key, 0) + 1
    if uses[key] == 1:
        latest[key] = key
        return call
    latest[key] = f"{key}#{uses[key]}"
    return {**call, "id": latest[key], "id_in_record": key}


def _trial(value: object) -> int | None:
    if value is None:
        return None
    return expect_type(value, int, "trial")


def _task(info: object) -> dict[str, Any] | None:
    """`info.task`, the task the trajectory played (None when the record has none)."""
    if info is None:
        return None
    task = as_object(info, "info").get("task")
    return None if task is None else as_object(task, "info.task")


@dataclass(frozen=True)
class GoldAction:
    name: str
    kwargs: dict[str, Any]


def gold_actions(task: dict[str, Any]) -> list[GoldAction]:
    """`info.task.actions`: `[{name, kwargs}]`, kwargs an object (or JSON text of one)."""
    raw = task.get("actions")
    if raw is None:
        return []
    found = []
    for where, action in objects(raw, "info.task.actions"):
        name = required_text(action.get("name"), join_path(where, "name"))
        if not name:
            raise RecordError(join_path(where, "name"), "expected a tool name, got an empty string")
        found.append(GoldAction(name, json_args(action.get("kwargs"), join_path(where, "kwargs"))))
    return found


def domain_of(names: set[str]) -> str | None:
    """The tau-bench domain whose own tools these names are; None when none (or both) fit."""
    scores = {
        domain: len(names & (WRITE_TOOLS[domain] | DOMAIN_READS[domain])) for domain in WRITE_TOOLS
    }
    best = max(scores.values())
    winners = [domain for domain, score in scores.items() if score == best]
    return winners[0] if best > 0 and len(winners) == 1 else None


def _is_write(name: str, domain: str | None) -> bool:
    if domain is not None:
        return name in WRITE_TOOLS[domain]
    return name not in READ_NAMES and not name.startswith(READ_PREFIXES)


def gold_expect(task: dict[str, Any], used: set[str]) -> dict[str, Any] | None:
    """The `expect:` block the gold actions and outputs give (None when they give nothing).

    `used` is the tool names the trajectory called, which help tell the domain."""
    actions = gold_actions(task)
    domain = domain_of({action.name for action in actions} | used)
    writes = [action for action in actions if _is_write(action.name, domain)]
    watched = set(WRITE_TOOLS[domain]) if domain is not None else set()
    watched |= {action.name for action in writes}
    expect: dict[str, Any] = {}
    if watched:
        expect["tools"] = {
            "exactly": [{"tool": action.name, "args": action.kwargs} for action in writes],
            "exactly_among": sorted(watched),
        }
    outputs = _outputs(task.get("outputs"))
    if outputs:
        expect["says"] = outputs
    return expect or None


def _outputs(value: object) -> list[str | int | float]:
    """`info.task.outputs`: facts the agent must say, as text or numbers."""
    if value is None:
        return []
    found: list[str | int | float] = []
    for index, item in enumerate(item_list(value, "info.task.outputs")):
        if isinstance(item, bool) or not isinstance(item, (str, int, float)) or _not_finite(item):
            where = join_path("info.task.outputs", index)
            raise RecordError(where, f"expected text or a number, got {show(item)}")
        found.append(item)
    return found


def _not_finite(value: str | int | float) -> bool:
    return isinstance(value, float) and not math.isfinite(value)


FORMAT = RecordFormat(
    name=NAME,
    description="tau-bench (v1) trajectories, their gold actions as expect:",
    detector=detect,
    parser=parse,
)

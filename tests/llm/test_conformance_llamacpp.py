"""Conformance with a real server: each role's client on answers recorded from
llama-cpp-python[server] 0.3.36 with SmolLM2-135M-Instruct (tests/llm/recorded/README.md),
replayed on loopback, and the fake server's `llamacpp` dialect held to the same answers.

Fast and offline: no model runs here. The recordings are what the real server said, not
what we think it says; the end-to-end run against the server itself is tests/e2e."""

from __future__ import annotations

import asyncio
import json
import math
import re
import tempfile
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from polygon_voice.agents.prompt_agent import PromptAgentFactory
from polygon_voice.caller.llm import CallerLine
from polygon_voice.judge import V3, JudgeInput, judge_conversation_async
from polygon_voice.judge.llm import LLMJudge
from polygon_voice.lint import lint, logprobs
from polygon_voice.lint.text import Prompt
from polygon_voice.llm import LLMClient, LLMFormatError, LLMRequestError, RoleConfig, Usage
from polygon_voice.llm.config import LOCAL_MAX_TOKENS
from polygon_voice.llm.dialects import is_shape_refusal
from polygon_voice.llm.structured import parse_structured
from polygon_voice.model import CallerSaid, PrepareToolCall, SendToolCall, ToolResult
from polygon_voice.scenario.persona_llm import llm_persona
from polygon_voice.scenario.persona_plan import plan_personas
from polygon_voice.testing import FakeLLMServer, Rule
from tests.agents.test_prompt_agent import CONTEXT, collect, write_agent
from tests.judge.calls import NO_CHECKS, PERSONA, good_call
from tests.llm.recorded.replay import (
    LLAMA_CPP_PYTHON,
    NO_SHAPE_STATUS,
    Recorded,
    ReplayServer,
    load,
)

ALL = sorted(path.stem for path in LLAMA_CPP_PYTHON.glob("*.json"))
IDS = [c.id for c in V3.criteria]


def role(server: ReplayServer, name: str, **extra: Any) -> RoleConfig:
    values: dict[str, Any] = {"cache": False, "max_retries": 2, "timeout": 5.0, **extra}
    return RoleConfig(role=name, model="smollm2", base_url=server.base_url, **values)  # type: ignore[arg-type]


def post(base_url: str, body: dict[str, Any]) -> tuple[int, Any]:
    data = json.dumps(body).encode()
    request = urllib.request.Request(
        f"{base_url}/chat/completions", data, {"Content-Type": "application/json"}
    )
    try:
        with urllib.request.urlopen(request, timeout=5) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


# --- the recordings themselves -------------------------------------------------------------


@pytest.mark.parametrize("name", ALL)
def test_each_recording_is_from_the_pinned_server_and_names_no_machine(name: str) -> None:
    text = (LLAMA_CPP_PYTHON / f"{name}.json").read_text(encoding="utf-8")
    recorded = load(name)
    assert "llama-cpp-python[server]==0.3.36" in json.loads(text)["recorded_with"]
    assert recorded.status in (200, 500)
    # The recording machine's paths were replaced; this machine's are not there either.
    assert re.search(r"(?<!<)site-packages", text) is None
    for machine_path in (Path(__file__).resolve().parents[2], Path.home(), tempfile.gettempdir()):
        assert f"{machine_path}/" not in text


def test_the_set_covers_every_shape_the_roles_send() -> None:
    # Each role's request shape, and the refusals that shaped the client.
    assert {"judge_json_schema_refused", "judge_json_object", "caller_json_object",
            "agent_tools_with_tool_choice", "agent_tools_without_tool_choice",
            "agent_tool_message_null_content", "agent_tool_message_empty_content",
            "lint_echo_check_sentence", "lint_judge_json_object",
            "json_object_integer_bounds_ignored", "models"} <= set(ALL)  # fmt: skip
    assert any(name.startswith("persona_") for name in ALL)


# --- structured output: the real refusal, switched once, never retried --------------------


def test_the_real_json_schema_refusal_is_a_shape_refusal_and_the_null_content_one_is_not() -> None:
    refused = load("judge_json_schema_refused")
    assert is_shape_refusal(refused.status, refused.body["error"]["message"])
    # The 500 for content null is a validation error too, but not about structured output.
    null = load("agent_tool_message_null_content")
    assert not is_shape_refusal(null.status, null.body["error"]["message"])


def test_auto_switches_once_on_the_real_refusal_and_reads_the_real_answer() -> None:
    fixtures = [load("judge_json_schema_refused"), load("judge_json_object")]
    usage = Usage()
    with ReplayServer(fixtures) as server:

        async def go() -> list[Any]:
            async with LLMClient(role(server, "judge"), usage=usage) as client:
                return [
                    (await client.chat([{"role": "user", "content": f"call {n}"}],
                                       response_schema={"type": "object"})).parsed
                    for n in range(2)
                ]  # fmt: skip

        parsed = asyncio.run(go())
        answered = server.answered()
        sent = server.bodies()
    assert answered == ["judge_json_schema_refused", "judge_json_object", "judge_json_object"]
    assert parsed == [json.loads(fixtures[1].content())] * 2
    assert sent[1]["response_format"]["type"] == "json_object"
    assert "schema" in sent[1]["response_format"]
    assert usage.roles["judge"].retries == 0


def test_the_judge_unscores_the_real_out_of_range_scores_and_keeps_the_rest() -> None:
    fixtures = [load("judge_json_schema_refused"), load("judge_json_object")]
    raw = json.loads(fixtures[1].content())["criteria"]
    with ReplayServer(fixtures) as server:
        judge = LLMJudge(LLMClient(role(server, "judge")))

        async def go() -> Any:
            try:
                return await judge_conversation_async(
                    judge, V3, JudgeInput(good_call(), PERSONA, NO_CHECKS)
                )
            finally:
                await judge.aclose()

        judgement = asyncio.run(go())
    for cid in IDS:
        given = raw.get(cid, {}).get("score")
        in_range = isinstance(given, int) and 1 <= given <= 5
        assert (judgement.criteria[cid].status == "scored") is in_range, (cid, given)
    # SmolLM2 answered 9, 7, 8 ...: nothing in range, so no verdict, never a pass.
    if not any(isinstance(c.get("score"), int) and 1 <= c["score"] <= 5 for c in raw.values()):
        assert judgement.verdict == "unscored"


def test_integer_bounds_are_not_enforced_by_the_server_and_are_checked_on_arrival() -> None:
    recorded = load("json_object_integer_bounds_ignored")
    sent = recorded.request["body"]["response_format"]["schema"]
    score = json.loads(recorded.content())["score"]
    bounds = sent["properties"]["score"]
    assert not bounds["minimum"] <= score <= bounds["maximum"]
    with pytest.raises(LLMFormatError, match="score"):
        parse_structured(recorded.content(), sent, "json_object")


# --- the caller and persona generation on the real answers ---------------------------------


def test_the_caller_reads_the_real_answer_and_sends_no_string_bounds() -> None:
    recorded = load("caller_json_object")
    with ReplayServer([recorded]) as server:

        async def go() -> Any:
            config = role(server, "caller", structured_output="json_object")
            async with LLMClient(config) as client:
                return await client.chat(
                    [{"role": "user", "content": "Hello?"}], response_schema=CallerLine
                )

        reply = asyncio.run(go())
        sent = server.bodies()[0]["response_format"]["schema"]
    assert reply.parsed == CallerLine.model_validate_json(recorded.content())
    # A string's maxLength compiled into a grammar that killed the server: never sent.
    assert "maxLength" not in json.dumps(sent)
    assert "maxLength" not in json.dumps(recorded.request["body"]["response_format"])


def test_persona_generation_on_the_real_answer_cut_at_max_tokens_fails_cleanly() -> None:
    recorded = next(load(n) for n in ALL if n.startswith("persona_"))
    # SmolLM2 wrote on inside the grammar until max_tokens: the JSON is cut off.
    assert recorded.body["choices"][0]["finish_reason"] == "length"
    plan = plan_personas(1, language="en", seed=3, prompt_hash="recorded")[0]
    with ReplayServer([recorded]) as server:

        async def go() -> Any:
            config = role(server, "caller", structured_output="json_object")
            async with LLMClient(config) as client:
                return await llm_persona(client, "You are an order line agent.", plan)

        with pytest.raises(LLMFormatError, match="not JSON") as raised:
            asyncio.run(go())
        # Not retried as a request; asked once more as a persona (another seed), cut off again.
        assert server.answered() == [recorded.name, recorded.name]
        seeds = [body["seed"] for body in server.bodies()]
    assert seeds[1] == seeds[0] + 1
    # The answer stopped at the token limit: the message names the limit sent (a loopback
    # server's default here) and the setting to raise.
    assert f"cut off at the token limit (max_tokens {LOCAL_MAX_TOKENS})" in str(raised.value)
    assert "llm.caller.max_tokens" in str(raised.value)


# --- the prompt agent: tool_choice, and no content null ------------------------------------


def test_the_prompt_agent_sends_shapes_the_real_server_takes(tmp_path: Path) -> None:
    fixtures = [
        load("agent_tool_message_null_content"),  # answers only a content-null request: 500
        load("agent_tool_message_empty_content"),
        load("agent_tools_with_tool_choice"),
        load("agent_tools_without_tool_choice"),
    ]
    with ReplayServer(fixtures) as server:

        async def go() -> tuple[list[Any], list[Any]]:
            factory = PromptAgentFactory(write_agent(tmp_path, server.base_url), env={})
            agent = factory(CONTEXT)
            try:
                first = await collect(agent, CallerSaid(text="Change order 5590 to 3"))
                calls = [a for a in first if isinstance(a, PrepareToolCall)]
                second = []
                if calls:
                    result = ToolResult(call_id=calls[0].call_id, result={"ok": True})
                    second = await collect(agent, result)
                return first, second
            finally:
                await factory.aclose()

        first, _second = asyncio.run(go())
        answered = server.answered()
    # tool_choice is sent with the tools, so the real tool-call answer came back...
    assert answered[0] == "agent_tools_with_tool_choice"
    # ...its arguments hold a raw line break inside a string (SmolLM2 under llama.cpp's
    # grammar), which is read as the JSON it means rather than failing the call.
    real = load("agent_tools_with_tool_choice").body["choices"][0]["message"]["tool_calls"][0]
    (prepared,) = [a for a in first if isinstance(a, PrepareToolCall)]
    assert prepared.tool == "update_order"
    assert prepared.args == json.loads(real["function"]["arguments"], strict=False)
    assert any(isinstance(a, SendToolCall) for a in first)
    assert answered[1] == "agent_tool_message_empty_content"
    # ...and the tool round went back with string content: never the recorded HTTP 500.
    assert "agent_tool_message_null_content" not in answered
    assert None not in answered


def test_the_real_tool_call_answer_has_null_content_and_is_read() -> None:
    recorded = load("agent_tools_with_tool_choice")
    message = recorded.body["choices"][0]["message"]
    assert message["content"] is None
    assert recorded.body["choices"][0]["finish_reason"] == "tool_calls"
    assert message["tool_calls"][0]["function"]["name"] == "update_order"


# --- lint tier 2: the real echo log-probabilities ------------------------------------------


def _bits(recorded: Recorded) -> list[tuple[str, float]]:
    lp = recorded.body["choices"][0]["logprobs"]
    return [(t, -v / math.log(2)) for t, v in zip(lp["tokens"], lp["token_logprobs"], strict=True)
            if v is not None]  # fmt: skip


def test_the_real_echo_is_misaligned_and_no_shift_repairs_it() -> None:
    recorded = load("lint_echo_check_sentence")
    # Each token is scored by the distribution after it: the top alternative listed at a
    # token is a guess for the *next* token ("Please write" -> " a"; "in the box" -> ".").
    lp = recorded.body["choices"][0]["logprobs"]
    top = {t: max(d, key=d.get) for t, d in zip(lp["tokens"], lp["top_logprobs"], strict=True) if d}
    assert (top[" write"], top[" box"]) == (" a", ".")
    assert isinstance(logprobs.shift_of(recorded.body), str)


CHECK_ECHOES = ["lint_echo_check_sentence", "lint_echo_check_sentence_top100"]


def test_the_alignment_check_reads_the_real_server_from_its_next_token_alternatives() -> None:
    logprobs._ALIGNMENT.clear()
    with ReplayServer([load(n) for n in [*CHECK_ECHOES, "lint_echo_prompt_top100"]]) as server:
        endpoint = logprobs.LogprobsEndpoint(server.base_url, "smollm2")
        text = load("lint_echo_prompt_top100").request["body"]["prompt"]
        spans = logprobs.token_logprobs(endpoint, text)
        logprobs.token_logprobs(endpoint, text)
        answered = server.answered()
    logprobs._ALIGNMENT.clear()
    # The check, its reading from the alternatives, then the prompt twice: checked once.
    assert answered == [*CHECK_ECHOES, "lint_echo_prompt_top100", "lint_echo_prompt_top100"]
    assert spans
    assert all(value <= 0 for _, _, value in spans)


def test_lint_runs_tier_2_on_the_real_server_and_the_clean_prompt_stays_clean() -> None:
    prompt = load("lint_echo_prompt_top100")
    text = prompt.request["body"]["prompt"]
    logprobs._ALIGNMENT.clear()
    with ReplayServer([load(n) for n in CHECK_ECHOES] + [prompt]) as server:
        env = {logprobs.ENV_BASE_URL: server.base_url, logprobs.ENV_MODEL: "smollm2"}
        report = lint(text, max_tier=2, env=env)
    logprobs._ALIGNMENT.clear()
    assert report.tiers_run == [1, 2]
    found = [f for axis in report.axes.values() for f in axis.findings if f.tier == 2]
    # Read right, the example prompt's words cost 4.2 bits at the median: only its two
    # rarest words pass 15 bits. Read as the server sends them, 53 findings.
    assert len(found) <= 3, [f.message for f in found]
    misread = logprobs.surprisal(
        Prompt(text), logprobs._spans(load("lint_echo_prompt").body, text), "smollm2"
    )
    assert len(misread) > 20


def test_lint_skips_tier_2_when_the_alternatives_are_not_there_and_keeps_tier_1() -> None:
    logprobs._ALIGNMENT.clear()
    with ReplayServer([load("lint_echo_check_sentence")]) as server:
        env = {logprobs.ENV_BASE_URL: server.base_url, logprobs.ENV_MODEL: "smollm2"}
        report = lint("Always confirm the order number. Never guess.", max_tier=2, env=env)
    logprobs._ALIGNMENT.clear()
    assert report.tiers_run == [1]
    (skipped,) = report.tiers_skipped[:1]
    assert skipped.tier == 2
    assert skipped.failed
    assert "do not line up" in skipped.reason


def test_a_clean_prompt_scored_as_the_real_server_scores_it_would_be_full_of_findings() -> None:
    # Why the check matters: taken as they come, ordinary words cost 8-25 bits.
    bits = [b for t, b in _bits(load("lint_echo_prompt")) if t.strip().lower() == "the"]
    assert bits
    assert sum(bits) / len(bits) > logprobs.UNUSUAL_BITS


# --- the fake server's llamacpp dialect answers as the real server did ---------------------


@pytest.mark.parametrize("name", ["judge_json_schema_refused", "agent_tool_message_null_content"])
def test_the_fake_dialect_refuses_what_the_real_server_refused(name: str) -> None:
    recorded = load(name)
    with FakeLLMServer([Rule(text="ok")], dialect="llamacpp") as fake:
        status, body = post(fake.base_url, recorded.request["body"])
    real = recorded.body["error"]
    assert status == recorded.status
    assert set(body["error"]) == set(real)
    assert body["error"]["type"] == real["type"]
    # The fake says the line of the real message that matters, as the real server words it.
    fake_lines = body["error"]["message"].split("\n")[1:]
    assert all(line in real["message"] for line in fake_lines)
    assert is_shape_refusal(status, body["error"]["message"]) is is_shape_refusal(
        recorded.status, real["message"]
    )


@pytest.mark.parametrize(
    "name", ["agent_tools_without_tool_choice", "agent_tools_with_tool_choice",
             "agent_tool_message_empty_content", "judge_json_object"],
)  # fmt: skip
def test_the_fake_dialect_takes_what_the_real_server_took(name: str) -> None:
    recorded = load(name)
    real = recorded.body["choices"][0]
    rules = [Rule(tool_calls=[{"name": "update_order", "arguments": {"order_id": "5590"}}])]
    if "tools" not in recorded.request["body"]:
        rules = [Rule(json={"criteria": {}})]
    with FakeLLMServer(rules, dialect="llamacpp") as fake:
        status, body = post(fake.base_url, recorded.request["body"])
    fake_choice = body["choices"][0]
    assert status == recorded.status == 200
    # The same kind of answer: text where the server answered text, tool calls where it called.
    assert bool(fake_choice["message"].get("tool_calls")) is bool(real["message"].get("tool_calls"))
    assert fake_choice["finish_reason"] == real["finish_reason"]
    assert (fake_choice["message"]["content"] is None) is (real["message"]["content"] is None)


def test_a_request_of_no_recorded_shape_gets_a_plain_error_not_an_answer() -> None:
    with ReplayServer([load("judge_json_object")]) as server:
        request = urllib.request.Request(
            f"{server.base_url}/completions", json.dumps({"echo": True}).encode(),
            {"Content-Type": "application/json"},
        )  # fmt: skip
        with pytest.raises(urllib.error.HTTPError) as caught:
            urllib.request.urlopen(request, timeout=5)
        assert caught.value.code == NO_SHAPE_STATUS


@pytest.mark.parametrize(
    ("recorded", "expected"),
    [(CHECK_ECHOES, "next_token"), (CHECK_ECHOES[:1], "unaligned")],
    ids=["with-its-alternatives", "without-them"],
)
def test_the_capability_probe_reads_the_real_logprobs_as_lint_does(
    recorded: list[str], expected: str
) -> None:
    # What `polygon llm check` says of the endpoint's log-probabilities is what lint tier 2
    # then does: runs on llama-cpp-python's next-token alternatives, refuses without them.
    from polygon_voice.llm.capability_probe import probe

    with ReplayServer([load(n) for n in recorded]) as server:
        found = probe(role(server, "judge"), ["logprobs"], timeout=5.0)
    assert found.logprobs == expected
    if expected == "unaligned":
        assert "do not line up" in found.notes["logprobs"]


def test_the_real_validation_500_is_permanent_and_sent_once() -> None:
    # llama-cpp-python answers a body it cannot validate with HTTP 500: resending the same
    # body cannot help, and on a one-slot server each resend waits behind other calls.
    recorded = load("agent_tool_message_null_content")
    usage = Usage()
    with ReplayServer([recorded]) as server:
        body = recorded.request["body"]
        extra = {k: body[k] for k in ("tool_choice",) if k in body}

        async def go() -> str:
            async with LLMClient(role(server, "agent", max_retries=3), usage=usage) as client:
                with pytest.raises(LLMRequestError) as raised:
                    await client.chat(body["messages"], tools=body.get("tools"), params=extra)
            return str(raised.value)

        message = asyncio.run(go())
        answered = server.answered()
    assert answered == ["agent_tool_message_null_content"]
    assert usage.roles["agent"].retries == 0
    assert "7 validation errors" in message
    assert "after" not in message  # "failed after N attempts" would mean it was resent


def test_the_switch_is_said_on_one_line_and_the_failure_keeps_the_whole_text(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # The real refusal is a pydantic error over several lines and a traceback line: the
    # warning that scrolls past is one line; a fixed form's failure keeps every line.
    refused = load("judge_json_schema_refused")
    with ReplayServer([refused, load("judge_json_object")]) as server:

        async def go(setting: str) -> None:
            config = role(server, "judge", structured_output=setting)
            async with LLMClient(config) as client:
                await client.chat([{"role": "user", "content": "x"}], response_schema={})

        with caplog.at_level("WARNING", logger="polygon_voice.llm"):
            asyncio.run(go("auto"))
        with pytest.raises(LLMRequestError) as raised:
            asyncio.run(go("json_schema"))
    (warning,) = [r.getMessage() for r in caplog.records if "from now on" in r.getMessage()]
    assert "\n" not in warning
    assert "Input should be 'text' or 'json_object'" in warning
    assert "\n" in str(raised.value)  # stored and raised whole

"""Files that blow up loaders: every case is a clean one-line error naming the place, or a load.

The first half tries each hostile input once (times, counts, YAML bombs, depth, huge numbers,
encodings, `$ref`s, strict probe and rubric files). The second half fuzzes the shipped
examples with hypothesis: random key deletions, type swaps, deep nesting, aliases, odd
scalars and broken bytes, asserting a loaded object or the loader's own error, never another
exception, never more than a second per file. Run with `-s` to print the outcome counts.
"""

from __future__ import annotations

import copy
import json
import os
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from polygon_voice.agents.prompt_agent import PromptAgentError, PromptAgentFactory
from polygon_voice.judge import RubricError, load_rubric
from polygon_voice.llm import LLMConfigError, load_llm_config
from polygon_voice.probes import ProbeError, load_probes
from polygon_voice.scenario import SuiteError, load_suite
from polygon_voice.scenario.limits import Limits
from tests.cli.conftest import Polygon

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE_SUITE = ROOT / "examples" / "order_line" / "suite.yaml"
EXAMPLE_AGENT = ROOT / "examples" / "prompt_agent" / "agent.yaml"
# CPU seconds, not wall clock: a hostile file must not make the loader spin, and a
# busy CI machine must not make an honest load look slow.
CPU_SECONDS_PER_FILE = 2.0

TOOL = """name: t
tools:
  lookup:
    parameters: {type: object, properties: {id: {type: string}}}
    stub: {kind: fixed, returns: {ok: true}}
    latency: 0.3
scenarios:
  - id: a
    script:
      - say: hello
"""


def write(tmp_path: Path, text: str | bytes, name: str = "suite.yaml") -> Path:
    path = tmp_path / name
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def suite_error(path: Path, limits: Limits | None = None) -> SuiteError:
    start = time.process_time()
    with pytest.raises(SuiteError) as caught:
        load_suite(path, limits)
    assert time.process_time() - start < CPU_SECONDS_PER_FILE
    assert "\n" not in str(caught.value)  # one line, as the command prints it
    return caught.value


# -- times ---------------------------------------------------------------------------------


@pytest.mark.parametrize("value", [".nan", ".inf", "-.inf", "-1", "1e300"])
@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("latency: 0.3", "latency: {value}"),
        ("latency: 0.3", "latency: {{distribution: uniform, low: 0, high: {value}}}"),
        ("latency: 0.3", "timeout: {value}"),
        ("latency: 0.3", "faults: [{{kind: timeout, on_call: 1, latency: {value}}}]"),
        ("scenarios:", "settings: {{response_gap: {value}}}\nscenarios:"),
        ("scenarios:", "settings: {{agent_turn_timeout: {value}}}\nscenarios:"),
    ],
)
def test_a_time_that_is_not_finite_and_non_negative_is_refused_at_its_line(
    tmp_path: Path, value: str, old: str, new: str
) -> None:
    path = write(tmp_path, TOOL.replace(old, new.format(value=value)))
    error = suite_error(path)
    line = next(i for i, text in enumerate(path.read_text().splitlines(), 1) if value in text)
    assert error.line == line
    assert error.field is not None
    assert any(word in error.field for word in ("latency", "timeout", "high", "settings"))


def test_a_non_finite_number_in_free_form_data_is_refused(tmp_path: Path) -> None:
    path = write(tmp_path, TOOL.replace("returns: {ok: true}", "returns: {ok: .nan}"))
    error = suite_error(path)
    assert (error.line, error.field) == (5, "tools.lookup.stub.returns.ok")
    assert "not a finite number" in error.message


# -- counts and sizes ------------------------------------------------------------------------


def test_repeat_has_an_upper_bound_that_the_environment_raises(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write(tmp_path, TOOL + "repeat: 1000000000000\n")
    error = suite_error(path)
    assert (error.line, error.field) == (11, "repeat")
    assert "POLYGON_MAX_REPEAT" in error.message
    path = write(tmp_path, TOOL + "repeat: 2000\n")
    suite_error(path)
    monkeypatch.setenv("POLYGON_MAX_REPEAT", "5000")
    assert load_suite(path).suite.repeat == 2000


def test_scenarios_and_calls_have_upper_bounds(tmp_path: Path) -> None:
    many = TOOL + "".join(f"  - id: s{i}\n    script: [{{say: hi}}]\n" for i in range(5))
    error = suite_error(write(tmp_path, many), Limits(max_scenarios=3))
    assert error.field == "scenarios"
    assert "6 scenarios" in error.message
    error = suite_error(write(tmp_path, many + "repeat: 3\n"), Limits(max_calls=10))
    assert "18 calls" in error.message
    assert "POLYGON_MAX_CALLS" in error.message


def test_a_bad_limit_variable_is_one_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("POLYGON_MAX_DEPTH", "deep")
    with pytest.raises(SuiteError, match="POLYGON_MAX_DEPTH: must be a positive integer"):
        Limits.from_env()


def test_text_and_file_sizes_have_upper_bounds(tmp_path: Path) -> None:
    path = write(tmp_path, TOOL.replace("say: hello", "say: " + "a" * 2000))
    error = suite_error(path, Limits(max_text_chars=1000))
    assert (error.line, error.field) == (10, "scenarios[0].script[0].say")
    error = suite_error(path, Limits(max_file_bytes=1000))
    assert "POLYGON_MAX_FILE_BYTES" in error.message


# -- YAML and JSON that blow up parsers ----------------------------------------------------


def alias_bomb(levels: int = 9) -> str:
    lines = ['a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for i in range(1, levels):
        lines.append(f"a{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * 9) + "]")
    return "".join(f"      {line}\n" for line in lines)


def test_an_alias_bomb_fails_fast_with_the_line(tmp_path: Path) -> None:
    text = TOOL.replace("    script:", "    setup:\n" + alias_bomb() + "    script:")
    assert len(text) < 1300
    error = suite_error(write(tmp_path, text))
    assert "aliases here expand to more than" in error.message
    assert error.field is not None
    assert error.field.startswith("scenarios[0].setup.")


def test_a_few_aliases_still_load(tmp_path: Path) -> None:
    text = TOOL.replace("    script:", "    setup:\n" + alias_bomb(3) + "    script:")
    assert load_suite(write(tmp_path, text)).suite.scenarios[0].setup["a2"][0][0][0] == "lol"


def test_a_recursive_alias_is_refused(tmp_path: Path) -> None:
    text = TOOL.replace("    script:", "    setup: &loop {self: *loop}\n    script:")
    assert "refers to its own anchor" in suite_error(write(tmp_path, text)).message


@pytest.mark.parametrize("name", ["suite.yaml", "suite.json"])
def test_nesting_a_thousand_deep_is_refused(tmp_path: Path, name: str) -> None:
    data = json.loads(json.dumps(yaml.safe_load(TOOL)))
    text = json.dumps(data).replace('"ok": true', '"ok": ' + "[" * 1000 + "]" * 1000)
    error = suite_error(write(tmp_path, text, name))
    assert error.line == 1
    assert "POLYGON_MAX_DEPTH" in error.message


@pytest.mark.parametrize("name", ["suite.yaml", "suite.json"])
def test_an_integer_over_4300_digits_is_refused(tmp_path: Path, name: str) -> None:
    data = json.loads(json.dumps(yaml.safe_load(TOOL)))
    text = json.dumps(data, indent=1).replace('"ok": true', '"ok": ' + "9" * 5000)
    error = suite_error(write(tmp_path, text, name))
    assert error.line is not None
    assert "5,000 digits" in error.message


def test_a_hex_integer_too_long_to_write_is_refused(tmp_path: Path) -> None:
    # Reading 0x... has no digit limit, but writing the value to a report would fail.
    path = write(tmp_path, TOOL.replace("{ok: true}", "{ok: 0x" + "f" * 4000 + "}"))
    assert "4,800 digits" in suite_error(path).message
    path = write(tmp_path, TOOL.replace("{ok: true}", "{ok: 0x" + "f" * 3000 + "}"))
    assert load_suite(path).suite.tools["lookup"].stub.returns["ok"] == 16**3000 - 1  # type: ignore[union-attr]


def test_nan_and_infinity_in_json_are_refused(tmp_path: Path) -> None:
    data = json.loads(json.dumps(yaml.safe_load(TOOL)))
    for spelling in ("NaN", "Infinity", "1e999"):
        text = json.dumps(data, indent=1).replace("0.3", spelling)
        assert "not a finite number" in suite_error(write(tmp_path, text, "s.json")).message


# -- tool schemas' $ref --------------------------------------------------------------------


def schema_suite(parameters: str) -> str:
    return TOOL.replace("{type: object, properties: {id: {type: string}}}", parameters)


@pytest.mark.parametrize(
    ("parameters", "words"),
    [
        ("{properties: {id: {$ref: '#/$defs/nope'}}}", "cannot be resolved"),
        ("{properties: {id: {$ref: 'http://127.0.0.1:9/x.json'}}}", "remote references"),
        ("{properties: {id: {$ref: '#/properties/id'}}}", "leads back to itself"),
        ("{allOf: [{$ref: '#'}]}", "leads back to itself"),
        ("{$defs: {a: {$ref: '#/$defs/b'}, b: {$ref: '#/$defs/a'}}}", "leads back to itself"),
    ],
)
def test_a_bad_ref_is_a_load_error_naming_the_tool(
    tmp_path: Path, parameters: str, words: str
) -> None:
    error = suite_error(write(tmp_path, schema_suite(parameters)))
    assert error.message.startswith("tool 'lookup': ")
    assert words in error.message
    assert error.line == 4
    assert error.field is not None
    assert error.field.startswith("tools.lookup.parameters")


def test_refs_that_resolve_and_consume_data_load(tmp_path: Path) -> None:
    tree = (
        "{$defs: {node: {type: object, properties: {kids: {type: array, "
        "items: {$ref: '#/$defs/node'}}}}}, properties: {root: {$ref: '#/$defs/node'}}}"
    )
    assert "lookup" in load_suite(write(tmp_path, schema_suite(tree))).suite.tools


# -- the suite's agent ------------------------------------------------------------------------


@pytest.mark.parametrize("agent", ["'::'", "'pkg:'", "':attr'", "'file.py:1x'"])
def test_an_agent_that_cannot_be_named_is_a_load_error(tmp_path: Path, agent: str) -> None:
    error = suite_error(write(tmp_path, TOOL.replace("name: t", f"name: t\nagent: {agent}")))
    assert (error.line, error.field) == (2, "agent")


def test_the_command_prints_one_line_and_exits_2(polygon: Polygon, tmp_path: Path) -> None:
    text = TOOL.replace("    script:", "    setup:\n" + alias_bomb() + "    script:")
    code, out, err = polygon("run", str(write(tmp_path, text)), "--agent", "reference:robust")
    assert code == 2
    assert err.count("\n") == 1
    assert "suite.yaml:" in err
    assert "Traceback" not in out + err


# -- probes, rubrics, agent and model configuration files -------------------------------------

PROBES = """probes:
  - id: explains_refusal
    question: When the agent refused, did it give a reason?
    polarity: desired
  - id: promise
    question: Did the agent promise before a tool confirmed it?
    polarity: guardrail
    rule: promise_without_tool_call
"""

RUBRIC = """name: short-calls
criteria:
- {id: goal_achievement, weight: 60, description: the caller got what they came for}
- {id: safety_compliance, weight: 40}
gates: [forbidden_phrase, safety]
rules: 2
"""


def probe_error(path: Path) -> str:
    with pytest.raises(ProbeError) as caught:
        load_probes(path)
    return str(caught.value)


def rubric_error(path: Path) -> str:
    with pytest.raises(RubricError) as caught:
        load_rubric(str(path))
    return str(caught.value)


def test_probe_files_are_strict(tmp_path: Path) -> None:
    assert len(load_probes(write(tmp_path, PROBES, "p.yaml"))) == 2
    text = PROBES.replace("    polarity: desired", "    polarty: desired")
    assert probe_error(write(tmp_path, text, "p.yaml")).endswith(
        "p.yaml:4:14: probes[0].polarty: unknown field 'polarty' (did you mean 'polarity'?)"
    )
    text = PROBES.replace("rule: promise_without_tool_call", "rule: [x]")
    assert "p.yaml:8:11: probes[1].rule: one of " in probe_error(write(tmp_path, text, "p.yaml"))
    text = "probes: []\nprobs: 1\n"
    assert "unknown field 'probs'" in probe_error(write(tmp_path, text, "p.yaml"))


def test_rubric_files_are_strict(tmp_path: Path) -> None:
    assert load_rubric(str(write(tmp_path, RUBRIC, "r.yaml"))).gates == {
        "forbidden_phrase",
        "safety",
    }
    text = RUBRIC.replace("gates:", "gatse:")
    assert rubric_error(write(tmp_path, text, "r.yaml")).endswith(
        "r.yaml:5:8: gatse: unknown field 'gatse' (did you mean 'gates'?)"
    )
    text = RUBRIC.replace("{id: safety_compliance", "{id: ''")
    assert "r.yaml:4:8: criteria[1].id: a non-empty text" in rubric_error(
        write(tmp_path, text, "r.yaml")
    )
    text = RUBRIC.replace("weight: 40}", "weight: 40, wieght: 1}")
    assert "did you mean 'weight'?" in rubric_error(write(tmp_path, text, "r.yaml"))
    text = RUBRIC.replace("[forbidden_phrase, safety]", "[forbiden_phrase]")
    assert "gates[0]: unknown gate 'forbiden_phrase' (did you mean 'forbidden_phrase'?)" in (
        rubric_error(write(tmp_path, text, "r.yaml"))
    )


def agent_error(path: Path) -> str:
    with pytest.raises(PromptAgentError) as caught:
        PromptAgentFactory(path, env={})
    return str(caught.value)


def test_agent_config_files_name_the_line_and_the_field(tmp_path: Path) -> None:
    write(tmp_path, "You are a helpful agent.", "prompt.md")
    good = "model: m\nbase_url: http://127.0.0.1:9/v1\nsystem_prompt: prompt.md\n"
    assert PromptAgentFactory(write(tmp_path, good, "a.yaml"), env={}).config.model == "m"
    text = good + "max_round: 3\n"
    assert agent_error(write(tmp_path, text, "a.yaml")).endswith(
        "a.yaml:4:1: max_round: unknown field 'max_round' (did you mean 'max_rounds'?)"
    )
    write(tmp_path, b"\xff\xfe prompt", "prompt.md")
    assert "not valid UTF-8" in agent_error(write(tmp_path, good, "a.yaml"))


@pytest.mark.parametrize("kind", ["probes", "rubric", "agent", "llm"])
def test_a_file_that_is_not_utf8_is_one_error_naming_it(tmp_path: Path, kind: str) -> None:
    path = write(tmp_path, b"name: caf\xe9\n", f"{kind}.yaml")
    message = SMALL_FILE_ERRORS[kind](path)
    assert message.endswith(f"{kind}.yaml:1:10: not valid UTF-8 text (byte 0xe9)")


def _llm_error(path: Path) -> str:
    with pytest.raises(LLMConfigError) as caught:
        load_llm_config(path, {})
    return str(caught.value)


SMALL_FILE_ERRORS: dict[str, Callable[[Path], str]] = {
    "probes": probe_error,
    "rubric": rubric_error,
    "agent": agent_error,
    "llm": _llm_error,
}


@pytest.mark.parametrize("kind", ["probes", "rubric", "agent", "llm"])
def test_the_small_files_are_bounded_like_suites(tmp_path: Path, kind: str) -> None:
    text = "x:\n" + alias_bomb()
    path = write(tmp_path, text, f"{kind}.yaml")
    start = time.process_time()
    assert "aliases here expand" in SMALL_FILE_ERRORS[kind](path)
    assert time.process_time() - start < CPU_SECONDS_PER_FILE


# -- fuzzing the shipped file formats ------------------------------------------------------

OUTCOMES: Counter[str] = Counter()
ODD_SCALARS: list[object] = [
    None, True, 0, -1, 10**30, 1.5, float("nan"), float("inf"), "", "::", "x" * 300,
    "\x1b[2J", "\ud800", [], {}, [[[]]], {"$ref": "#/nope"},
]  # fmt: skip


@pytest.fixture(scope="module", autouse=True)
def _report_outcomes() -> Iterator[None]:
    yield
    if OUTCOMES:
        total = sum(OUTCOMES.values())
        rows = ", ".join(f"{name} {count}" for name, count in sorted(OUTCOMES.items()))
        print(f"\nfile fuzzing: {total} cases: {rows}")


def _paths(data: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """Every place in the data (mapping keys and list indexes), parents before children."""
    yield prefix
    if isinstance(data, dict):
        for key, value in data.items():
            yield from _paths(value, (*prefix, key))
    elif isinstance(data, list):
        for i, value in enumerate(data):
            yield from _paths(value, (*prefix, i))


def _at(data: Any, path: tuple[Any, ...]) -> Any:
    for part in path:
        data = data[part]
    return data


_DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)  # the C dumper when there is one


@st.composite
def mutated_text(draw: st.DrawFn, original: Any) -> bytes:
    """The original file's data after a few random edits, dumped, then maybe its bytes edited."""
    data = copy.deepcopy(original)
    for _ in range(draw(st.integers(0, 4))):
        places = [p for p in _paths(data) if p]
        if not places:
            break
        place = draw(st.sampled_from(places))
        parent, last = _at(data, place[:-1]), place[-1]
        action = draw(st.sampled_from(["delete", "swap", "nest", "unknown_key"]))
        if action == "delete":
            del parent[last]
        elif action == "swap":
            parent[last] = copy.deepcopy(draw(st.sampled_from(ODD_SCALARS)))
        elif action == "nest":
            value = parent[last]
            for _ in range(draw(st.sampled_from([2, 70, 200]))):
                value = [value]
            parent[last] = value
        elif isinstance(parent, dict):
            parent[draw(st.sampled_from(["idd", "gatse", "polarty", "x", "settings"]))] = 1
    try:
        text = yaml.dump(data, Dumper=_DUMPER, allow_unicode=True, sort_keys=False)
    except UnicodeEncodeError:  # the C dumper cannot write a lone surrogate; Python's escapes it
        text = yaml.safe_dump(data, allow_unicode=True, sort_keys=False)
    raw = text.encode("utf-8", "surrogatepass")
    tail = draw(st.sampled_from(["none", "alias", "bytes", "cut", "deep"]))
    if tail == "alias":
        raw += ("zz_bomb:\n" + alias_bomb(draw(st.integers(2, 9)))).encode()
    elif tail == "bytes":
        at = draw(st.integers(0, len(raw)))
        raw = raw[:at] + draw(st.binary(min_size=1, max_size=4)) + raw[at:]
    elif tail == "cut":
        raw = raw[: draw(st.integers(0, len(raw)))]
    elif tail == "deep":
        raw += b"zz_deep: " + b"[" * 1000 + b"]" * 1000 + b"\n"
    return raw


def _fuzz_once(
    raw: bytes, path: Path, load: Callable[[Path], object], clean: type[Exception]
) -> None:
    path.write_bytes(raw)
    start = time.process_time()
    try:
        load(path)
        outcome = "loaded"
    except clean as exc:
        message = str(exc)
        outcome = type(exc).__name__
    else:
        message = "loaded"
    assert message.strip()
    assert "Traceback" not in message
    elapsed = time.process_time() - start
    assert elapsed < CPU_SECONDS_PER_FILE, f"{elapsed:.2f} s for one file"
    OUTCOMES[f"{path.stem}:{outcome}:{_kind(message)}"] += 1


_KINDS = (
    ("POLYGON_MAX_DEPTH", "depth"),
    ("aliases", "alias"),
    ("own anchor", "alias"),
    ("UTF-8", "encoding"),
    ("digits", "number"),
    ("not a finite", "number"),
    ("unknown field", "unknown key"),
    ("file is empty", "empty"),
)


def _kind(message: str) -> str:
    """The class of an outcome, for the figures: which guard answered, or the field check."""
    if message == "loaded":
        return "ok"
    return next((kind for words, kind in _KINDS if words in message), "syntax or field")


# Cases per file format; raise it for a longer search (docs/reliability.md has the figures).
FUZZ_EXAMPLES = int(os.environ.get("POLYGON_FUZZ_EXAMPLES", "40"))
FUZZ = settings(
    max_examples=FUZZ_EXAMPLES,
    deadline=None,  # the time bound is asserted per file, with a clearer message
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    derandomize=True,
)


@FUZZ
@given(raw=mutated_text(yaml.safe_load(EXAMPLE_SUITE.read_text(encoding="utf-8"))))
def test_fuzzed_suites_load_or_fail_cleanly(tmp_path: Path, raw: bytes) -> None:
    _fuzz_once(raw, tmp_path / "suite.yaml", load_suite, SuiteError)


@FUZZ
@given(raw=mutated_text(yaml.safe_load(PROBES)))
def test_fuzzed_probe_files_load_or_fail_cleanly(tmp_path: Path, raw: bytes) -> None:
    _fuzz_once(raw, tmp_path / "probes.yaml", load_probes, ProbeError)


@FUZZ
@given(raw=mutated_text(yaml.safe_load(RUBRIC)))
def test_fuzzed_rubrics_load_or_fail_cleanly(tmp_path: Path, raw: bytes) -> None:
    _fuzz_once(raw, tmp_path / "rubric.yaml", lambda p: load_rubric(str(p)), RubricError)


@FUZZ
@given(raw=mutated_text(yaml.safe_load(EXAMPLE_AGENT.read_text(encoding="utf-8"))))
def test_fuzzed_agent_configs_load_or_fail_cleanly(tmp_path: Path, raw: bytes) -> None:
    (tmp_path / "prompt.md").write_text("You are a helpful agent.", encoding="utf-8")
    agent = tmp_path / "agent.yaml"
    _fuzz_once(raw, agent, lambda p: PromptAgentFactory(p, env={}), PromptAgentError)

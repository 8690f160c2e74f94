"""Rubrics as versioned data (RUB-1, RUB-6): criteria, weights and the gates a version applies.

Scores are compared only within one version, so a rubric's version id is part of every
stored judgement. The built-in versions are `v1` and `v2` (v2 adds GATE-3); a custom rubric
from a YAML file is versioned by its name and a hash of its content, so editing the file
makes a new version.
"""

from __future__ import annotations

import difflib
import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import yaml

from polygon_voice.model.probes import Polarity, ProbeAnswerValue
from polygon_voice.scenario.data_errors import first_unknown_key, located, unknown_key
from polygon_voice.scenario.errors import SuiteError
from polygon_voice.scenario.messages import brief
from polygon_voice.scenario.parsing import read_data

GATES = ("forbidden_phrase", "safety", "invalid_tool_args", "agent_error", "expected_outcome")
V2_GATES = GATES[:3]
LATEST_RULES = 2
"""The deterministic judge's rule set a rubric is judged with: 1 for v1/v2 (as they were when
those verdicts were made), 2 from v3 on (expectations, phantom claims). Part of the version."""
TOTAL_WEIGHT = 100
# A promoted probe's gate is named `probe:<id>`, apart from the fixed GATE-1..3 names.
PROBE_GATE_PREFIX = "probe:"
PROMOTED_KINDS = ("criterion", "gate")
MAX_JUDGE_REPEATS = 25
"""The most times one call may be judged (RUB-5's K): each repeat is a model call per call."""


class RubricError(ValueError):
    """A rubric that cannot be used; the message names the file and the field."""


@dataclass(frozen=True)
class PromotedProbe:
    """The probe a promoted criterion or gate came from (PROBE-6), kept so judges can ask it.

    Once promoted, the probe's question is part of the rubric: the judges answer it and the
    answer scores the criterion (right 5, wrong 1, not applicable unscored) or fires the gate.
    """

    id: str
    question: str
    polarity: Polarity
    hash: str  # the wording's hash when promoted (PROBE-5)
    rule: str | None = None  # a built-in deterministic rule; None: only a model can answer
    applies_when: str = ""

    @property
    def gate(self) -> str:
        """The gate's name when promoted to a gate."""
        return f"{PROBE_GATE_PREFIX}{self.id}"

    @property
    def good_answer(self) -> ProbeAnswerValue:
        """yes for a desired behaviour, no for a guardrail (PROBE-2)."""
        return "yes" if self.polarity == "desired" else "no"

    def score(self, answer: object) -> int | None:
        """5 for the right answer, 1 for the wrong one, None (unscored) otherwise."""
        if answer not in ("yes", "no"):
            return None  # not applicable (or unreadable) is left out, never counted (PROBE-1)
        return 5 if answer == self.good_answer else 1

    def failed(self, answer: object) -> bool:
        """Whether `answer` is the wrong one; never for not applicable."""
        return answer in ("yes", "no") and answer != self.good_answer

    def to_data(self) -> dict[str, str | None]:
        """The fields as written to a rubric file (and hashed into its version)."""
        return {
            "probe": self.id,
            "question": self.question,
            "polarity": self.polarity,
            "hash": self.hash,
            "rule": self.rule,
            "applies_when": self.applies_when,
        }


@dataclass(frozen=True)
class Criterion:
    """One scored criterion (1-5) and its weight in the composite."""

    id: str
    weight: int
    description: str = ""
    probe: PromotedProbe | None = None  # set for a criterion promoted from a probe


@dataclass(frozen=True)
class Rubric:
    """A named, versioned set of criteria whose weights sum to 100, and its hard gates."""

    version: str
    criteria: tuple[Criterion, ...]
    gates: frozenset[str]
    probe_gates: tuple[PromotedProbe, ...] = ()  # promoted gates; each named in `gates`
    rules: int = 1  # the deterministic judge's rule set (LATEST_RULES from v3 on)

    @property
    def weights(self) -> dict[str, int]:
        """Criterion id -> weight."""
        return {c.id: c.weight for c in self.criteria}

    @property
    def promoted_criteria(self) -> tuple[Criterion, ...]:
        """The criteria that came from a probe."""
        return tuple(c for c in self.criteria if c.probe is not None)


_V1_CRITERIA = (
    Criterion("goal_achievement", 25, "the caller's goal was reached (or properly handed off)"),
    Criterion("instruction_following", 15, "the agent kept to its instructions and contracts"),
    Criterion("tool_use_quality", 15, "right tools, valid arguments, safe retries"),
    Criterion("factual_accuracy", 10, "what the agent stated is backed by facts and tools"),
    Criterion("dialogue_quality", 10, "no loops, few repeat requests, turns of sensible length"),
    Criterion("robustness", 10, "recovery after tool errors and interruptions"),
    Criterion("safety_compliance", 10, "no forbidden phrases, no unwanted actions"),
    Criterion("persona_tone", 5, "tone: lets the caller speak, keeps turns short"),
)

V1 = Rubric("v1", _V1_CRITERIA, frozenset({"forbidden_phrase", "safety"}))
# v2 only adds GATE-3: the same criteria and weights, so a v1 verdict stays what it was.
V2 = Rubric("v2", _V1_CRITERIA, frozenset(V2_GATES))
# v3 fails what a person would fail: a call whose stated outcome was not reached
# (`expected_outcome`) or that the agent broke (`agent_error`), and the deterministic judge
# reads claims of a change that no write backs. v1/v2 verdicts are never recomputed (RUB-6).
V3 = Rubric("v3", _V1_CRITERIA, frozenset(GATES), rules=LATEST_RULES)
BUILTIN = {V1.version: V1, V2.version: V2, V3.version: V3}
DEFAULT_RUBRIC = V3.version


RUBRIC_FIELDS = ("name", "criteria", "gates", "rules", "promoted", "probe_gates")
CRITERION_FIELDS = ("id", "weight", "description")
PROMOTED_FIELDS = (
    "probe", "question", "polarity", "hash", "rule", "applies_when", "as", "criterion",
    "from_rubric",
)  # fmt: skip
Loc = tuple[int | str, ...]


@dataclass(frozen=True)
class _Source:
    """Where a rubric came from, so each error names the file, line and field."""

    name: str
    root: yaml.Node | None = None

    def error(self, loc: Loc, message: str) -> RubricError:
        return RubricError(located(self.name, self.root, loc, message))

    def check_keys(self, item: dict[Any, Any], loc: Loc, allowed: tuple[str, ...]) -> None:
        extra = first_unknown_key(item, allowed)
        if extra is not None:
            raise self.error((*loc, extra), unknown_key(extra, allowed))


def load_rubric(spec: str) -> Rubric:
    """A built-in version (`v1`, `v2`, `v3`) or a rubric YAML file."""
    if spec in BUILTIN:
        return BUILTIN[spec]
    path = Path(spec)
    if not path.is_file():
        known = ", ".join(BUILTIN)
        raise RubricError(f"{spec}: not a built-in rubric ({known}) and no such file")
    try:
        data, root = read_data(path, str(path))
    except SuiteError as exc:
        raise RubricError(str(exc)) from None
    return rubric_from_data(data, str(path), root)


def rubric_from_data(data: Any, source: str, root: yaml.Node | None = None) -> Rubric:
    """A custom rubric from parsed YAML; `source` names the file and `root` gives lines."""
    where = _Source(source, root)
    if not isinstance(data, dict):
        raise where.error((), "a rubric is a mapping with 'name' and 'criteria'")
    where.check_keys(data, (), RUBRIC_FIELDS)
    name = data.get("name")
    if not isinstance(name, str) or not name.strip() or name in BUILTIN:
        raise where.error(("name",), f"a name other than {', '.join(BUILTIN)}")
    criteria = _criteria(data.get("criteria"), where)
    total = sum(c.weight for c in criteria)
    if total != TOTAL_WEIGHT:
        message = f"weights sum to {total}, they must sum to {TOTAL_WEIGHT}"
        raise where.error(("criteria",), message)
    promoted = _promoted(data, where)
    criteria = _attach(criteria, [(t, p) for k, t, p in promoted if k == "criterion"], where)
    probe_gates = tuple(p for k, _, p in promoted if k == "gate")
    gates = _gates(data.get("gates", list(GATES)), probe_gates, where)
    rules = _rules(data.get("rules", LATEST_RULES), where)
    body: dict[str, Any] = {"criteria": [_hashed(c) for c in criteria], "gates": sorted(gates)}
    body["rules"] = rules
    if probe_gates:
        body["probe_gates"] = [p.to_data() for p in probe_gates]
    content = json.dumps(body, sort_keys=True)
    digest = hashlib.sha256(content.encode()).hexdigest()[:12]
    return Rubric(f"{name.strip()}-{digest}", criteria, gates, probe_gates, rules)


def _rules(raw: Any, where: _Source) -> int:
    if isinstance(raw, bool) or not isinstance(raw, int) or raw not in range(1, LATEST_RULES + 1):
        raise where.error(
            ("rules",),
            f"the deterministic judge's rule set, 1 to {LATEST_RULES} (default {LATEST_RULES}), "
            f"got {raw!r}",
        )
    return int(raw)


def _hashed(criterion: Criterion) -> dict[str, Any]:
    # A plain criterion hashes as it always did, so existing custom rubrics keep their version;
    # a promoted one adds its probe, since how it is judged depends on the probe.
    out: dict[str, Any] = {
        "id": criterion.id,
        "weight": criterion.weight,
        "description": criterion.description,
    }
    if criterion.probe is not None:
        out["probe"] = criterion.probe.to_data()
    return out


def _promoted(data: dict[str, Any], where: _Source) -> list[tuple[str, str, PromotedProbe]]:
    """The `promoted` entries (and `probe_gates`) as (kind, criterion id or "", probe)."""
    raw = data.get("promoted", [])
    extra = data.get("probe_gates", [])
    for key, value in (("promoted", raw), ("probe_gates", extra)):
        if not isinstance(value, list):
            raise where.error((key,), "a list of probes")
    out: list[tuple[str, str, PromotedProbe]] = []
    items = [("promoted", i, x) for i, x in enumerate(raw)]
    items += [("probe_gates", i, {**x, "as": "gate"} if isinstance(x, dict) else x)
              for i, x in enumerate(extra)]  # fmt: skip
    for field_name, i, item in items:
        kind, target, probe = _promoted_item(item, (field_name, i), where)
        if kind == "gate" and any(k == "gate" and p.id == probe.id for k, _, p in out):
            continue  # a gate promotion is recorded under both keys
        out.append((kind, target, probe))
    return out


def _promoted_item(item: object, at: Loc, where: _Source) -> tuple[str, str, PromotedProbe]:
    # Imported here: the probes package imports this module (promotion builds rubrics).
    from polygon_voice.probes.definition import POLARITIES, wording_hash
    from polygon_voice.probes.deterministic import BUILTIN_PROBES, RULES

    if not isinstance(item, dict):
        raise where.error(at, "a mapping with 'probe', 'question', 'polarity', 'as'")
    where.check_keys(item, at, PROMOTED_FIELDS)
    probe_id, question = item.get("probe"), item.get("question")
    if not isinstance(probe_id, str) or not probe_id.strip():
        raise where.error((*at, "probe"), "the probe's id (text)")
    if not isinstance(question, str) or not question.strip():
        raise where.error((*at, "question"), "the probe's question (text)")
    polarity, kind, rule = item.get("polarity"), item.get("as"), item.get("rule")
    if "rule" not in item:
        # Promotions written before the rule was recorded: a built-in probe with the same
        # id and wording is the one that was promoted, so its rule still answers it.
        same = (b for b in BUILTIN_PROBES if b.id == probe_id and b.question == question)
        rule = next((b.rule for b in same), None)
    if polarity not in POLARITIES:
        raise where.error((*at, "polarity"), f"one of {', '.join(POLARITIES)}")
    if not isinstance(kind, str) or kind not in PROMOTED_KINDS:
        raise where.error((*at, "as"), f"one of {', '.join(PROMOTED_KINDS)}, got {kind!r}")
    if rule is not None and (not isinstance(rule, str) or rule not in RULES):
        raise where.error((*at, "rule"), f"one of {', '.join(RULES)}, got {rule!r}")
    digest = item.get("hash", wording_hash(question))
    if digest != wording_hash(question):
        # PROBE-5: the hash names the wording that was promoted; an edited question is a
        # different probe and must be promoted again, not judged under the old name.
        raise where.error((*at, "hash"), f"{digest!r} is not the hash of its question")
    target = item.get("criterion", "")
    probe = PromotedProbe(
        probe_id,
        question,
        cast(Polarity, polarity),
        str(digest),
        rule,
        str(item.get("applies_when") or ""),
    )
    return kind, target if isinstance(target, str) else "", probe


def _attach(
    criteria: tuple[Criterion, ...], promoted: list[tuple[str, PromotedProbe]], where: _Source
) -> tuple[Criterion, ...]:
    """The criteria with each promoted probe attached to the criterion it became."""
    by_id = {c.id: c for c in criteria}
    for target, probe in promoted:
        # Older promotions did not name the criterion; their description names the probe.
        marker = f"probe {probe.id}@{probe.hash})"
        name = target or next((c.id for c in criteria if c.description.endswith(marker)), "")
        if name not in by_id:
            message = f"probe {probe.id!r} names no criterion of the rubric"
            raise where.error(("promoted",), message)
        by_id[name] = Criterion(by_id[name].id, by_id[name].weight, by_id[name].description, probe)
    return tuple(by_id[c.id] for c in criteria)


def _criteria(raw: Any, where: _Source) -> tuple[Criterion, ...]:
    if not isinstance(raw, list) or not raw:
        raise where.error(("criteria",), "a non-empty list of {id, weight}")
    out: list[Criterion] = []
    for i, item in enumerate(raw):
        at: Loc = ("criteria", i)
        if not isinstance(item, dict):
            raise where.error(at, "needs an 'id' (text) and a 'weight' (integer)")
        where.check_keys(item, at, CRITERION_FIELDS)
        criterion_id = item.get("id")
        if not isinstance(criterion_id, str) or not criterion_id.strip():
            raise where.error((*at, "id"), f"a non-empty text (got {brief(criterion_id)})")
        weight = item.get("weight")
        if isinstance(weight, bool) or not isinstance(weight, int) or weight <= 0:
            raise where.error((*at, "weight"), f"a positive integer, got {weight!r}")
        if any(c.id == criterion_id for c in out):
            raise where.error((*at, "id"), f"{criterion_id!r} is given twice")
        description = item.get("description", "")
        if not isinstance(description, str | None):
            raise where.error((*at, "description"), f"a text (got {brief(description)})")
        out.append(Criterion(criterion_id, weight, description or ""))
    return tuple(out)


def _gates(raw: Any, probe_gates: tuple[PromotedProbe, ...], where: _Source) -> frozenset[str]:
    # A promoted probe's gate applies whether or not `gates` lists it: promoting made it one.
    allowed = {*GATES, *(p.gate for p in probe_gates)}
    names = ", ".join([*GATES, f"{PROBE_GATE_PREFIX}<id of a promoted gate>"])
    if not isinstance(raw, list):
        raise where.error(("gates",), f"a list of {names} (got {brief(raw)})")
    for i, gate in enumerate(raw):
        if not isinstance(gate, str) or gate not in allowed:
            close = difflib.get_close_matches(str(gate), sorted(allowed), n=1, cutoff=0.6)
            hint = f"did you mean {close[0]!r}?" if close else f"one of {names}"
            raise where.error(("gates", i), f"unknown gate {brief(gate)} ({hint})")
    return frozenset({*raw, *(p.gate for p in probe_gates)})

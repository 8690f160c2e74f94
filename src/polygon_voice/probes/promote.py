"""Promotion (PROBE-6): a probe that proved important becomes a criterion or a gate.

Promotion never edits a rubric in place: it writes a new custom rubric YAML, whose version
id is the rubric module's name + content hash, so scores under the old and new rubric are
never compared (RUB-6).

Weights: the new criterion gets weight W and the existing weights are scaled by (100-W)/100,
rounded by largest remainder so they sum to exactly 100-W (ties go to the earlier criterion),
and a weight rounded to 0 takes 1 from the then largest, since every criterion needs a
positive weight. Example: v2 plus a criterion of weight 10 scales to 90: goal 22.5 -> 23 and
instruction 13.5 -> 14 (the earliest of the .5 remainders), tool use 13.5 -> 13, the four
10s -> 9, persona 4.5 -> 4.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from polygon_voice.judge.rubric import (
    PROBE_GATE_PREFIX,
    TOTAL_WEIGHT,
    Rubric,
    rubric_from_data,
)
from polygon_voice.probes.definition import Probe


class PromotionError(ValueError):
    """A promotion that cannot be made (weight out of range, name taken)."""


def renormalised(weights: dict[str, int], new_weight: int) -> dict[str, int]:
    """The existing weights scaled to sum to 100 - new_weight (largest remainder)."""
    if not 1 <= new_weight <= TOTAL_WEIGHT - len(weights):
        raise PromotionError(
            f"weight: 1 to {TOTAL_WEIGHT - len(weights)}, so every existing criterion keeps "
            f"at least 1; got {new_weight}"
        )
    room = TOTAL_WEIGHT - new_weight
    total = sum(weights.values())
    quotas = {k: w * room / total for k, w in weights.items()}
    out = {k: math.floor(q) for k, q in quotas.items()}
    order = sorted(quotas, key=lambda k: (-(quotas[k] - out[k]), list(quotas).index(k)))
    for key in order[: room - sum(out.values())]:
        out[key] += 1
    for key in [k for k, w in out.items() if w == 0]:
        out[key] = 1
        out[max(out, key=lambda k: out[k])] -= 1
    return out


@dataclass(frozen=True)
class Promotion:
    """The new rubric's YAML data and its version id."""

    data: dict[str, Any]
    rubric: Rubric

    def write(self, path: Path) -> Path:
        """Write the rubric YAML (loadable with `polygon run --rubric PATH`)."""
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(yaml.safe_dump(self.data, sort_keys=False), encoding="utf-8")
        return path


def _base_data(base: Rubric) -> dict[str, Any]:
    return {
        "criteria": [
            {"id": c.id, "weight": c.weight, "description": c.description} for c in base.criteria
        ],
        "gates": sorted(base.gates),
        "rules": base.rules,
    }


def _base_promoted(base: Rubric) -> list[dict[str, Any]]:
    # A rubric promoted again keeps its earlier promotions, so their probes are still judged.
    out: list[dict[str, Any]] = []
    for c in base.promoted_criteria:
        assert c.probe is not None
        out.append({**c.probe.to_data(), "as": "criterion", "criterion": c.id})
    out += [{**p.to_data(), "as": "gate"} for p in base.probe_gates]
    return out


def _origin(probe: Probe, base: Rubric, kind: str) -> dict[str, str | None]:
    # Kept in the file so the new rubric says where its criterion or gate came from, and so
    # the judges can ask the probe's question (its rule, or the LLM judge) when judging.
    return {
        "probe": probe.id,
        "hash": probe.hash,
        "question": probe.question,
        "polarity": probe.polarity,
        "rule": probe.rule,
        "applies_when": probe.applies_when,
        "as": kind,
        "from_rubric": base.version,
    }


def to_criterion(base: Rubric, probe: Probe, name: str, weight: int) -> Promotion:
    """A new rubric version: `base` plus a criterion `name` of `weight`, others rescaled."""
    if name in base.weights:
        raise PromotionError(f"criterion {name!r} is already in rubric {base.version}")
    scaled = renormalised(base.weights, weight)
    data = _base_data(base)
    for item in data["criteria"]:
        item["weight"] = scaled[item["id"]]
    good = "yes" if probe.polarity == "desired" else "no"
    data["criteria"].append(
        {
            "id": name,
            "weight": weight,
            "description": f"{probe.question} (good answer: {good}; probe {probe.id}@{probe.hash})",
        }
    )
    data = {
        "name": f"{_stem(base)}+{name}",
        **data,
        "promoted": [
            *_base_promoted(base),
            {**_origin(probe, base, "criterion"), "criterion": name},
        ],
    }
    return Promotion(data, rubric_from_data(data, f"promotion of {probe.id}"))


def to_gate(base: Rubric, probe: Probe) -> Promotion:
    """A new rubric version: `base` plus the probe as a hard gate (a wrong answer fails).

    The gate is named `probe:<id>` in `gates` and its probe recorded under `probe_gates`, so
    the judges can ask it; a wrong answer fails the call. The id and wording hash also go into
    the name, so the version is new.
    """
    if any(p.id == probe.id for p in base.probe_gates):
        raise PromotionError(f"probe {probe.id!r} is already a gate of rubric {base.version}")
    data = _base_data(base)
    # Named in `gates` too, so the file lists every gate the version applies.
    data["gates"] = sorted({*data["gates"], f"{PROBE_GATE_PREFIX}{probe.id}"})
    origin = _origin(probe, base, "gate")
    data = {
        "name": f"{_stem(base)}+gate-{probe.id}-{probe.hash}",
        **data,
        "probe_gates": [*({**p.to_data(), "as": "gate"} for p in base.probe_gates), origin],
        "promoted": [*_base_promoted(base), origin],
    }
    return Promotion(data, rubric_from_data(data, f"promotion of {probe.id}"))


def _stem(base: Rubric) -> str:
    # A custom version is name-digest; the digest changes anyway, so keep only the name.
    return base.version.rsplit("-", 1)[0] if "-" in base.version else base.version

"""Probe definitions (PROBE-1, -2, -5): a yes/no question, its polarity, its wording's hash.

A probe file is YAML: `probes:` (or a bare list) of `{id, question, polarity, applies_when,
rule}`. `rule` names a built-in deterministic probe that answers it without a model; a probe
without one is asked of the LLM. The hash covers only the whitespace-normalised wording, so
re-indenting a file keeps a trend going while rewording starts a new series (PROBE-5).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import yaml

from polygon_voice.model.probes import Polarity

POLARITIES: tuple[Polarity, ...] = ("desired", "guardrail")
HASH_CHARS = 12


class ProbeError(ValueError):
    """A probe file that cannot be used; the message names the file and the field."""


def wording_hash(question: str) -> str:
    """The probe's version: a hash of its wording with all runs of whitespace made one space."""
    normalised = " ".join(question.split())
    return hashlib.sha256(normalised.encode("utf-8")).hexdigest()[:HASH_CHARS]


@dataclass(frozen=True)
class Probe:
    """One yes/no question about one behaviour."""

    id: str
    question: str
    polarity: Polarity
    applies_when: str = ""
    rule: str | None = None  # a built-in deterministic probe; None: asked of the LLM

    @property
    def hash(self) -> str:
        """The wording's content hash (PROBE-5)."""
        return wording_hash(self.question)

    @property
    def source(self) -> str:
        """Who answers it: `deterministic` (rules) or `llm`."""
        return "deterministic" if self.rule else "llm"


def load_probes(path: Path) -> list[Probe]:
    """The probes of a YAML file; ProbeError naming the field when it is not usable."""
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ProbeError(f"{path}: cannot read: {exc.strerror}") from exc
    except yaml.YAMLError as exc:
        raise ProbeError(f"{path}: not valid YAML: {exc}") from exc
    return probes_from_data(data, str(path))


def probes_from_data(data: Any, source: str) -> list[Probe]:
    """Probes from parsed YAML; `source` names the file in errors."""
    # Imported here: the rule table imports this module for `Probe`.
    from polygon_voice.probes.deterministic import RULES

    raw = data.get("probes") if isinstance(data, dict) else data
    if not isinstance(raw, list) or not raw:
        raise ProbeError(f"{source}: field 'probes': a non-empty list of {{id, question}}")
    out: list[Probe] = []
    for i, item in enumerate(raw):
        where = f"{source}: field 'probes[{i}]'"
        if not isinstance(item, dict):
            raise ProbeError(f"{where}: a mapping with 'id', 'question' and 'polarity'")
        probe_id, question = item.get("id"), item.get("question")
        if not isinstance(probe_id, str) or not probe_id.strip():
            raise ProbeError(f"{where}.id: a non-empty text")
        if not isinstance(question, str) or not question.strip():
            raise ProbeError(f"{where}.question: a non-empty text")
        polarity = item.get("polarity")
        if polarity not in POLARITIES:
            raise ProbeError(f"{where}.polarity: one of {', '.join(POLARITIES)}, got {polarity!r}")
        rule = item.get("rule")
        if rule is not None and rule not in RULES:
            raise ProbeError(f"{where}.rule: one of {', '.join(RULES)}, got {rule!r}")
        if any(p.id == probe_id for p in out):
            raise ProbeError(f"{where}.id: {probe_id!r} is given twice")
        note = item.get("applies_when", "")
        out.append(Probe(probe_id, question, cast(Polarity, polarity), str(note or ""), rule))
    return out

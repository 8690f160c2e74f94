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
from polygon_voice.scenario.data_errors import first_unknown_key, located, unknown_key
from polygon_voice.scenario.errors import SuiteError
from polygon_voice.scenario.messages import brief
from polygon_voice.scenario.parsing import read_data

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


PROBE_FIELDS = ("id", "question", "polarity", "applies_when", "rule")
FILE_FIELDS = ("probes",)


def load_probes(path: Path) -> list[Probe]:
    """The probes of a YAML file; ProbeError naming the line and field when it is not usable."""
    try:
        data, root = read_data(path, str(path))
    except SuiteError as exc:
        raise ProbeError(str(exc)) from None
    return probes_from_data(data, str(path), root)


def probes_from_data(data: Any, source: str, root: yaml.Node | None = None) -> list[Probe]:
    """Probes from parsed YAML; `source` names the file and `root` gives lines in errors."""
    # Imported here: the rule table imports this module for `Probe`.
    from polygon_voice.probes.deterministic import RULES

    def fail(loc: tuple[int | str, ...], message: str) -> ProbeError:
        return ProbeError(located(source, root, loc, message))

    at: tuple[int | str, ...] = ("probes",) if isinstance(data, dict) else ()
    if isinstance(data, dict) and (extra := first_unknown_key(data, FILE_FIELDS)) is not None:
        raise fail((extra,), unknown_key(extra, FILE_FIELDS))
    raw = data.get("probes") if isinstance(data, dict) else data
    if not isinstance(raw, list) or not raw:
        raise fail(at, "a non-empty list of {id, question, polarity}")
    out: list[Probe] = []
    for i, item in enumerate(raw):
        where = (*at, i)
        if not isinstance(item, dict):
            raise fail(where, "a mapping with 'id', 'question' and 'polarity'")
        if (extra := first_unknown_key(item, PROBE_FIELDS)) is not None:
            raise fail((*where, extra), unknown_key(extra, PROBE_FIELDS))
        probe_id, question = item.get("id"), item.get("question")
        if not isinstance(probe_id, str) or not probe_id.strip():
            raise fail((*where, "id"), f"a non-empty text (got {brief(probe_id)})")
        if not isinstance(question, str) or not question.strip():
            raise fail((*where, "question"), f"a non-empty text (got {brief(question)})")
        polarity = item.get("polarity")
        if polarity not in POLARITIES:
            message = f"one of {', '.join(POLARITIES)} (got {brief(polarity)})"
            raise fail((*where, "polarity"), message)
        rule = item.get("rule")
        if rule is not None and (not isinstance(rule, str) or rule not in RULES):
            raise fail((*where, "rule"), f"one of {', '.join(RULES)} (got {brief(rule)})")
        if any(p.id == probe_id for p in out):
            raise fail((*where, "id"), f"{probe_id!r} is given twice")
        note = item.get("applies_when", "")
        if not isinstance(note, str | None):
            raise fail((*where, "applies_when"), f"a text (got {brief(note)})")
        out.append(Probe(probe_id, question, cast(Polarity, polarity), note or "", rule))
    return out

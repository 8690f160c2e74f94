"""Which format a record is in: `--format auto` asks each format's `detect` in registry order;
`--format NAME` skips detection. A record no format recognises is a RecordError that lists
what was looked for; a record more than one format recognises goes to the first, and the
others are named so that a surprising choice can be overridden with `--format`."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from polygon_voice.imports.base import Format, RecordError
from polygon_voice.imports.formats import FORMATS

AUTO = "auto"


class UnknownFormat(ValueError):
    """`--format` names no format; the message lists the names."""


def format_names() -> list[str]:
    return [fmt.name for fmt in FORMATS]


def configured(fmt: Format, agent_label: str | None) -> Format:
    """The format with the agent's speaker label applied, for formats that take one: a name
    (csv, lines, ...) or, for formats that tell speakers by channel, a channel number."""
    if agent_label is None:
        return fmt
    with_label = getattr(fmt, "with_agent_label", None)
    if with_label is not None:
        labelled: Format = with_label(agent_label)
        return labelled
    with_channel = getattr(fmt, "with_agent_channel", None)
    if with_channel is not None and agent_label.strip().isdigit():
        channelled: Format = with_channel(int(agent_label))
        return channelled
    return fmt


def _safe_detect(fmt: Format, record: object) -> bool:
    # `detect` must never raise, but a format that does must not stop the import.
    try:
        return bool(fmt.detect(record))
    except Exception:
        return False


@dataclass
class Detector:
    """Chooses the format of each record, from all formats or the one forced."""

    formats: Sequence[Format]
    forced: bool = False
    ambiguous: dict[str, list[str]] = field(default_factory=dict)  # chosen -> also matched

    @classmethod
    def for_name(cls, name: str = AUTO, agent_label: str | None = None) -> Detector:
        if name == AUTO:
            return cls([configured(fmt, agent_label) for fmt in FORMATS])
        for fmt in FORMATS:
            if fmt.name == name:
                return cls([configured(fmt, agent_label)], forced=True)
        raise UnknownFormat(
            f"unknown format {name!r}; choose auto or one of: {', '.join(format_names())}"
        )

    def is_record(self, value: object) -> bool:
        """Whether a whole value (a top-level JSON list) is one record of some format."""
        return any(_safe_detect(fmt, value) for fmt in self.formats)

    def choose(self, record: object) -> Format:
        """The format for `record`; RecordError naming the formats tried when none fits."""
        if self.forced:
            return self.formats[0]
        matches = [fmt for fmt in self.formats if _safe_detect(fmt, record)]
        if not matches:
            names = ", ".join(fmt.name for fmt in self.formats)
            raise RecordError(
                "",
                f"matches no known format (looked for: {names}); name one with --format",
            )
        if len(matches) > 1:
            others = self.ambiguous.setdefault(matches[0].name, [])
            others.extend(m.name for m in matches[1:] if m.name not in others)
        return matches[0]

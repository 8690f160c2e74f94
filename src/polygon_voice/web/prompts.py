"""The prompt editor's files and marks: which files may be edited, saving, lint segments.

Only known files are ever opened: those named by `polygon serve --prompt` and those stored
personas were generated from. A path from a request is looked up among them as a string,
never resolved or joined, so `../` or an absolute path of another file finds nothing.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from polygon_voice.lint.model import AXES, Finding, LintReport
from polygon_voice.store import PersonaRecord


@dataclass(frozen=True)
class PromptFile:
    """A prompt file the editor may open, and why it is known."""

    path: str  # resolved, as personas record it
    named: bool  # given to `polygon serve --prompt`
    personas: int  # stored personas generated from it


def known_prompts(named: Iterable[Path], personas: Sequence[PersonaRecord]) -> list[PromptFile]:
    """The editable prompt files, named ones first, each once."""
    counts: dict[str, int] = {}
    for record in personas:
        counts[record.prompt_path] = counts.get(record.prompt_path, 0) + 1
    named_paths = list(dict.fromkeys(str(path.resolve()) for path in named))
    files = [PromptFile(path, True, counts.get(path, 0)) for path in named_paths]
    files += [PromptFile(path, False, n) for path, n in counts.items() if path not in named_paths]
    return files


def find_prompt(files: Sequence[PromptFile], given: str) -> PromptFile | None:
    """The known file whose path is exactly `given`, else None."""
    return next((f for f in files if f.path == given), None)


def read_prompt(path: str) -> str:
    """The file's text, bytes decoded as they are (its hash is the file's, SIM-3)."""
    return Path(path).read_bytes().decode("utf-8")


def posted_text(text: str, original: str | None) -> str:
    """A textarea's text as the file should hold it: browsers send CRLF line ends, which
    are turned back into LF unless the file used CRLF (its line ends are kept as they were)."""
    if original is not None and "\r\n" in original:
        return text
    return text.replace("\r\n", "\n")


def save_prompt(path: str, text: str) -> None:
    """Write `text` to `path` atomically: a reader sees the old file or the new, never half."""
    target = Path(path)
    fd, temp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(text.encode("utf-8"))
            handle.flush()
            os.fsync(handle.fileno())
        # A file that cannot be stat'ed keeps the temp file's mode.
        with contextlib.suppress(OSError):
            os.chmod(temp, target.stat().st_mode & 0o7777)
        os.replace(temp, target)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise


@dataclass(frozen=True)
class MarkedPiece:
    """A piece of the prompt and the findings (their numbers in `ordered_findings`) over it."""

    text: str
    start: int
    end: int
    findings: tuple[int, ...] = ()
    axes: tuple[str, ...] = field(default=())
    kinds: tuple[str, ...] = field(default=())
    title: str = ""


def ordered_findings(report: LintReport) -> list[Finding]:
    """Every finding, in the order of the text (then of the axes)."""
    found = [f for axis in AXES for f in report.axes[axis].findings]
    return sorted(found, key=lambda f: (f.start, f.end, AXES.index(f.axis)))


def marked_pieces(text: str, findings: Sequence[Finding]) -> list[MarkedPiece]:
    """`text` cut at every finding's start and end; overlapping findings share the pieces
    they both cover, so each character is shown once with all the findings over it."""
    size = len(text)
    spans = [(max(0, min(f.start, size)), max(0, min(f.end, size))) for f in findings]
    marked = [(s, e) for s, e in spans if s < e]  # an empty span marks nothing
    cuts = sorted({0, size, *(s for s, _ in marked), *(e for _, e in marked)})
    pieces: list[MarkedPiece] = []
    for start, end in itertools.pairwise(cuts):
        over = tuple(i for i, (s, e) in enumerate(spans) if s <= start and end <= e and s < e)
        if not over:
            pieces.append(MarkedPiece(text[start:end], start, end))
            continue
        chosen = [findings[i] for i in over]
        pieces.append(
            MarkedPiece(
                text[start:end],
                start,
                end,
                findings=over,
                axes=tuple(dict.fromkeys(f.axis for f in chosen)),
                kinds=tuple(dict.fromkeys(f.kind for f in chosen)),
                title="\n".join(f"{f.axis} ({f.kind}): {f.message}" for f in chosen),
            )
        )
    return pieces

"""A Rich console that never lets a control sequence from the data reach the terminal.

Rich's `escape` only stops markup; a `Text` passes ESC, OSC and C1 controls through raw, so
a transcript could clear the screen, retitle the window or write the clipboard (OSC 52).
Every string this console renders is shown with `textsafe.visible` (ESC as ``\\x1b``):
`Text` and `str` renderables before layout, so the escapes wrap like any other text, and
every other segment as it is written, as a backstop for renderables built elsewhere.
Rich's own styling is applied after this and is untouched.

When its stream is not a terminal (a pipe, a file, a CI log) the console is as wide as the
longest line rather than 80 columns (or `COLUMNS`): piped output is read by programs and
searched by people, so an id or a header is never cut or wrapped there.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from rich.console import Console, ConsoleDimensions, ConsoleOptions, RenderableType
from rich.segment import Segment
from rich.text import Text

from polygon_voice.textsafe import has_invisible, invisible_spans, visible

PIPED_WIDTH = 100_000
"""The width of a console that is not writing to a terminal: wide enough for any line."""


class SafeConsole(Console):
    """`rich.console.Console` with every rendered string made visible (see the module)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # Only a width given in code holds when piped; `COLUMNS` describes a terminal.
        self._given_width: int | None = kwargs.get("width")

    @property
    def size(self) -> ConsoleDimensions:
        measured = super().size
        if self._given_width is None and not self.is_terminal:
            return ConsoleDimensions(PIPED_WIDTH, measured.height)
        return measured

    @size.setter
    def size(self, new_size: tuple[int, int]) -> None:
        self._given_width = new_size[0]
        Console.size.fset(self, new_size)  # type: ignore[attr-defined]

    @property
    def width(self) -> int:
        return self.size.width

    @width.setter
    def width(self, width: int) -> None:
        self._given_width = self._width = width

    def render(
        self, renderable: RenderableType, options: ConsoleOptions | None = None
    ) -> Iterable[Segment]:
        if isinstance(renderable, Text):
            renderable = visible_text(renderable)
        for segment in super().render(renderable, options):
            if segment.control is None and has_invisible(segment.text):
                yield Segment(visible(segment.text), segment.style)
            else:
                yield segment

    def render_str(self, text: str, **kwargs: Any) -> Text:
        return visible_text(super().render_str(text, **kwargs))


def visible_text(text: Text) -> Text:
    """`text` with its controls shown as escapes, each keeping the style it had."""
    plain = text.plain
    if not has_invisible(plain):
        return text
    offsets = sorted({edge for span in invisible_spans(plain) for edge in span})
    pieces: list[Text] = []
    for piece in text.divide(offsets):
        shown = visible(piece.plain)
        if shown != piece.plain:
            replaced = Text(shown, style=piece.style)
            for span in piece.spans:
                replaced.stylize(span.style, 0, len(shown))
            piece = replaced
        pieces.append(piece)
    return text.blank_copy().join(pieces)

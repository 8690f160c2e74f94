"""Tables that never cut what they show, at any width.

Rich fits a table to the console by shortening cells with an ellipsis once wrapping is not
enough, so a run id or a conversation id could end in "…" on a narrow terminal and could
not be copied into the next command. `FitTable` keeps every id whole: it prints a Rich table
when the table's narrowest layout (ids unbroken, other cells wrapped at words) fits the
width, and otherwise one block per row, a "header: value" line per cell, which fits any
width. On a console that is not a terminal the width is unbounded (`cli.console`), so piped
output is always the plain table at full width.

Cells given as `str` are plain text, never Rich markup: table cells hold ids, suite names
and model output, which may contain "[" like any other text.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, RenderResult
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

Cell = Text | str


@dataclass(frozen=True)
class Column:
    """A column: its header, where numbers sit, and whether its cells are ids (never broken)."""

    header: str
    right: bool = False
    whole: bool = False


class FitTable:
    """A titled table of plain cells that is shown whole at any width (see the module)."""

    def __init__(self, title: str, columns: Sequence[Column | str]) -> None:
        self.title = title
        self.columns = [c if isinstance(c, Column) else Column(c) for c in columns]
        self.rows: list[list[Text] | None] = []  # None: a section break

    @property
    def row_count(self) -> int:
        """How many rows were added (section breaks not counted)."""
        return sum(row is not None for row in self.rows)

    def add_row(self, *cells: Cell) -> None:
        """One row; missing trailing cells are empty."""
        if len(cells) > len(self.columns):
            raise ValueError(f"{len(cells)} cells for {len(self.columns)} columns")
        padded = [*cells, *([""] * (len(self.columns) - len(cells)))]
        self.rows.append([cell if isinstance(cell, Text) else Text(cell) for cell in padded])

    def add_section(self) -> None:
        """A line between the rows before and after (a new series, a new group)."""
        self.rows.append(None)

    def table(self) -> Table:
        """The Rich table: id columns unbroken, the rest wrapped at words, never cut."""
        table = Table(title=Text(self.title), title_justify="left")
        for column in self.columns:
            table.add_column(
                Text(column.header),
                justify="right" if column.right else "left",
                no_wrap=column.whole,
                overflow="fold",
            )
        for row in self.rows:
            if row is None:
                table.add_section()
            else:
                table.add_row(*row)
        return table

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        if self.narrowest() <= options.max_width:
            yield self.table()
            return
        yield from self._stacked()

    def narrowest(self) -> int:
        """The width of the table with ids unbroken and every other cell wrapped at words."""
        cells = [row for row in self.rows if row is not None]
        widths = [
            max([_least(Text(column.header), False), *(_least(r[i], column.whole) for r in cells)])
            for i, column in enumerate(self.columns)
        ]
        # Each cell has one space either side; the borders take one column more than cells.
        return sum(width + 2 for width in widths) + len(self.columns) + 1

    def _stacked(self) -> Iterator[Text | Padding]:
        # Too narrow for the table: one block per row, its first cell (an id) on a line of
        # its own, the other cells as "header: value" on the next, wrapped at words.
        yield Text(self.title, style="bold")
        for row in self.rows:
            if row is None:
                continue
            yield Text.assemble("• ", row[0].copy())
            pairs = [
                Text.assemble(f"{column.header}: " if column.header else "", cell.copy())
                for column, cell in zip(self.columns[1:], row[1:], strict=True)
                if cell.plain
            ]
            if pairs:
                yield Padding(Text(" · ").join(pairs), (0, 0, 0, 2))


def _least(cell: Text, whole: bool) -> int:
    # The narrowest a cell can be without cutting: its longest line, or its longest word.
    pieces = cell.plain.splitlines() if whole else cell.plain.split()
    return max((cell_len(piece) for piece in pieces), default=0)

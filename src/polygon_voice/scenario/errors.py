"""The one error a suite file that cannot be loaded raises: where it went wrong and why."""

from __future__ import annotations


class SuiteError(Exception):
    """A suite file could not be loaded; names the file and, when known, the line and field."""

    def __init__(
        self,
        file: str,
        message: str,
        *,
        line: int | None = None,
        column: int | None = None,
        field: str | None = None,
        more: int = 0,
    ) -> None:
        # Only the positional parts go to args: Exception pickles as cls(*args) plus __dict__,
        # so the keyword attributes survive a trip to a worker process.
        super().__init__(file, message)
        self.file = file
        self.message = message
        self.line = line
        self.column = column
        self.field = field
        self.more = more

    def __str__(self) -> str:
        where = self.file
        if self.line is not None:
            where += f":{self.line}"
            if self.column is not None:
                where += f":{self.column}"
        text = (
            f"{where}: {self.field}: {self.message}" if self.field else f"{where}: {self.message}"
        )
        if self.more > 0:
            text += f" (and {self.more} more error{'s' if self.more > 1 else ''})"
        return text

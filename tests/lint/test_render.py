"""The terminal output: lines as written, the span marked under its columns, markup escaped."""

from __future__ import annotations

from rich.console import Console

from polygon_voice.lint import lint
from polygon_voice.lint.render import render


def printed(text: str, width: int = 80) -> str:
    console = Console(width=width, record=True, color_system=None, force_terminal=False)
    console.print(render(text, lint(text, max_tier=1, env={})), soft_wrap=True)
    return console.export_text()


def test_a_long_line_is_printed_whole_not_rewrapped() -> None:
    long_line = "Always greet the caller by name and " + "then listen carefully " * 8
    long_line = long_line.strip() + ", and respond appropriately."
    assert len(long_line) > 200
    out = printed(long_line + "\n")
    assert any(line.endswith(long_line) for line in out.splitlines())


def test_the_caret_is_under_the_marked_columns() -> None:
    text = "Say hello.\nThen respond appropriately to the caller.\n"
    lines = printed(text).splitlines()
    shown = next(
        k for k, line in enumerate(lines) if line.endswith("respond appropriately to the caller.")
    )
    carets = lines[shown + 1]
    column = lines[shown].index("appropriately")
    assert carets.index("^") == column
    assert carets.count("^") == len("appropriately")
    assert "^ 2:14 ambiguity (tier 1, vague-wording)" in carets
    assert lines[shown].startswith("    2 | ")


def test_a_terminal_control_in_the_prompt_is_shown_escaped_and_counted() -> None:
    text = "Hi \x1b[2J there. Respond appropriately.\n"
    lines = printed(text).splitlines()
    shown = next(k for k, line in enumerate(lines) if "appropriately." in line)
    assert "\\x1b[2J" in lines[shown]
    assert "\x1b" not in lines[shown]
    assert lines[shown + 1].index("^") == lines[shown].index("appropriately")


def test_rich_markup_in_the_prompt_prints_literally() -> None:
    text = "[bold]Always[/bold] respond appropriately. [red]x[/red]\n"
    out = printed(text)
    assert "[bold]Always[/bold] respond appropriately. [red]x[/red]" in out


def test_a_clean_prompt_says_so() -> None:
    assert "no findings" in printed("Ask for the order number.\n")

"""The `polygon` command: one module per group of sub-commands, loaded when a command runs."""

from polygon_voice.cli.app import app


def main() -> None:
    """Entry point of the `polygon` command."""
    app()


__all__ = ["app", "main"]

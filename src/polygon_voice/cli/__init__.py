"""The `polygon` command: one module per group of sub-commands, all on one Typer app."""

from polygon_voice.cli import compare as _compare  # noqa: F401  (registers compare)
from polygon_voice.cli import judge as _judge  # noqa: F401  (registers rejudge)
from polygon_voice.cli import lint as _lint  # noqa: F401  (registers lint)
from polygon_voice.cli import noise as _noise  # noqa: F401  (registers noise)
from polygon_voice.cli import personas as _personas  # noqa: F401  (registers personas ...)
from polygon_voice.cli import probes as _probes  # noqa: F401  (registers probes ...)
from polygon_voice.cli import reading as _reading  # noqa: F401  (registers runs, show, gate)
from polygon_voice.cli import runs as _runs  # noqa: F401  (registers run)
from polygon_voice.cli import schema as _schema  # noqa: F401  (registers schema)
from polygon_voice.cli import three_layer as _three_layer  # noqa: F401  (registers demo)
from polygon_voice.cli.app import app


def main() -> None:
    """Entry point of the `polygon` command."""
    app()


__all__ = ["app", "main"]

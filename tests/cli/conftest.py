"""Running the `polygon` command in-process and as a real subprocess."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from polygon_voice.cli import app

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE_SUITE = ROOT / "examples" / "order_line" / "suite.yaml"


class Polygon:
    """Invokes the command with a private database and working folder."""

    def __init__(self, workdir: Path, db: str | None = None) -> None:
        self.workdir = workdir
        # A SQLite file of its own unless the test names a database (a PostgreSQL URL).
        self.db: Path | str = workdir / "polygon.db" if db is None else db
        self.runner = CliRunner()

    def __call__(self, *args: str) -> tuple[int, str, str]:
        """Run in-process; returns (exit code, stdout, stderr)."""
        cwd = Path.cwd()
        os.chdir(self.workdir)
        try:
            result = self.runner.invoke(app, [*args, "--db", str(self.db)])
        finally:
            os.chdir(cwd)
        return result.exit_code, result.stdout, result.stderr

    def subprocess(
        self, *args: str, env: dict[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        """Run as a separate Python process, as a user would."""
        command = [sys.executable, "-m", "polygon_voice", *args, "--db", str(self.db)]
        full_env = {**os.environ, "COLUMNS": "200", **(env or {})}
        return subprocess.run(
            command, cwd=self.workdir, env=full_env, capture_output=True, text=True, timeout=120
        )

"""Where Debian's chromium is: the browser the browser tests drive (no browser is downloaded).

Only the standard library: `dev.py` imports `find_chromium` with the system Python, before
the virtual environment exists, to decide whether CI must install the package.
"""

from __future__ import annotations

import shutil
from pathlib import Path

# Debian's `chromium` package puts its launcher here.
DEBIAN_CHROMIUM = Path("/usr/bin/chromium")
# The machine's network may be closed: without these Chromium keeps dialling Google's
# services and floods the log with refused connections.
CHROMIUM_ARGS = (
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)


def find_chromium(debian: Path = DEBIAN_CHROMIUM, path: str | None = None) -> Path | None:
    """Debian's chromium launcher, else a `chromium` on PATH, else None."""
    if debian.is_file():
        return debian
    on_path = shutil.which("chromium", path=path)
    return Path(on_path) if on_path else None

"""A throwaway PostgreSQL server for the tests: found, started in a temp folder, removed.

Only the standard library: `dev.py` imports `find_bindir` with the system Python, before
the virtual environment exists, to decide whether CI must install the server.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.processes import free_port

# Debian and Ubuntu install each server version here, not on PATH.
DEBIAN_ROOT = Path("/usr/lib/postgresql")
TOOLS = ("initdb", "pg_ctl", "postgres")
SUPERUSER = "postgres"
# PostgreSQL refuses to run as root; as root the server runs as this account instead.
UNPRIVILEGED_ACCOUNT = "nobody"
# Durability is pointless for a database deleted after the tests; skipping it makes
# CREATE DATABASE and every commit cheap.
SETTINGS = {
    "listen_addresses": "127.0.0.1",
    "fsync": "off",
    "synchronous_commit": "off",
    "full_page_writes": "off",
}
# Seconds for each tool; above pg_ctl's own 60 s wait, so that its clearer message wins.
TIMEOUT = 90


class PostgresServerError(RuntimeError):
    """The server binaries are there but the server could not be set up."""


def find_bindir(debian_root: Path = DEBIAN_ROOT, path: str | None = None) -> Path | None:
    """The folder holding initdb, pg_ctl and postgres: Debian's newest version, else PATH's."""
    candidates = sorted(debian_root.glob("*/bin"), key=_version, reverse=True)
    on_path = shutil.which("pg_ctl", path=path)
    if on_path:
        # pg_ctl on PATH may be a symlink into the real folder (as Debian's are).
        candidates += [Path(on_path).parent, Path(on_path).resolve().parent]
    for folder in candidates:
        if all((folder / tool).is_file() for tool in TOOLS):
            return folder
    return None


@contextmanager
def throwaway_server(bindir: Path) -> Iterator[str]:
    """Run a new cluster on a free loopback port; yield its superuser URL; stop and delete it."""
    root = Path(tempfile.mkdtemp(prefix="polygon-pg-"))
    data = root / "data"
    account = _unprivileged_account()
    try:
        if account is not None:
            os.chown(root, *account)
        initdb = [bindir / "initdb", "-D", data, "-U", SUPERUSER, "--auth=trust"]
        _run(account, root, *initdb, "--encoding=UTF8", "--locale=C", "--no-sync")
        port = free_port()
        # The socket goes in our folder: the default (/var/run/postgresql) is not ours to write.
        _configure(data, {**SETTINGS, "port": str(port), "unix_socket_directories": str(root)})
        try:
            log = ["-l", root / "server.log"]
            _run(account, root, bindir / "pg_ctl", "-D", data, *log, "-w", "start")
            yield f"postgresql+psycopg://{SUPERUSER}@127.0.0.1:{port}/postgres"
        finally:
            if (data / "postmaster.pid").exists():
                # immediate: no checkpoint; the data is thrown away next.
                _run(account, root, bindir / "pg_ctl", "-D", data, "-m", "immediate", "-w", "stop")
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _version(bindir: Path) -> tuple[int, ...]:
    try:
        return tuple(int(part) for part in bindir.parent.name.split("."))
    except ValueError:
        return (-1,)


def _unprivileged_account() -> tuple[int, int] | None:
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        return None
    import pwd  # POSIX only, and dev.py imports this module on any system

    try:
        entry = pwd.getpwnam(UNPRIVILEGED_ACCOUNT)
    except KeyError as exc:
        raise PostgresServerError(
            f"running as root, and PostgreSQL refuses root; no '{UNPRIVILEGED_ACCOUNT}' "
            "account to run it as"
        ) from exc
    return entry.pw_uid, entry.pw_gid


def _configure(data: Path, settings: dict[str, str]) -> None:
    # Later lines win in postgresql.conf; appending keeps the file's owner.
    lines = "".join(f"{key} = '{value}'\n" for key, value in settings.items())
    with (data / "postgresql.conf").open("a") as conf:
        conf.write(lines)


def _run(account: tuple[int, int] | None, root: Path, *command: str | Path) -> None:
    """Run a server tool, as `account` if given; PostgresServerError with its output if it fails."""
    args = [str(part) for part in command]
    # cwd: the tools look up their own folder and fail in one the account cannot enter (/root).
    # C locale: the host's may not be installed, and initdb would stop on it.
    env = {**os.environ, "LC_ALL": "C", "LANG": "C"}
    try:
        done = subprocess.run(
            args,
            cwd=root,
            env=env,
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
            user=account[0] if account else None,
            group=account[1] if account else None,
            # No supplementary groups: otherwise root's would be kept.
            extra_groups=[] if account else None,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise PostgresServerError(f"{' '.join(args)}: {exc}") from exc
    if done.returncode != 0:
        log = root / "server.log"
        tail = log.read_text(errors="replace")[-2000:] if log.exists() else ""
        raise PostgresServerError(
            f"{' '.join(args)} exited with {done.returncode}:\n{done.stdout}{done.stderr}{tail}"
        )

"""`polygon run`, `runs` and `show` on PostgreSQL, as on SQLite; passwords never printed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from polygon_voice.store import Store
from tests.cli.conftest import EXAMPLE_SUITE, Polygon

SEED = "7"
SECRET = "s3cret-Pa55word"


def run_example(polygon: Polygon, out: str) -> dict[str, Any]:
    """Run the example suite with SEED; its report.json."""
    code, _, err = polygon("run", str(EXAMPLE_SUITE), "--seed", SEED, "--out", out)
    assert code == 0, err
    report: dict[str, Any] = json.loads((polygon.workdir / out / "report.json").read_text())
    return report


def endings(report: dict[str, Any]) -> list[tuple[str, str]]:
    return [(c["id"], c["end_reason"]) for c in report["conversations"]]


def test_a_run_on_postgres_equals_the_same_run_on_sqlite(
    polygon: Polygon, postgres_url: str
) -> None:
    on_pg = Polygon(polygon.workdir, db=postgres_url)
    sqlite_report = run_example(polygon, "sqlite")
    pg_report = run_example(on_pg, "pg")
    assert len(pg_report["conversations"]) == 9
    assert endings(pg_report) == endings(sqlite_report)
    transcripts = [polygon.workdir / out / "transcripts.jsonl" for out in ("sqlite", "pg")]
    assert transcripts[0].read_bytes() == transcripts[1].read_bytes()
    run_id = pg_report["run_id"]
    with Store(postgres_url) as store:  # stored in PostgreSQL, not in the SQLite file
        assert [run.id for run in store.list_runs()] == [run_id]

    code, out, _ = on_pg("runs")
    assert code == 0
    assert run_id[:8] in out
    assert sqlite_report["run_id"][:8] not in out
    code, out, _ = on_pg("show", run_id[:6])
    assert code == 0
    assert f"Run {run_id}" in out
    assert "transferred" in out
    code, out, _ = on_pg("show", run_id, "--conversation", "crm-timeout-then-retry")
    assert code == 0
    assert "timed_out" in out
    assert "orders/5590.quantity: 2 -> 10" in out


def test_a_password_in_the_url_is_never_printed_or_stored(
    polygon: Polygon, postgres_url: str
) -> None:
    url = sa.make_url(postgres_url)
    if url.password is None:  # the test server trusts local users, so any password works
        url = url.set(password=SECRET)
    secret = str(url.password)
    on_pg = Polygon(polygon.workdir, db=url.render_as_string(hide_password=False))
    result = on_pg.subprocess("run", str(EXAMPLE_SUITE), "--out", "out")
    assert result.returncode == 0, result.stderr
    printed = [result.stdout, result.stderr, on_pg("runs")[1]]
    report = json.loads((polygon.workdir / "out" / "report.json").read_text())
    printed.append(on_pg("show", report["run_id"])[1])
    for name in ("report.json", "transcripts.jsonl"):
        printed.append((polygon.workdir / "out" / name).read_text())
    assert not [text for text in printed if secret in text]


@pytest.mark.parametrize(
    "command", [("runs",), ("show", "abc"), ("run", str(EXAMPLE_SUITE))], ids=lambda c: c[0]
)
def test_an_unreachable_server_is_one_masked_error(
    tmp_path: Path, command: tuple[str, ...]
) -> None:
    # Port 1 on loopback: nothing listens there, so the connection is refused at once.
    polygon = Polygon(tmp_path, db="postgresql+psycopg://u:secret@127.0.0.1:1/x")
    result = polygon.subprocess(*command)
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert "secret" not in result.stdout + result.stderr
    assert "postgresql+psycopg://u:***@127.0.0.1:1/x" in result.stderr

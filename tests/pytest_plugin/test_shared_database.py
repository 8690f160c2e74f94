"""pytest-xdist workers open one new database at the same moment: it is made once, and every
worker gets it (before, the loser of the race failed with `table runs already exists`)."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

OPEN = """
import sys, time
from pathlib import Path
from polygon_voice import open_store
go = Path(sys.argv[2])
Path(sys.argv[3]).touch()  # imported, ready
while not go.exists():
    time.sleep(0.005)
store = open_store(sys.argv[1])
print(len(store.list_runs()))
store.close()
"""


def test_workers_opening_a_new_database_at_once_all_get_it(tmp_path: Path) -> None:
    for attempt in range(3):
        db = tmp_path / f"shared-{attempt}.db"
        go = tmp_path / f"go-{attempt}"
        workers = [
            subprocess.Popen(
                [
                    sys.executable,
                    "-c",
                    OPEN,
                    str(db),
                    str(go),
                    str(tmp_path / f"ready-{attempt}-{n}"),
                ],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for n in range(3)
        ]
        deadline = time.monotonic() + 60
        while len(list(tmp_path.glob(f"ready-{attempt}-*"))) < 3 and time.monotonic() < deadline:
            time.sleep(0.01)
        go.touch()  # all three open the database now
        results = [worker.communicate(timeout=60) for worker in workers]
        assert [
            (w.returncode, out.strip()) for w, (out, _) in zip(workers, results, strict=True)
        ] == [(0, "0")] * 3, [err for _, err in results]

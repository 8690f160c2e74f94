"""A results database filled by real runs, and test clients of the web app over it.

One database for the session: the three-layer suite against both reference agents (and
once under rubric v2, which no comparison may mix with v3), personas generated from a copy
of a prompt and a run of a suite that names them, and a run whose caller lines, tool
results and persona carry script payloads. Tests that change something (a saved prompt, a
marked persona) use prompts and personas of their own or put things back.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from polygon_voice.api import run_suite
from polygon_voice.cli import app as cli
from polygon_voice.store import PersonaRecord, Store
from polygon_voice.web.app import create_app
from polygon_voice.web.settings import WebSettings
from tests.payloads import hostile_suite

ROOT = Path(__file__).resolve().parents[2]
ORDER_LINE = ROOT / "examples" / "order_line"
WEAK_PROMPT = ROOT / "examples" / "prompts" / "bad_prompt.md"
BASE_URL = "http://127.0.0.1:8000"
# No model of the developer's shell may change what the personas are.
MODEL_VARIABLES = (
    "POLYGON_BASE_URL",
    "POLYGON_API_KEY",
    "POLYGON_CALLER_MODEL",
    "POLYGON_CALLER_BASE_URL",
    "POLYGON_CALLER_API_KEY",
    "POLYGON_LOGPROBS_URL",
)


@dataclass(frozen=True)
class Stored:
    """What the session's database holds."""

    root: Path
    db_url: str
    flawed: str  # run ids
    robust: str
    robust_v2: str
    personas_run: str
    hostile: str
    prompt: Path  # the prompt the personas were made from (a copy, editable)
    personas: tuple[PersonaRecord, ...]

    def settings(self, **changes: object) -> WebSettings:
        """Settings over this database; the weak prompt example's copy is editable too."""
        values: dict[str, object] = {
            "db_url": self.db_url,
            "prompt_files": (self.root / "weak.md",),
        }
        values.update(changes)
        return WebSettings(**values)  # type: ignore[arg-type]


def _personas_suite(path: Path, records: list[PersonaRecord]) -> Path:
    """The order line's tools and agent, one scenario per stored persona."""
    example = (ORDER_LINE / "suite.yaml").read_text()
    head = example.split("\nscenarios:", 1)[0].replace("agent.py:", f"{ORDER_LINE / 'agent.py'}:")
    lines = [head, "scenarios:"]
    for number, record in enumerate(records, 1):
        lines += [
            f"  - id: generated-{number}",
            f"    persona_ref: {record.id}",
            "    caller: scripted",
            f"    script: [{{say: 'Order {record.persona.facts['order_id']}.'}}]",
        ]
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.fixture(scope="session")
def stored(tmp_path_factory: pytest.TempPathFactory) -> Stored:
    root = tmp_path_factory.mktemp("web")
    db_url = f"sqlite:///{root / 'polygon.db'}"
    prompt = root / "prompt.md"
    prompt.write_text((ORDER_LINE / "prompt.md").read_text())
    (root / "weak.md").write_text(WEAK_PROMPT.read_text())
    env = dict.fromkeys(MODEL_VARIABLES)
    generated = CliRunner().invoke(
        cli,
        ["personas", "generate", "--prompt", str(prompt), "--n", "6", "--db", db_url],
        env=env,  # type: ignore[arg-type]
    )
    assert generated.exit_code == 0, generated.output
    with Store(db_url) as store:
        options = {"store": store, "write_files": False}
        flawed = run_suite("three-layer", agent="reference:flawed", **options).run_id
        robust = run_suite("three-layer", agent="reference:robust", **options).run_id
        robust_v2 = run_suite(
            "three-layer", agent="reference:robust", rubric="v2", **options
        ).run_id
        records = store.list_personas()
        personas_run = run_suite(_personas_suite(root / "personas.yaml", records), **options)
        hostile = run_suite(hostile_suite(root / "hostile.yaml"), **options).run_id
    return Stored(
        root=root,
        db_url=db_url,
        flawed=flawed,
        robust=robust,
        robust_v2=robust_v2,
        personas_run=personas_run.run_id,
        hostile=hostile,
        prompt=prompt,
        personas=tuple(records),
    )


@pytest.fixture
def client(stored: Stored) -> Iterator[TestClient]:
    """A client of the app on loopback (no token), as a browser on this machine is."""
    with TestClient(create_app(stored.settings()), base_url=BASE_URL) as test_client:
        yield test_client

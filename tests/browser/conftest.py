"""A real browser against `polygon serve` over a database filled by real runs.

Debian's chromium is driven by Playwright; no browser is ever downloaded. Without chromium
the tests skip, except in CI (CI=true), where dev.py installs it and a missing one fails.
One database, one server and one browser serve this folder's tests; each test gets a fresh
page whose dialogs, console messages and page errors are recorded, and its screen is saved
to out/screenshots/ (the CI artefacts), on failure too.

The fixtures are package-scoped, not session-scoped: Playwright's sync API keeps an event
loop running while the browser is open, and every later test that calls asyncio.run (the
command line in-process, for one) would fail beside it.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import pytest

from tests.browser.chromium import CHROMIUM_ARGS, find_chromium
from tests.payloads import hostile_prompt, hostile_suite
from tests.processes import free_port, stop

if TYPE_CHECKING:
    from playwright.sync_api import (
        Browser,
        ConsoleMessage,
        Dialog,
        FloatRect,
        Page,
        Response,
        ViewportSize,
    )

ROOT = Path(__file__).resolve().parents[2]
SCREENSHOTS = ROOT / "out" / "screenshots"
# The polygon command of the environment running the tests.
POLYGON = Path(sys.executable).parent / "polygon"
WEAK_PROMPT = ROOT / "examples" / "prompts" / "bad_prompt.md"
SERVER_START_SECONDS = 60
COMMAND_SECONDS = 300
VIEWPORT: ViewportSize = {"width": 1280, "height": 900}
# A screenshot keeps the top of a longer page: the whole demo report would be megabytes.
SHOT_MAX_HEIGHT = 4000


def _unavailable(reason: str) -> NoReturn:
    # CI installs chromium (dev.py), so there a missing one is a failure, never a quiet skip.
    if os.environ.get("CI") == "true":
        pytest.fail(f"{reason} (CI=true: the browser tests must run)", pytrace=False)
    pytest.skip(reason)


@pytest.fixture(scope="package")
def chromium_path() -> Path:
    """Debian's chromium, or a skip (a failure in CI) saying what is missing."""
    found = find_chromium()
    if found is None:
        _unavailable(
            "no chromium: found neither /usr/bin/chromium nor chromium on PATH "
            "(Debian: apt-get install chromium); the browser tests never download one"
        )
    try:
        import playwright.sync_api  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError as exc:
        _unavailable(f"needs the test and web extras ({exc.name}): pip install -e '.[test,web]'")
    return found


# --- the database: real runs -------------------------------------------------------------


@dataclass
class Filled:
    """What the session's database holds, and the files the runs left."""

    db_url: str
    folder: Path
    prompt: Path
    flawed: str  # the demo's runs: flawed and robust agents, rubric v3
    robust: str
    robust_v2: str  # the robust agent under rubric v2: refused beside the v3 runs
    noisy: str  # the flawed agent on the corrections, callers through recognition noise
    hostile: str  # payloads in caller lines, persona, tool results
    personas: list[str]  # generated from `prompt`
    demo_report: Path
    hostile_report: Path


def _clean_env() -> dict[str, str]:
    """The environment without Polygon's settings: no model is named, nothing leaks in."""
    return {key: value for key, value in os.environ.items() if not key.startswith("POLYGON_")}


def polygon(*args: str | Path, cwd: Path) -> str:
    """Run the polygon command; its stdout, or a failure showing what it printed."""
    command = [str(POLYGON), *(str(arg) for arg in args)]
    done = subprocess.run(
        command,
        cwd=cwd,
        env=_clean_env(),
        capture_output=True,
        text=True,
        timeout=COMMAND_SECONDS,
        check=False,
    )
    if done.returncode != 0:
        pytest.fail(
            f"{' '.join(command)} exited {done.returncode}\n"
            f"stdout:\n{done.stdout}\nstderr:\n{done.stderr}",
            pytrace=False,
        )
    return done.stdout


def _run_id(output: str) -> str:
    """The id in `polygon run`'s last line (`Run ID: ...`)."""
    found: list[str] = re.findall(r"\bRun ([0-9a-f]{6,}):", output)
    if not found:
        pytest.fail(f"no run id in polygon run's output:\n{output}", pytrace=False)
    return found[-1]


@pytest.fixture(scope="package")
def filled(chromium_path: Path, tmp_path_factory: pytest.TempPathFactory) -> Filled:
    """A SQLite database filled by real runs of the command (a few seconds): the demo's,
    a rubric v2 run, a noisy run, the hostile run, and personas made from the prompt."""
    from polygon_voice.store.store import Store

    folder = tmp_path_factory.mktemp("browser")
    db_url = f"sqlite:///{folder / 'polygon.db'}"
    prompt = hostile_prompt(folder / "prompt.md", WEAK_PROMPT)
    polygon("demo", "--out", folder / "demo", "--db", db_url, "--quiet", cwd=folder)
    with Store(db_url) as store:
        demo = {run.agent: run.id for run in store.list_runs() if run.suite == "three-layer"}
    v2 = polygon(
        "run", "three-layer", "--agent", "reference:robust", "--rubric", "v2",
        "--out", folder / "v2", "--db", db_url, "--quiet", cwd=folder,
    )  # fmt: skip
    # Recognition noise on the callers: what the agent heard differs from what was said.
    noisy = polygon(
        "run", "three-layer", "--agent", "reference:flawed", "--noise", "0.3",
        "--scenario", "corr-*", "--out", folder / "noisy", "--db", db_url, "--quiet", cwd=folder,
    )  # fmt: skip
    polygon(
        "personas", "generate", "--prompt", prompt, "--n", "4", "--db", db_url, "-q", cwd=folder
    )
    with Store(db_url) as store:
        personas = [record.id for record in store.list_personas(prompt_path=str(prompt))]
    suite = hostile_suite(folder / "hostile.yaml", persona_ref=personas[0])
    hostile = _run_id(
        polygon("run", suite, "--out", folder / "hostile", "--db", db_url, "-q", cwd=folder)
    )
    hostile_report = folder / "hostile.html"
    polygon("report", hostile, "--html", hostile_report, "--db", db_url, cwd=folder)
    return Filled(
        db_url=db_url,
        folder=folder,
        prompt=prompt,
        flawed=demo["reference:flawed"],
        robust=demo["reference:robust"],
        robust_v2=_run_id(v2),
        noisy=_run_id(noisy),
        hostile=hostile,
        personas=personas,
        demo_report=folder / "demo" / "report.html",
        hostile_report=hostile_report,
    )


# --- the server --------------------------------------------------------------------------


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return bool(response.status == 200)
    except (urllib.error.URLError, OSError):
        return False


@pytest.fixture(scope="package")
def server(filled: Filled) -> Iterator[str]:
    """`polygon serve` on a free loopback port over the filled database; its base URL."""
    port = free_port()
    log = filled.folder / "serve.log"
    command = [
        str(POLYGON), "serve", "--db", filled.db_url, "--port", str(port),
        "--prompt", str(filled.prompt),
    ]  # fmt: skip
    with log.open("w") as sink:
        process = subprocess.Popen(
            command, cwd=filled.folder, env=_clean_env(), stdout=sink, stderr=subprocess.STDOUT
        )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + SERVER_START_SECONDS
        while not _answers(base + "/"):
            if process.poll() is not None or time.monotonic() > deadline:
                pytest.fail(
                    f"polygon serve did not answer on {base} (exit {process.poll()}); "
                    f"its output:\n{log.read_text()}",
                    pytrace=False,
                )
            time.sleep(0.2)
        yield base
    finally:
        stop(process)


# --- the browser -------------------------------------------------------------------------


@pytest.fixture(scope="package")
def browser(chromium_path: Path) -> Iterator[Browser]:
    """One headless chromium for the session."""
    from playwright.sync_api import sync_playwright

    # This session's screens only: no picture of an earlier run is taken for this one's.
    shutil.rmtree(SCREENSHOTS, ignore_errors=True)
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(
            executable_path=str(chromium_path), headless=True, args=list(CHROMIUM_ARGS)
        )
        try:
            yield launched
        finally:
            launched.close()


@dataclass
class Watched:
    """What a page did that a test may forbid: dialogs, console lines, script errors."""

    dialogs: list[str] = field(default_factory=list)
    console: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)

    def csp_violations(self) -> list[str]:
        return [line for line in self.console if "Content Security Policy" in line]

    def problems(self) -> list[str]:
        """Anything that shows script ran from data, or the page's own script broke."""
        console = [line for line in self.console if line.startswith("error")]
        return self.dialogs + self.errors + console + self.csp_violations()


@dataclass
class Screen:
    """A test's page, what it did, and where its screenshots go."""

    page: Page
    watched: Watched
    name: str

    def shoot(self, label: str = "") -> Path:
        """Save the whole page as out/screenshots/NAME[-LABEL].png."""
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        path = SCREENSHOTS / f"{self.name}{'-' + label if label else ''}.png"
        height = self.page.evaluate("document.documentElement.scrollHeight")
        clip: FloatRect = {
            "x": 0,
            "y": 0,
            "width": VIEWPORT["width"],
            "height": min(height, SHOT_MAX_HEIGHT),
        }
        self.page.screenshot(path=str(path), full_page=True, clip=clip)
        return path


def open_prompt_editor(page: Page, server: str, prompt: Path) -> None:
    """Open the editor of `prompt` the way a user does: its row in the prompts list."""
    page.goto(server + "/prompts")
    page.locator("[data-testid=prompt-row] a", has_text=prompt.name).first.click()
    page.wait_for_url("**/prompts/edit?*")


def watch(page: Page) -> Watched:
    """Record the page's dialogs (dismissed), console messages, errors and requests."""
    watched = Watched()

    def on_dialog(dialog: Dialog) -> None:
        watched.dialogs.append(f"dialog {dialog.type}: {dialog.message}")
        dialog.dismiss()

    def on_console(message: ConsoleMessage) -> None:
        # A refused page (a 409 for a refused comparison) is logged as a failed load; the
        # pages' own assets are checked by their responses below instead.
        if not message.text.startswith("Failed to load resource"):
            source = message.location.get("url", "")
            watched.console.append(f"{message.type}: {message.text} ({source})")

    def on_response(response: Response) -> None:
        wanted = response.request.resource_type != "document"
        # Chromium asks every site for an icon; a missing one is not the page's fault.
        if wanted and response.status >= 400 and not response.url.endswith("/favicon.ico"):
            watched.errors.append(f"asset {response.url}: HTTP {response.status}")

    page.on("dialog", on_dialog)
    page.on("console", on_console)
    page.on("pageerror", lambda error: watched.errors.append(f"page error: {error}"))
    page.on("response", on_response)
    page.on("request", lambda request: watched.requests.append(request.url))
    return watched


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    # Keep each phase's report on the test, so the page fixture knows whether it failed.
    report = yield
    setattr(item, f"report_{report.when}", report)
    return report


@pytest.fixture
def screen(browser: Browser, request: pytest.FixtureRequest) -> Iterator[Screen]:
    """A fresh 1280 px page; its screen is saved at the end when the test failed."""
    context = browser.new_context(viewport=VIEWPORT)
    page = context.new_page()
    # The app answers on loopback at once; a long wait only hides a broken page.
    page.set_default_timeout(15_000)
    name = re.sub(r"[^A-Za-z0-9_.-]+", "-", request.node.name.removeprefix("test_")).strip("-")
    shown = Screen(page=page, watched=watch(page), name=name)
    try:
        yield shown
    finally:
        report = getattr(request.node, "report_call", None)
        if report is not None and report.failed and not page.is_closed():
            shown.shoot("FAILED")
        context.close()

"""Take the screenshots of docs/web.md: every screen of `polygon serve`, and the HTML report.

Usage: .venv/bin/python scripts/screenshots.py [--out docs/images]

Builds a fresh demo database in a temporary folder (`polygon demo`, a rubric v2 run for the
refused comparison, personas made from the weak example prompt), starts `polygon serve` on
a free loopback port, and drives Debian's chromium (Playwright, no browser download) over
each screen. Each picture is 1280 px wide and kept under 400 KB: a tall screen is cut at
the height that fits. Needs the `web` and `test` extras and /usr/bin/chromium (or chromium
on PATH).
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.browser.chromium import CHROMIUM_ARGS, find_chromium  # noqa: E402
from tests.processes import free_port, stop  # noqa: E402

POLYGON = Path(sys.executable).parent / "polygon"
WEAK_PROMPT = ROOT / "examples" / "prompts" / "bad_prompt.md"
WIDTH = 1280
# The temporary folder of this run (set in main).
FOLDER = ""
MAX_BYTES = 400_000
# Heights tried in turn until the picture fits MAX_BYTES.
HEIGHTS = (1300, 1100, 900, 700)


def polygon(*args: str | Path, cwd: Path) -> str:
    """Run polygon; stop with its output when it fails."""
    done = subprocess.run(
        [str(POLYGON), *map(str, args)], cwd=cwd, capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        sys.exit(f"polygon {' '.join(map(str, args))} failed:\n{done.stdout}{done.stderr}")
    return done.stdout


def build(folder: Path) -> dict[str, Any]:
    """The demo database, plus what the other screens need; the run ids and files.

    Every path is given relative to `folder` (the working directory), so that the screens
    show `prompt.md`, not where the temporary folder happens to be."""
    from polygon_voice.store.store import Store

    db = "polygon.db"
    polygon("demo", "--out", "demo", "--db", db, "--quiet", cwd=folder)
    polygon(
        "run", "three-layer", "--agent", "reference:robust", "--rubric", "v2",
        "--out", "v2", "--db", db, "--quiet", cwd=folder,
    )  # fmt: skip
    shutil.copyfile(WEAK_PROMPT, folder / "prompt.md")
    polygon(
        "personas", "generate", "--prompt", "prompt.md", "--n", "6", "--db", db, "-q", cwd=folder
    )
    with Store(f"sqlite:///{folder / db}") as store:
        runs = [r for r in store.list_runs() if r.suite == "three-layer"]
        v2 = next(r.id for r in runs if r.config.get("rubric") == "v2")
        demo = {r.agent: r.id for r in runs if r.id != v2}
        flawed = demo["reference:flawed"]
        # A call whose tool failed: the viewer shows the lifecycle, the retry and the writes.
        failed = next(
            c.id for c in store.iter_conversations(flawed) if any(t.error for t in c.tool_calls)
        )
        mine = str(folder / "prompt.md")
        personas = [p.id for p in store.list_personas() if str(folder / p.prompt_path) == mine]
    return {
        "db": db,
        "flawed": flawed,
        "robust": demo["reference:robust"],
        "v2": v2,
        "failed": failed,
        "prompt": Path("prompt.md"),
        "personas": personas,
        "report": folder / "demo" / "report.html",
    }


@contextmanager
def serving(db: str, prompt: Path, cwd: Path) -> Iterator[str]:
    """`polygon serve` on a free loopback port until the block ends; its base URL."""
    port = free_port()
    log = cwd / "serve.log"
    command = [str(POLYGON), "serve", "--db", db, "--port", str(port), "--prompt", str(prompt)]
    with log.open("w") as sink:
        process = subprocess.Popen(command, cwd=cwd, stdout=sink, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(base + "/", timeout=2):
                    break
            except (urllib.error.URLError, OSError):
                if process.poll() is not None or time.monotonic() > deadline:
                    sys.exit(f"polygon serve did not start:\n{log.read_text()}")
                time.sleep(0.2)
        yield base
    finally:
        stop(process)


# Drops the temporary folder from every text on the page: the pictures show `prompt.md`.
UNFOLDER = """prefix => {
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    node.textContent = node.textContent.split(prefix).join("");
  }
}"""


def shoot(page: Any, path: Path, at: str | None = None) -> None:
    """Save the page from the top (or from the element `at`) down, 1280 px wide, as tall
    as fits under MAX_BYTES; charts drawn first."""
    page.wait_for_function(
        "() => [...document.querySelectorAll('.chart')]"
        ".every(c => c.querySelector('svg, .chart-empty, .chart-error'))"
    )
    page.evaluate(UNFOLDER, f"{FOLDER}/")
    top = 0
    if at is not None:
        box = page.locator(at).first.bounding_box()
        scrolled = page.evaluate("window.scrollY")
        top = max(0, int(box["y"] + scrolled) - 16) if box else 0
    full = page.evaluate("document.documentElement.scrollHeight")
    for height in HEIGHTS:
        clip = {"x": 0, "y": top, "width": WIDTH, "height": min(height, full - top)}
        page.screenshot(path=str(path), full_page=True, clip=clip)
        if path.stat().st_size < MAX_BYTES:
            break
    print(f"{path.relative_to(ROOT)}: {path.stat().st_size // 1000} KB")


def take(base: str, built: dict[str, Any], out: Path, chromium: Path) -> None:
    """One picture per screen."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(chromium), headless=True, args=list(CHROMIUM_ARGS)
        )
        page = browser.new_page(viewport={"width": WIDTH, "height": 900})
        flawed, robust = built["flawed"], built["robust"]
        page.goto(base + "/")
        shoot(page, out / "web-runs.png")
        page.goto(f"{base}/runs/{flawed}")
        shoot(page, out / "web-run.png")
        page.goto(f"{base}/runs/{flawed}/conversations/{built['failed']}")
        shoot(page, out / "web-conversation.png", at="[data-testid=turn][data-turn='1']")
        page.goto(f"{base}/compare?run={flawed}&run={robust}")
        shoot(page, out / "web-compare.png")
        # Where the two agents part: the divergence turn marked, its rule named.
        shoot(page, out / "web-compare-divergence.png", at="[data-testid=side-by-side]")
        page.goto(f"{base}/compare?run={robust}&run={built['v2']}")
        shoot(page, out / "web-compare-refused.png")
        page.goto(base + "/prompts")
        page.locator("[data-testid=prompt-row] a", has_text=built["prompt"].name).first.click()
        page.wait_for_load_state()
        shoot(page, out / "web-prompt-editor.png")
        # One persona marked unrealistic, so the list shows the mark.
        page.goto(f"{base}/personas/{built['personas'][-1]}")
        page.locator("[data-testid=unrealistic-note-input]").fill("No caller talks like this.")
        page.locator("[data-testid=mark-unrealistic]").click()
        page.wait_for_load_state()
        page.goto(base + "/personas")
        shoot(page, out / "web-personas.png")
        page.goto(built["report"].as_uri())
        shoot(page, out / "report.png")
        browser.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "images")
    args = parser.parse_args()
    chromium = find_chromium()
    if chromium is None:
        sys.exit("no chromium: install Debian's chromium package (apt-get install chromium)")
    args.out.mkdir(parents=True, exist_ok=True)
    global FOLDER
    with tempfile.TemporaryDirectory(prefix="polygon-demo-") as temp:
        folder = Path(temp).resolve()
        FOLDER = str(folder)
        built = build(folder)
        with serving(built["db"], built["prompt"], folder) as base:
            take(base, built, args.out.resolve(), chromium)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Recognition noise benchmark: utterances distorted per second, and the one-time load cost.

    .venv/bin/python bench/noise.py [--utterances 20000] [--levels 0.5,1.0] [--json FILE]

Per language (en, de, hr, ru):

* load: in a fresh subprocess, the import of polygon_voice.noise (after the model, which
  every command imports anyway), then the one-time cost of the first noisy utterance:
  importing the optional libraries and loading the word list (with its phonetic index) and
  the number words; with the memory it adds, at its peak and once loading is over;
* throughput after warm-up, on one core (the process pins itself to one CPU): short caller
  utterances (2-7 words, numbers in digits and in words) with a new seed each, through
  - `distorted`, what a run calls per caller turn (heard text and edits), and
  - `distort`, the full `Heard` record with its word error rate (`polygon noise --json`);
  and `distorted` over "fresh words": utterances made of words drawn from the word list, so
  that nearly every sound-alike lookup misses the per-word cache.

The target is 5,000 short utterances per second on one core. Nothing here is a test.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import resource
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

# Nothing of polygon_voice is imported here at the top: the load child measures that import.
TARGET_PER_SECOND = 5000
DEFAULT_LEVELS = (0.5, 1.0)

UTTERANCES: dict[str, tuple[str, ...]] = {
    "en": (
        "Yes, that's right.",
        "My order number is 5590.",
        "I need fifty boxes.",
        "Can you change it to Friday?",
        "No, the second one.",
        "Please call me back tomorrow.",
        "It was twenty-five euros.",
        "I want to speak to a person.",
        "The code is 4417.",
        "That's all, thank you.",
    ),
    "de": (
        "Ja, das stimmt.",
        "Meine Bestellnummer ist 5590.",
        "Ich brauche fünfzig Kartons.",
        "Können Sie es auf Freitag ändern?",
        "Nein, die zweite bitte.",
        "Rufen Sie mich morgen zurück.",
        "Es waren fünfundzwanzig Euro.",
        "Ich möchte mit einem Menschen sprechen.",
        "Der Code ist 4417.",
        "Das ist alles, danke.",
    ),
    "hr": (
        "Da, tako je.",
        "Moj broj narudžbe je 5590.",
        "Trebam pedeset kutija.",
        "Možete li to promijeniti na petak?",
        "Ne, drugu molim.",
        "Nazovite me sutra.",
        "Bilo je dvadeset pet eura.",
        "Želim razgovarati s osobom.",
        "Kod je 4417.",
        "To je sve, hvala.",
    ),
    "ru": (
        "Да, всё верно.",
        "Мой номер заказа 5590.",
        "Мне нужно пятьдесят коробок.",
        "Можно перенести на пятницу?",
        "Нет, вторую, пожалуйста.",
        "Перезвоните мне завтра.",
        "Это было двадцать пять евро.",
        "Я хочу поговорить с человеком.",
        "Код 4417.",
        "Это всё, спасибо.",
    ),
}


@dataclass(frozen=True)
class LoadCost:
    """The first noisy utterance of a process in one language."""

    language: str
    import_s: float  # import polygon_voice.noise, once polygon_voice.model is imported
    first_utterance_s: float  # the libraries, the word list and the number words
    peak_added_mib: float  # peak RSS: the whole wordfreq list is read once
    kept_mib: float  # resident memory still added once loading is over


@dataclass(frozen=True)
class Throughput:
    """Utterances per second of one function at one level, after warm-up."""

    language: str
    level: float
    kind: str  # "distorted", "distort" or "fresh words"
    utterances: int
    per_second: float


def measure_load(language: str) -> LoadCost:
    """The load cost in a fresh process (nothing imported or cached yet)."""
    command = [sys.executable, __file__, "--child-load", language]
    done = subprocess.run(command, capture_output=True, text=True, check=True, timeout=300)
    return LoadCost(**json.loads(done.stdout))


def child_load(language: str) -> LoadCost:
    """Run in the fresh process: time the import, then the first utterance that loads it all."""
    import gc

    import polygon_voice.model  # noqa: F401  (every polygon command imports the model first)

    peak_before, resident_before = _peak_rss_mib(), _resident_mib()
    started = time.perf_counter()
    from polygon_voice.noise import distort as first_distort
    from polygon_voice.noise.lexicon import lexicon
    from polygon_voice.noise.numbers import number_words

    imported = time.perf_counter()
    first_distort(UTTERANCES[language][1], 1.0, language, 0)
    lexicon(language)  # in case no word of that utterance asked for a sound-alike
    number_words(language)
    loaded = time.perf_counter()
    gc.collect()
    return LoadCost(
        language=language,
        import_s=imported - started,
        first_utterance_s=loaded - imported,
        peak_added_mib=_peak_rss_mib() - peak_before,
        kept_mib=_resident_mib() - resident_before,
    )


def measure_throughput(
    language: str, level: float, utterances: int, kind: str = "distorted"
) -> Throughput:
    """Distort `utterances` utterances, each with its own seed, after one warm-up pass."""
    from polygon_voice.noise import distort, distorted

    function: Callable[[str, float, str, int], object] = distort if kind == "distort" else distorted
    for seed, text in enumerate(UTTERANCES[language]):  # warm-up: load everything once
        function(text, level, language, seed)
    texts: Sequence[str] = UTTERANCES[language]
    if kind == "fresh words":
        # Words the warm-up never saw: each one's first sound-alike lookup misses the cache.
        texts = _fresh_texts(language, utterances)
    started = time.perf_counter()
    for seed in range(utterances):
        function(texts[seed % len(texts)], level, language, seed + 10_000)
    elapsed = time.perf_counter() - started
    return Throughput(language, level, kind, utterances, utterances / elapsed)


def _fresh_texts(language: str, count: int, seed: int = 0) -> list[str]:
    from polygon_voice.noise.lexicon import lexicon

    words = sorted(lexicon(language).words)
    rng = random.Random(seed)
    return [" ".join(rng.choice(words) for _ in range(rng.randint(2, 7))) for _ in range(count)]


def _peak_rss_mib() -> float:
    # ru_maxrss is KiB on Linux (bytes on macOS; this benchmark reports Linux figures).
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _resident_mib() -> float:
    """Resident memory now (Linux /proc); 0 where there is no /proc."""
    try:
        pages = int(Path("/proc/self/statm").read_text().split()[1])
    except OSError:
        return 0.0
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20


def pin_to_one_cpu() -> int | None:
    """Pin this process to one CPU so the figures are per core; None where impossible."""
    if not hasattr(os, "sched_setaffinity"):
        return None
    chosen = min(os.sched_getaffinity(0))
    os.sched_setaffinity(0, {chosen})
    return chosen


def report(loads: Sequence[LoadCost], runs: Sequence[Throughput], cpu: int | None) -> str:
    """The figures as two plain tables."""
    lines = [
        f"python {platform.python_version()} on {platform.machine()}, "
        + (f"pinned to cpu {cpu}" if cpu is not None else "not pinned"),
        "",
        "load (first noisy utterance of a process)",
        "lang  import noise  first utterance  peak memory added  memory kept",
    ]
    for load in loads:
        lines.append(
            f"{load.language:4}  {load.import_s * 1000:9.0f} ms  {load.first_utterance_s:12.2f} s"
            f"  {load.peak_added_mib:13.0f} MiB  {load.kept_mib:7.0f} MiB"
        )
    lines += ["", f"throughput after warm-up (target {TARGET_PER_SECOND:,}/s)"]
    lines.append("lang  level  kind          utterances/s  target")
    for run in runs:
        ok = "ok" if run.per_second >= TARGET_PER_SECOND else "BELOW"
        lines.append(
            f"{run.language:4}  {run.level:5.1f}  {run.kind:12}  {run.per_second:12,.0f}  {ok}"
        )
    return "\n".join(lines)


def build_parser() -> argparse.ArgumentParser:
    """The command line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--utterances", type=int, default=20_000, help="per measurement")
    parser.add_argument(
        "--levels",
        type=lambda text: tuple(float(x) for x in text.split(",")),
        default=DEFAULT_LEVELS,
        help="comma-separated noise levels",
    )
    parser.add_argument("--languages", default=",".join(UTTERANCES))
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    parser.add_argument("--child-load", help=argparse.SUPPRESS)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Measure and print."""
    args = build_parser().parse_args(argv)
    if args.child_load:
        print(json.dumps(asdict(child_load(args.child_load))))
        return 0
    languages = args.languages.split(",")
    cpu = pin_to_one_cpu()
    loads = [measure_load(language) for language in languages]
    runs = [
        measure_throughput(language, level, args.utterances, kind)
        for language in languages
        for level in args.levels
        for kind in ("distorted", "distort", "fresh words")
    ]
    print(report(loads, runs, cpu))
    if args.json is not None:
        data = {"loads": [asdict(x) for x in loads], "throughput": [asdict(x) for x in runs]}
        args.json.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())

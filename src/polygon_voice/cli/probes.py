"""Behaviour probes on the command line: `probes list`, `probes trend`, `probes promote`.

`polygon run --probes FILE` asks them in every run; without the option the built-in
deterministic probes are asked. Heavy imports are inside the commands, so `--help` stays fast.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape

from polygon_voice.cli.app import app
from polygon_voice.cli.common import DbOption, JsonOption, console, fail, open_store, print_json

if TYPE_CHECKING:
    from polygon_voice.probes import Probe
    from polygon_voice.probes.summary import TrendPoint

probes_app = typer.Typer(
    help="Behaviour probes: yes/no questions about one behaviour (docs/probes.md).",
    no_args_is_help=True,
)
app.add_typer(probes_app, name="probes")

ProbesOption = Annotated[
    Path | None,
    typer.Option("--probes", help="Probe YAML file; default: the built-in deterministic probes."),
]


def probe_set(path: Path | None) -> list[Probe]:
    """The probes of a file, or the built-in ones; exits on a bad file."""
    from polygon_voice.api.errors import InputError
    from polygon_voice.api.setup import probe_set as load_probe_set

    try:
        return load_probe_set(path)
    except InputError as exc:
        fail(str(exc))


@probes_app.command("list")
def list_probes(probes: ProbesOption = None, as_json: JsonOption = False) -> None:
    """List probes with their polarity, wording hash and who answers them."""
    chosen = probe_set(probes)
    if as_json:
        print_json({"probes": [_probe_entry(probe) for probe in chosen]})
        return
    from polygon_voice.report.layout import Column, FitTable

    columns = (Column("id", whole=True), "polarity", Column("hash", whole=True), "answered by",
               "question")  # fmt: skip
    table = FitTable("Probes", columns)
    for probe in chosen:
        table.add_row(probe.id, probe.polarity, probe.hash, probe.source, probe.question)
    console.print(table)


def _probe_entry(probe: Probe) -> dict[str, Any]:
    return {
        "id": probe.id,
        "question": probe.question,
        "polarity": probe.polarity,
        "applies_when": probe.applies_when,
        "hash": probe.hash,
        "answered_by": probe.source,
    }


@probes_app.command("trend")
def trend_command(
    probe_id: Annotated[str, typer.Argument(help="The probe's id.")],
    limit: Annotated[int, typer.Option(min=1, help="How many recent runs to read.")] = 50,
    as_json: JsonOption = False,
    db: DbOption = None,
) -> None:
    """A probe's compliance with Wilson 95 % intervals over stored runs, oldest first.

    A reworded probe starts a new series: its numbers do not continue the old wording's.
    Exits 1 when no stored run has answers to the probe.
    """
    from polygon_voice.probes import trend
    from polygon_voice.store import StoreError

    store = open_store(db)
    try:
        points = trend(store, probe_id, limit)
    except StoreError as exc:
        fail(str(exc))
    if not points:
        fail(f"no stored run has answers to probe {probe_id!r}", code=1)
    series = len({p.hash for p in points})
    if as_json:
        entries = [_point_entry(point) for point in points]
        print_json({"probe_id": probe_id, "series": series, "points": entries})
        return
    console.print(_trend_table(probe_id, points))
    if series > 1:
        console.print(
            f"Probe {escape(probe_id)} was reworded: {series} series (one per wording hash); "
            "only runs within one series are comparable."
        )


def _point_entry(point: TrendPoint) -> dict[str, Any]:
    c, interval = point.compliance, point.compliance.interval
    return {
        "run_id": point.run.id,
        "started_at": point.run.started_at.isoformat(),
        "hash": point.hash,
        "new_series": point.new_series,
        "yes": c.yes,
        "no": c.no,
        "na": c.na,
        "compliance": None if c.rate is None else round(c.rate, 4),
        "ci_low": None if interval is None else round(interval[0], 4),
        "ci_high": None if interval is None else round(interval[1], 4),
    }


def _trend_table(probe_id: str, points: list[TrendPoint]) -> Any:
    from polygon_voice.report.layout import Column, FitTable

    columns = (Column("run", whole=True), Column("started (UTC)", whole=True),
               Column("wording", whole=True), Column("yes", right=True), Column("no", right=True),
               Column("n/a", right=True), "compliance")  # fmt: skip
    table = FitTable(f"Probe {probe_id}: compliance per run", columns)
    for point in points:
        if point.new_series:
            # A reworded probe is a new question; its numbers do not continue the old.
            table.add_section()
            table.add_row("", "", f"reworded: new series {point.hash}")
        c = point.compliance
        started = f"{point.run.started_at:%Y-%m-%d %H:%M}"
        table.add_row(point.run.id, started, point.hash, str(c.yes), str(c.no), str(c.na), c.text())
    return table


@probes_app.command("promote")
def promote(
    probe_id: Annotated[str, typer.Argument(help="The probe to promote.")],
    to_criterion_name: Annotated[
        str | None, typer.Option("--to-criterion", help="Make it a rubric criterion NAME.")
    ] = None,
    weight: Annotated[
        int | None, typer.Option(help="The new criterion's weight; the others are rescaled.")
    ] = None,
    to_gate_flag: Annotated[
        bool, typer.Option("--to-gate", help="Make it a hard gate instead.")
    ] = False,
    probes: ProbesOption = None,
    rubric: Annotated[
        str | None,
        typer.Option(
            help="The rubric to extend: a version or a YAML file [default: the one runs use]."
        ),
    ] = None,
    out: Annotated[Path | None, typer.Option(help="Where to write the new rubric YAML.")] = None,
) -> None:
    """Write a new rubric version that contains the probe as a criterion or a gate."""
    from polygon_voice.judge import DEFAULT_RUBRIC, RubricError, load_rubric
    from polygon_voice.probes import PromotionError, to_criterion, to_gate

    if (to_criterion_name is None) == (not to_gate_flag):
        fail("give exactly one of --to-criterion NAME (with --weight) or --to-gate")
    probe = next((p for p in probe_set(probes) if p.id == probe_id), None)
    if probe is None:
        fail(f"no probe {probe_id!r} in {probes or 'the built-in probes'}")
    try:
        base = load_rubric(rubric or DEFAULT_RUBRIC)
        if to_criterion_name is not None:
            if weight is None:
                fail("--to-criterion needs --weight W")
            made = to_criterion(base, probe, to_criterion_name, weight)
        else:
            made = to_gate(base, probe)
    except (RubricError, PromotionError) as exc:
        fail(str(exc))
    path = made.write(out or Path(f"rubric-{made.rubric.version}.yaml"))
    console.print(
        f"Rubric [bold]{escape(made.rubric.version)}[/] (from {escape(base.version)}): "
        f"{escape(str(path))}. Use it with: polygon run SUITE --rubric {escape(str(path))}"
    )

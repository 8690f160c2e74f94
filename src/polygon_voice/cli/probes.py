"""Behaviour probes on the command line: `probes list`, `probes trend`, `probes promote`.

`polygon run --probes FILE` (in runs.py) asks them in every run; without the option the
built-in deterministic probes are asked.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from polygon_voice.cli.app import app
from polygon_voice.cli.common import DbOption, console, fail, open_store
from polygon_voice.judge import DEFAULT_RUBRIC, RubricError, load_rubric
from polygon_voice.llm import LLMConfigError, load_llm_config, make_client
from polygon_voice.probes import (
    BUILTIN_PROBES,
    Probe,
    ProbeError,
    Probing,
    PromotionError,
    load_probes,
    to_criterion,
    to_gate,
    trend,
)
from polygon_voice.store import StoreError

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
    if path is None:
        return list(BUILTIN_PROBES)
    try:
        return load_probes(path)
    except ProbeError as exc:
        fail(str(exc))


def probing_for(path: Path | None, llm_config: Path | None) -> Probing:
    """A run's probes, with the judge-role model when a probe has no rule; exits when unset."""
    probes = probe_set(path)
    if all(p.rule is not None for p in probes):
        return Probing(probes)
    try:
        # Probes are asked of the judge's model (temperature 0, RUB-7) in their own calls.
        client = make_client(load_llm_config(llm_config), "judge")
    except LLMConfigError as exc:
        asked = ", ".join(p.id for p in probes if p.rule is None)
        fail(f"{path}: probes {asked} need a model: {exc}")
    return Probing(probes, client)


@probes_app.command("list")
def list_probes(probes: ProbesOption = None) -> None:
    """List probes with their polarity, wording hash and who answers them."""
    table = Table(title="Probes")
    for column in ("id", "polarity", "hash", "answered by", "question"):
        table.add_column(column)
    for probe in probe_set(probes):
        table.add_row(probe.id, probe.polarity, probe.hash, probe.source, escape(probe.question))
    console.print(table)


@probes_app.command("trend")
def trend_command(
    probe_id: Annotated[str, typer.Argument(help="The probe's id.")],
    limit: Annotated[int, typer.Option(min=1, help="How many recent runs to read.")] = 50,
    db: DbOption = None,
) -> None:
    """A probe's compliance with Wilson 95 % intervals over stored runs, oldest first."""
    store = open_store(db)
    try:
        points = trend(store, probe_id, limit)
    except StoreError as exc:
        fail(str(exc))
    if not points:
        fail(f"no stored run has answers to probe {probe_id!r}", code=1)
    table = Table(title=f"Probe {probe_id}: compliance per run")
    for column in ("run", "started (UTC)", "wording", "yes", "no", "n/a", "compliance"):
        table.add_column(column)
    for point in points:
        if point.new_series:
            # PROBE-5: a reworded probe is a new question; its numbers do not continue the old.
            table.add_section()
            table.add_row("", "", f"reworded: new series {point.hash}", "", "", "", "")
        c = point.compliance
        started = f"{point.run.started_at:%Y-%m-%d %H:%M}"
        table.add_row(point.run.id, started, point.hash, str(c.yes), str(c.no), str(c.na), c.text())
    console.print(table)
    series = len({p.hash for p in points})
    if series > 1:
        console.print(
            f"Probe {probe_id} was reworded: {series} series (one per wording hash); "
            "only runs within one series are comparable."
        )


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
    rubric: Annotated[str, typer.Option(help="The rubric to extend.")] = DEFAULT_RUBRIC,
    out: Annotated[Path | None, typer.Option(help="Where to write the new rubric YAML.")] = None,
) -> None:
    """Write a new rubric version that contains the probe as a criterion or a gate (PROBE-6)."""
    if (to_criterion_name is None) == (not to_gate_flag):
        fail("give exactly one of --to-criterion NAME (with --weight) or --to-gate")
    probe = next((p for p in probe_set(probes) if p.id == probe_id), None)
    if probe is None:
        fail(f"no probe {probe_id!r} in {probes or 'the built-in probes'}")
    try:
        base = load_rubric(rubric)
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

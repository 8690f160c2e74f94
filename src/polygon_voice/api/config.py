"""How a suite is run, as one typed object: the options `polygon run` has, for code."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

FailOn = Literal["warn", "fail"]
Executor = Literal["local", "ray"]
EXECUTORS: tuple[Executor, ...] = ("local", "ray")
# A Ray cluster's address: a Ray Client URL or the head node's GCS address.
RAY_ADDRESS = re.compile(r"(ray://)?\[?[A-Za-z0-9.:_-]+\]?:\d{1,5}")


@dataclass(frozen=True)
class RunOptions:
    """Everything that shapes one run; the defaults are those of `polygon run`.

    `agent` is a spec string (`package.module:attr`, `file.py:attr`, `prompt:FILE`, an
    `http://` URL or a registered name) or an agent class or factory (called with an
    `AgentContext` once per call); None: the suite's `agent:` key. `judge`, `rubric` and
    `judge_repeats` left at None take the defaults for a new run (deterministic, v3, 1) and
    the run's own for a resumed one.
    """

    agent: str | Callable[..., Any] | None = None
    seed: int = 0
    concurrency: int = 8
    noise: float | None = None  # 0..1 for every call; None: each scenario's own
    judge: str | None = None  # "deterministic" or "llm" (the judge role's model)
    rubric: str | Path | None = None  # "v1", "v2", "v3" or a rubric YAML file
    judge_repeats: int | None = None
    # Conversations per scenario (trial n's id is `scenario#n`), over the suite's `repeat:`;
    # None: the suite's own (a resumed run: its own).
    trials: int | None = None
    probes: Path | None = None  # a probe YAML file; None: the built-in deterministic probes
    run_probes: bool = True  # False: no probe pass (it never changes a verdict)
    llm_config: Path | None = None  # a YAML/TOML file with an `llm:` section; else the env
    scenarios: tuple[str, ...] = ()  # glob patterns on scenario ids; empty: every scenario
    # False: scenarios whose stored persona is marked unrealistic are left out (READ-2).
    include_unrealistic: bool = False
    resume: str | None = None  # the id of an interrupted run to finish instead of a new one
    out: Path | None = None  # report folder; None: .polygon/runs/RUN_ID
    write_files: bool = True  # write report.json and transcripts.jsonl when the run ends
    preflight: bool = True  # check every model role before the first call (docs/llm.md)
    # Where the calls are played: "local" (this process) or "ray" (Ray actors, the `ray`
    # extra; docs/large-suites.md). `concurrency` is then the calls at once per worker.
    executor: Executor = "local"
    # The Ray cluster: "auto" (a running one), "ray://HOST:PORT", "HOST:PORT", or None
    # (RAY_ADDRESS, else a local cluster started for the run).
    ray_address: str | None = None
    workers: int | None = None  # Ray workers (actors); None: one per CPU of the cluster

    def __post_init__(self) -> None:
        # Plain checks with plain messages: a typo in code must not start a run.
        from polygon_voice.api.errors import InputError

        if self.concurrency < 1:
            raise InputError(f"concurrency must be at least 1, not {self.concurrency}")
        if self.noise is not None and not 0.0 <= self.noise <= 1.0:
            raise InputError(f"noise is a level from 0 to 1, not {self.noise}")
        if self.judge_repeats is not None and self.judge_repeats < 1:
            raise InputError(f"judge_repeats must be at least 1, not {self.judge_repeats}")
        if self.trials is not None and self.trials < 1:
            raise InputError(f"trials must be at least 1, not {self.trials}")
        if isinstance(self.scenarios, str):
            # A lone pattern given as a string would be split into characters.
            object.__setattr__(self, "scenarios", (self.scenarios,))
        if self.probes is not None and not self.run_probes:
            raise InputError("give a probe file or run_probes=False, not both")
        self._check_executor()

    def _check_executor(self) -> None:
        from polygon_voice.api.errors import InputError

        if self.executor not in EXECUTORS:
            raise InputError(f"executor is one of {', '.join(EXECUTORS)}, not {self.executor!r}")
        if self.workers is not None and self.workers < 1:
            raise InputError(f"workers must be at least 1, not {self.workers}")
        if self.executor != "ray" and (self.workers is not None or self.ray_address is not None):
            raise InputError("workers and ray_address go with executor 'ray'")
        address = self.ray_address
        if address is not None and not (
            address in ("auto", "local") or RAY_ADDRESS.fullmatch(address)
        ):
            raise InputError(
                f"ray_address {address!r}: give auto, local, ray://HOST:PORT or HOST:PORT"
            )

"""The pieces of a run set up before its first call: judge, probes, caller model, personas,
tools and noise checked. Each raises InputError or SetupError; none prints or exits."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from polygon_voice.api.errors import InputError, SetupError

if TYPE_CHECKING:
    from polygon_voice.agents import AgentFactory
    from polygon_voice.judge import Judging
    from polygon_voice.llm import LLMClient, LLMSettings, Usage
    from polygon_voice.model import Persona, Suite
    from polygon_voice.probes import Probe, Probing
    from polygon_voice.runner.ray_executor import WorkerParts
    from polygon_voice.scenario import LoadedSuite
    from polygon_voice.store import RunRecord, Store


def llm_settings(llm_config: Path | None) -> LLMSettings:
    """The model settings of every role: the --llm-config file, then the environment."""
    from polygon_voice.llm import LLMConfigError, load_llm_config

    try:
        return load_llm_config(llm_config)
    except LLMConfigError as exc:
        raise SetupError(str(exc)) from None


def judging_for(
    judge: str, rubric: str | Path, repeats: int, llm_config: Path | None = None
) -> Judging:
    """The run's judge, rubric and repeats; SetupError for a judge that cannot be used."""
    from polygon_voice.judge import Judging, RubricError, load_rubric
    from polygon_voice.judge.run import JudgeUnavailable, judge_named
    from polygon_voice.llm import make_client

    client = None
    if judge == "llm":  # only the model judge reads the model settings
        settings = llm_settings(llm_config)
        client = make_client(settings, "judge") if settings.is_configured("judge") else None
    try:
        return Judging(judge_named(judge, client), load_rubric(str(rubric)), repeats)
    except JudgeUnavailable as exc:
        raise SetupError(str(exc)) from None
    except RubricError as exc:
        raise InputError(str(exc)) from None


def judging_options(
    store: Store,
    resume: str | None,
    judge: str | None,
    rubric: str | Path | None,
    repeats: int | None,
) -> tuple[str, str, int]:
    """The judge options of a run; a resumed run keeps its own and refuses others, so that one
    run's judgements are all made the same way (and comparable)."""
    from polygon_voice.judge import BUILTIN, DEFAULT_RUBRIC, RubricError, load_rubric

    if resume is None:
        return judge or "deterministic", str(rubric or DEFAULT_RUBRIC), repeats or 1
    record = stored_run(store, resume)
    config = record.config
    was_judge = str(config.get("judge", "deterministic"))
    was_rubric = str(config.get("rubric", DEFAULT_RUBRIC))
    was_repeats = int(config.get("judge_repeats", 1))
    started = f"run {record.id} was started with"
    if judge is not None and judge != was_judge:
        _bad(f"{started} --judge {was_judge}; resume it with the same judge (or leave it out)")
    if repeats is not None and repeats != was_repeats:
        _bad(f"{started} --judge-repeats {was_repeats}; resume it with the same (or leave it out)")
    if rubric is None:
        if was_rubric not in BUILTIN:
            _bad(f"{started} the rubric file version {was_rubric}; pass --rubric FILE again")
        rubric = was_rubric
    try:
        version = load_rubric(str(rubric)).version
    except RubricError as exc:
        raise InputError(str(exc)) from None
    if version != was_rubric:
        _bad(f"{started} rubric {was_rubric}, not {version}; resume it with the same rubric")
    return was_judge, str(rubric), was_repeats


def stored_run(store: Store, run_id: str) -> RunRecord:
    """The stored run `run_id` (a unique prefix is enough); InputError when there is none."""
    from polygon_voice.store import StoreError

    try:
        return store.get_run(run_id)
    except StoreError as exc:
        raise InputError(str(exc)) from None


def probe_set(path: Path | None) -> list[Probe]:
    """The probes of a file, or the built-in ones; InputError for a bad file."""
    from polygon_voice.probes import BUILTIN_PROBES, ProbeError, load_probes

    if path is None:
        return list(BUILTIN_PROBES)
    try:
        return load_probes(path)
    except ProbeError as exc:
        raise InputError(str(exc)) from None


def probing_for(path: Path | None, llm_config: Path | None) -> Probing:
    """A run's probes, with the judge role's model when a probe has no rule of its own."""
    from polygon_voice.llm import LLMConfigError, make_client
    from polygon_voice.probes import Probing

    probes = probe_set(path)
    if all(p.rule is not None for p in probes):
        return Probing(probes)
    try:
        # Probes are asked of the judge's model (temperature 0) in calls of their own.
        client = make_client(llm_settings(llm_config), "judge")
    except LLMConfigError as exc:
        asked = ", ".join(p.id for p in probes if p.rule is None)
        raise SetupError(f"{path}: probes {asked} need a model: {exc}") from None
    return Probing(probes, client)


def caller_client_for(loaded: LoadedSuite, llm_config: Path | None) -> LLMClient | None:
    """The caller model's client when a scenario has `caller: llm`; None when none has."""
    from polygon_voice.caller.llm import llm_caller_client
    from polygon_voice.llm import LLMConfigError

    try:
        return llm_caller_client(loaded.suite, llm_settings(llm_config))
    except LLMConfigError as exc:
        raise SetupError(f"{loaded.path}: {exc}") from None


def with_stored_personas(store: Store, loaded: LoadedSuite) -> LoadedSuite:
    """The suite with its `persona_ref`s filled in from the database."""
    from polygon_voice.scenario import SuiteError
    from polygon_voice.scenario.persona_refs import resolve_persona_refs, uses_stored_personas
    from polygon_voice.store import StoreError

    if not uses_stored_personas(loaded.suite):
        return loaded

    def lookup(persona_id: str) -> Persona:
        try:
            record = store.get_persona(persona_id)
        except StoreError as exc:
            raise LookupError(str(exc)) from exc
        if record.id != persona_id:  # a prefix: a suite must name the persona exactly
            raise LookupError(f"no persona has this id (did you mean {record.id}?)")
        return record.persona

    try:
        return resolve_persona_refs(loaded, lookup)
    except SuiteError as exc:
        raise InputError(str(exc)) from None


def without_unrealistic(
    store: Store, loaded: LoadedSuite, resumed: RunRecord | None, include: bool
) -> tuple[LoadedSuite, list[dict[str, str]]]:
    """The suite without the scenarios whose stored persona is marked unrealistic (READ-2),
    and what was left out ({scenario, persona, note}); `include` keeps them all. A resumed
    run leaves out what it left out when it started, whatever the marks say now. InputError
    when no scenario is left."""
    from polygon_voice.scenario.persona_refs import without_scenarios

    if include or not any(s.persona_ref is not None for s in loaded.suite.scenarios):
        return loaded, []
    if resumed is not None:
        left_out = [e for e in resumed.config.get(UNREALISTIC_KEY, []) if isinstance(e, dict)]
    else:
        left_out = _unrealistic_scenarios(store, loaded.suite)
    if not left_out:
        return loaded, []
    if len(left_out) == len(loaded.suite.scenarios):
        _bad(
            f"{loaded.path}: every scenario is played by a persona marked unrealistic, so "
            "none is left to run; run them anyway with --include-unrealistic, or mark a "
            "persona realistic again: polygon personas mark ID --realistic"
        )
    return without_scenarios(loaded, {str(e["scenario"]) for e in left_out}), left_out


UNREALISTIC_KEY = "unrealistic_left_out"
"""The run config's list of scenarios left out for an unrealistic persona."""


def _unrealistic_scenarios(store: Store, suite: Suite) -> list[dict[str, str]]:
    from polygon_voice.store import StoreError

    marked: dict[str, str | None] = {}
    for ref in {s.persona_ref for s in suite.scenarios if s.persona_ref is not None}:
        try:
            record = store.get_persona(ref)
        except StoreError as exc:  # checked when the refs were resolved; kept for safety
            raise InputError(str(exc)) from None
        if record.unrealistic:
            marked[ref] = record.unrealistic_note
    return [
        {"scenario": s.id, "persona": s.persona_ref, "note": marked[s.persona_ref] or ""}
        for s in suite.scenarios
        if s.persona_ref is not None and s.persona_ref in marked
    ]


def run_persona_config(suite: Suite) -> dict[str, Any]:
    """What a run records of its stored personas: which one (and version) played which scenario."""
    from polygon_voice.scenario.persona_refs import persona_links

    links = persona_links(suite)
    return {"personas": links} if links else {}


def check_resumed_personas(record: RunRecord, loaded: LoadedSuite) -> None:
    """InputError when a stored persona of the run changed (refreshed) since it started."""
    from polygon_voice.scenario.persona_refs import persona_links

    if record.config.get("personas", []) != persona_links(loaded.suite):
        _bad(
            f"run {record.id} was started with other versions of its stored personas "
            "(refreshed since?); start a new run instead"
        )


def check_tools_and_noise(loaded: LoadedSuite, noise: float | None) -> None:
    """The suite's tools compile and its noise levels can be applied (word lists, extras)."""
    from polygon_voice.noise import NoiseError
    from polygon_voice.runner import CallBuilder
    from polygon_voice.tools import ToolConfigError

    builder = CallBuilder(loaded.suite, _no_agent, 0, noise=noise)
    try:
        builder.check()
    except ToolConfigError as exc:
        raise InputError(f"{loaded.path}: {exc}") from None
    try:
        builder.check_noise()
    except NoiseError as exc:
        raise SetupError(f"{loaded.path}: {exc}") from None


def with_agent_turn_limit(suite: Suite, factory: object) -> Suite:
    """The suite as its calls are played: a prompt agent's turn limit (`agent_turn_timeout`)
    follows its model role's `turn_timeout` (by default twice the request timeout, so a CPU
    server is not cut off at the suite's 10 s) unless the suite sets the limit itself."""
    from polygon_voice.agents.prompt_agent import PromptAgentFactory
    from polygon_voice.model.tools import MAX_SECONDS

    settings = suite.settings
    if not isinstance(factory, PromptAgentFactory) or "agent_turn_timeout" in (
        settings.model_fields_set
    ):
        return suite
    limit = min(factory.role_config.turn_limit, MAX_SECONDS)
    played = settings.model_copy(update={"agent_turn_timeout": limit})
    return suite.model_copy(update={"settings": played})


def merged_usage(*usages: Usage | None) -> dict[str, Any] | None:
    """The caller's, the judge's, the probes' and the prompt agent's model usage as one
    `llm_usage` (None when no model ran); the probes share the judge role, so their tallies
    add to the judge's."""
    from polygon_voice.llm import Usage

    # By identity: a client shared by two stages must not count its calls twice.
    present = list({id(u): u for u in usages if u is not None}.values())
    if not present:
        return None
    total = Usage()
    for usage in present:
        for role, tally in usage.roles.items():
            total.roles[role].add(tally)
    return total.to_dict()


def _no_agent(_: object) -> NoReturn:
    raise AssertionError("checking tools builds no agent")


def _bad(message: str) -> NoReturn:
    raise InputError(message)


# -- the parts every call is played with -------------------------------------------------


@dataclass(frozen=True)
class CallWiring:
    """How a run's calls are wired, as data: what rebuilds the same parts in any process
    (the driver, or a Ray worker: runner/ray_executor.py). Picklable; an agent given as a
    Python class or factory travels with it (cloudpickle)."""

    loaded: LoadedSuite  # the suite as run: scenarios selected, trials applied
    agent: str | Callable[..., Any]  # a spec string, or an agent class or factory
    agent_name: str  # how the run records the agent
    agent_base_dir: Path | None
    agent_cwd: Path | None
    llm_config: Path | None
    judge: str
    rubric: str
    judge_repeats: int
    probes: Path | None
    run_probes: bool


@dataclass
class CallParts:
    """The parts built from a `CallWiring`."""

    suite: Suite  # as played: a prompt agent's turn limit filled in
    agent_factory: AgentFactory
    caller_client: LLMClient | None
    judging: Judging
    probing: Probing | None


def call_parts(wiring: CallWiring) -> CallParts:
    """The judge, probes, caller model and agent factory of a run (InputError, SetupError)."""
    judging = judging_for(wiring.judge, wiring.rubric, wiring.judge_repeats, wiring.llm_config)
    probing = probing_for(wiring.probes, wiring.llm_config) if wiring.run_probes else None
    caller_client = caller_client_for(wiring.loaded, wiring.llm_config)
    factory = agent_factory_for(wiring)
    suite = with_agent_turn_limit(wiring.loaded.suite, factory)
    return CallParts(suite, factory, caller_client, judging, probing)


def agent_factory_for(wiring: CallWiring) -> AgentFactory:
    """The factory that builds the run's agent once per call; InputError when it cannot load."""
    from polygon_voice.agents import AgentLoadError, as_factory, resolve_agent

    agent = wiring.agent
    try:
        if not isinstance(agent, str):
            return as_factory(agent, wiring.agent_name)
        return resolve_agent(
            agent, wiring.agent_base_dir, cwd=wiring.agent_cwd, llm_config=wiring.llm_config
        )
    except AgentLoadError as exc:
        raise InputError(str(exc)) from None


@dataclass(frozen=True)
class WorkerSetup:
    """What a Ray worker is built from: the wiring, the run seed and noise (picklable)."""

    wiring: CallWiring
    seed: int
    noise: float | None
    # What the driver's start-up probe found of each endpoint (llm/capabilities.py): a
    # worker adopts it, so its first structured requests need not find the form out one
    # at a time, and a server's slots hold in every worker.
    capabilities: tuple[tuple[Any, Any], ...] = ()

    @classmethod
    def of_this_process(cls, wiring: CallWiring, seed: int, noise: float | None) -> WorkerSetup:
        """A setup carrying what this process's probe found (none when nothing was probed)."""
        from polygon_voice.llm.capabilities import adopted_records

        return cls(wiring, seed, noise, tuple(adopted_records()))

    def __call__(self) -> WorkerParts:
        """The worker's own parts, built by the driver's functions (in the worker)."""
        from polygon_voice.llm.capabilities import adopt
        from polygon_voice.runner.ray_executor import WorkerParts

        for config, found in self.capabilities:
            adopt(config, found)
        parts = call_parts(self.wiring)
        return WorkerParts(
            suite=parts.suite,
            agent_factory=parts.agent_factory,
            seed=self.seed,
            noise=self.noise,
            caller_client=parts.caller_client,
            judging=parts.judging,
            probing=parts.probing,
        )

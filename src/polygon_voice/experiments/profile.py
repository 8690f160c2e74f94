"""A sweep point as an immutable profile version (SWEEP-2), and how it is run.

A profile is everything that shapes a point's calls and is not the suite: the agent (for a
prompt agent its whole configuration — model, endpoint, sampling profile — and the text of
its system prompt) and the test conditions. Its version is the content hash of its
canonical JSON (sorted keys), so the same settings always get the same hash, whichever
sweep file or folder they came from.

A prompt agent's profile is written out as an agent file (`agent.yaml` + `prompt.md`) in a
folder named by its hash, and the point's run uses `prompt:` that file: the run records the
same model, prompt version and profile hash as any prompt-agent run, and a person can run
the point again by hand with `polygon run SUITE --agent prompt:FOLDER/agent.yaml`.

Conditions (docs/experiments.md, "Sweeps"):

* `noise`: the recognition noise level of every call (as `polygon run --noise`);
* `persona_type`, `difficulty`: every scenario's persona takes that type or difficulty (a
  scripted caller says its script whatever the persona; persona and model callers act it);
* `tool_fault_rate`: every tool gets an `http_500` fault at that seeded rate per call, on
  top of the suite's own faults (0 adds none);
* `latency`: every tool answers after that many (virtual) seconds.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from polygon_voice.experiments.sweep_file import CONDITIONS, SAMPLING, Base
from polygon_voice.model.persona import PersonaType
from polygon_voice.model.tools import FaultKind, FaultSpec
from polygon_voice.seeding import content_hash

if TYPE_CHECKING:
    from polygon_voice.scenario import LoadedSuite

PROMPT_FILE = "prompt.md"
AGENT_FILE = "agent.yaml"


class ProfileError(ValueError):
    """A point's configuration that cannot be built (an unreadable agent or prompt file)."""


@dataclass(frozen=True)
class Profile:
    """One point's resolved configuration: `agent` and `conditions`, as plain JSON data."""

    agent: dict[str, Any]
    conditions: dict[str, Any]

    def to_json(self) -> dict[str, Any]:
        """The profile as stored."""
        return {"agent": self.agent, "conditions": self.conditions}

    @property
    def hash(self) -> str:
        """The profile's version: the content hash of its canonical JSON."""
        return content_hash(json.dumps(self.to_json(), sort_keys=True, separators=(",", ":")))

    @property
    def is_prompt_agent(self) -> bool:
        """Whether the agent is a prompt agent Polygon runs (its model's tokens count)."""
        return self.agent.get("kind") == "prompt"

    def settings(self) -> dict[str, Any]:
        """What a person reads about the point: model, sampling, prompt version, conditions."""
        shown: dict[str, Any] = {}
        if self.is_prompt_agent:
            config = self.agent["config"]
            shown["model"] = config.get("model")
            shown.update(config.get("params", {}))
            shown["prompt"] = self.agent["prompt_version"]
        else:
            shown["agent"] = self.agent["spec"]
        shown.update({k: v for k, v in self.conditions.items() if v is not None})
        return shown


def resolve_profile(
    base: Base,
    point: dict[str, Any],
    base_dir: Path,
    llm_config: Path | None = None,
) -> Profile:
    """The profile of `point` (parameter -> value) over `base`; relative files resolve in
    `base_dir` (the sweep file's folder)."""
    values = {**_base_values(base), **point}
    conditions = {name: values.get(name) for name in CONDITIONS}
    if not base.agent.startswith("prompt:"):
        return Profile({"kind": "spec", "spec": _spec(base.agent, base_dir)}, conditions)
    return Profile(_prompt_agent(base, values, base_dir, llm_config), conditions)


def base_values(base: Base, base_dir: Path, llm_config: Path | None = None) -> dict[str, Any]:
    """The base's value of every parameter, the agent file's own filled in (for
    one-at-a-time: a varied value equal to the base's is not run twice)."""
    values = _base_values(base)
    if base.agent.startswith("prompt:"):
        agent = _prompt_agent(base, values, base_dir, llm_config)
        config = agent["config"]
        values.setdefault("model", config.get("model"))
        for key, value in config.get("params", {}).items():
            name = key if key in SAMPLING else f"params.{key}"
            values.setdefault(name, value)
    return values


def _base_values(base: Base) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for name in ("model", "prompt", *SAMPLING, *CONDITIONS):
        value = getattr(base, name)
        if value is not None:
            values[name] = getattr(value, "value", value)
    values.update({f"params.{key}": value for key, value in base.params.items()})
    return values


def _spec(spec: str, base_dir: Path) -> str:
    """A `file.py:attr` or `prompt:FILE` spec with its file made absolute when it is next to
    the sweep file; any other spec as given."""
    prefix = "prompt:" if spec.startswith("prompt:") else ""
    rest = spec[len(prefix) :]
    file = rest.split(":", 1)[0] if not prefix else rest
    if file.endswith((".py", ".yaml", ".yml", ".json")) and not Path(file).is_absolute():
        candidate = base_dir / file
        if candidate.exists():
            return prefix + str(candidate.resolve()) + rest[len(file) :]
    return spec


def _prompt_agent(
    base: Base, values: dict[str, Any], base_dir: Path, llm_config: Path | None
) -> dict[str, Any]:
    from polygon_voice.agents.prompt_agent import PromptAgentError, PromptAgentFactory

    path = Path(_spec(base.agent, base_dir).removeprefix("prompt:"))
    try:
        factory = PromptAgentFactory(path, run_llm_config=llm_config)
    except PromptAgentError as exc:
        raise ProfileError(str(exc)) from None
    config = factory.config.model_dump(mode="json")
    prompt_text = factory.system_prompt
    if values.get("prompt") is not None:
        prompt_text = _read_prompt(base_dir / str(values["prompt"]))
    params = dict(config.get("params") or {})
    for name, value in values.items():
        if name in SAMPLING:
            params[name] = value
        elif name.startswith("params."):
            params[name.removeprefix("params.")] = value
    role = factory.role_config
    config.update(
        {
            "system_prompt": PROMPT_FILE,
            "params": params,
            "model": values.get("model") or role.model,
            "base_url": base.base_url or role.base_url,
            "api_key_env": role.api_key_env,
            # The role's other settings (timeouts, retries) still come from the config file.
            "llm_config": str(factory.path.parent / config["llm_config"])
            if config.get("llm_config")
            else (str(llm_config.resolve()) if llm_config is not None else None),
        }
    )
    return {
        "kind": "prompt",
        "config": {k: v for k, v in config.items() if v is not None},
        "prompt_version": content_hash(prompt_text),
        "prompt_text": prompt_text,
    }


def _read_prompt(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ProfileError(f"prompt {path}: cannot read: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise ProfileError(f"prompt {path}: not valid UTF-8 text") from None


def agent_spec(profile: Profile, profiles_dir: Path) -> str:
    """The agent spec a point's run uses; a prompt agent's files are written first (once:
    the folder is named by the profile's hash, so its content never changes)."""
    if not profile.is_prompt_agent:
        return str(profile.agent["spec"])
    folder = profiles_dir / profile.hash
    agent_file = folder / AGENT_FILE
    if not agent_file.exists():
        folder.mkdir(parents=True, exist_ok=True)
        (folder / PROMPT_FILE).write_text(profile.agent["prompt_text"], encoding="utf-8")
        header = f"# Profile {profile.hash}, written by polygon sweep: do not edit.\n"
        body = yaml.safe_dump(profile.agent["config"], sort_keys=True, allow_unicode=True)
        temporary = folder / f".{AGENT_FILE}.tmp"
        temporary.write_text(header + body, encoding="utf-8")
        temporary.replace(agent_file)  # whole or absent: a crash leaves no half file
    return f"prompt:{agent_file.resolve()}"


def with_conditions(loaded: LoadedSuite, conditions: dict[str, Any]) -> LoadedSuite:
    """The suite with the profile's conditions applied (noise goes to the run instead); the
    suite itself when none applies. A changed suite's version is its content hash."""
    suite = loaded.suite
    persona: dict[str, Any] = {}
    if conditions.get("persona_type") is not None:
        persona["type"] = PersonaType(conditions["persona_type"])
    if conditions.get("difficulty") is not None:
        persona["difficulty"] = int(conditions["difficulty"])
    rate, latency = conditions.get("tool_fault_rate"), conditions.get("latency")
    if not persona and not rate and latency is None:
        return loaded
    scenarios = [
        s.model_copy(update={"persona": s.persona.model_copy(update=persona)}) if persona else s
        for s in suite.scenarios
    ]
    tools = {}
    for name, tool in suite.tools.items():
        update: dict[str, Any] = {}
        if rate:
            update["faults"] = [*tool.faults, FaultSpec(kind=FaultKind.HTTP_500, rate=rate)]
        if latency is not None:
            update["latency"] = float(latency)
        tools[name] = tool.model_copy(update=update)
    changed = suite.model_copy(update={"scenarios": scenarios, "tools": tools})
    return changed_suite(loaded, changed)


def changed_suite(loaded: LoadedSuite, suite: Any) -> LoadedSuite:
    """`loaded` with `suite` in its place, versioned by the new content's hash (its file and
    folder kept, so relative agent files resolve as before)."""
    digest = content_hash(suite.model_dump_json().encode())
    return type(loaded)(suite=suite, path=loaded.path, hash=digest, base_dir=loaded.base_dir)

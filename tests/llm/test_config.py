"""Per-role settings: config file, environment overrides, errors that name the place."""

from __future__ import annotations

from pathlib import Path

import pytest

from polygon_voice.llm import DEFAULT_BASE_URL, LLMConfigError, load_llm_config

CONFIG = """\
llm:
  base_url: http://file-shared/v1
  api_key_env: FILE_KEY
  timeout: 30
  cache_dir: {cache}
  caller:
    model: caller-from-file
  judge:
    model: judge-from-file
    base_url: http://file-judge/v1
    price_in_per_1k: 0.5
  agent:
    model: agent-from-file
"""


@pytest.fixture
def config_file(tmp_path: Path) -> Path:
    path = tmp_path / "polygon.yaml"
    path.write_text(CONFIG.format(cache=tmp_path / "cache"))
    return path


def test_nothing_configured_by_default() -> None:
    settings = load_llm_config(None, {})
    for role in ("caller", "judge", "agent"):
        assert not settings.is_configured(role)
        assert settings.role(role).base_url == DEFAULT_BASE_URL
        assert settings.role(role).api_key_env is None
    assert settings.role("judge").temperature == 0.0
    assert settings.role("caller").temperature is None


def test_the_file_gives_shared_settings_and_role_sections(config_file: Path) -> None:
    settings = load_llm_config(config_file, {})
    caller, judge = settings.role("caller"), settings.role("judge")
    assert (caller.model, caller.base_url, caller.timeout) == (
        "caller-from-file",
        "http://file-shared/v1",
        30,
    )
    assert (judge.base_url, judge.price_in_per_1k, judge.api_key_env) == (
        "http://file-judge/v1",
        0.5,
        "FILE_KEY",
    )
    assert settings.cache_dir == config_file.parent / "cache"
    assert all(settings.is_configured(role) for role in ("caller", "judge", "agent"))


def test_environment_overrides_file_and_role_variables_override_shared(
    config_file: Path,
) -> None:
    env = {
        "POLYGON_BASE_URL": "http://env-shared/v1",
        "POLYGON_API_KEY": "sk-shared",
        "POLYGON_JUDGE_BASE_URL": "http://env-judge/v1",
        "POLYGON_AGENT_API_KEY": "sk-agent",
        "POLYGON_CALLER_MODEL": "caller-from-env",
    }
    settings = load_llm_config(config_file, env)
    caller, judge, agent = (settings.role(r) for r in ("caller", "judge", "agent"))
    assert (caller.model, caller.base_url) == ("caller-from-env", "http://env-shared/v1")
    assert (judge.model, judge.base_url) == ("judge-from-file", "http://env-judge/v1")
    assert agent.base_url == "http://env-shared/v1"
    # The settings keep the variables' names; the keys stay in the environment.
    assert caller.api_key_env == judge.api_key_env == "POLYGON_API_KEY"
    assert agent.api_key_env == "POLYGON_AGENT_API_KEY"
    assert "sk-shared" not in settings.model_dump_json()
    assert "sk-agent" not in repr(settings)


def test_empty_variables_are_ignored(config_file: Path) -> None:
    settings = load_llm_config(config_file, {"POLYGON_CALLER_MODEL": "", "POLYGON_API_KEY": ""})
    assert settings.role("caller").model == "caller-from-file"
    assert settings.role("caller").api_key_env == "FILE_KEY"


def test_toml_files_work(tmp_path: Path) -> None:
    path = tmp_path / "polygon.toml"
    path.write_text('[llm]\nmax_concurrency = 4\n[llm.judge]\nmodel = "j"\ncache = false\n')
    settings = load_llm_config(path, {})
    assert settings.role("judge").model == "j"
    assert not settings.role("judge").cache_enabled
    assert settings.role("caller").max_concurrency == 4
    assert settings.role("caller").cache_enabled
    assert not settings.role("agent").cache_enabled


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("llm:\n  judge:\n    temperature: hot\n", r"polygon.yaml: llm.judge.temperature \(role"),
        ("llm:\n  timeout: -1\n", r"polygon.yaml: llm.timeout \(role caller\): Input should be"),
        ("llm:\n  judge:\n    modle: x\n", r"polygon.yaml: llm.judge.modle: unknown setting"),
        ("llm:\n  colour: red\n", r"polygon.yaml: llm.colour: unknown setting"),
        ("llm:\n  judge: gpt\n", r"polygon.yaml: llm.judge: must be a mapping"),
        ("judge:\n  model: x\n", r"polygon.yaml: no `llm:` section"),
        ("llm: [1\n", r"polygon.yaml:2:1: expected ',' or ']'"),
    ],
)
def test_errors_name_the_file_and_the_field(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "polygon.yaml"
    path.write_text(text)
    with pytest.raises(LLMConfigError, match=message):
        load_llm_config(path, {})


def test_an_environment_error_names_the_variable() -> None:
    env = {"POLYGON_JUDGE_BASE_URL": "localhost:8000", "POLYGON_JUDGE_MODEL": "m"}
    with pytest.raises(LLMConfigError) as caught:
        load_llm_config(None, env)
    assert str(caught.value) == (
        "environment variable POLYGON_JUDGE_BASE_URL (role judge): "
        "must be an http:// or https:// URL, like http://localhost:8000/v1"
    )


def test_a_missing_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(LLMConfigError, match=r"nope.yaml: file not found"):
        load_llm_config(tmp_path / "nope.yaml", {})


def test_a_key_in_the_file_is_refused_without_repeating_it(tmp_path: Path) -> None:
    path = tmp_path / "polygon.yaml"
    path.write_text("llm:\n  judge:\n    api_key: sk-live-abcdef123456\n")
    with pytest.raises(LLMConfigError, match="do not belong in config files") as caught:
        load_llm_config(path, {})
    assert "sk-live-abcdef123456" not in str(caught.value)


def test_a_key_given_as_the_variable_name_is_refused_without_repeating_it(
    tmp_path: Path,
) -> None:
    path = tmp_path / "polygon.yaml"
    path.write_text("llm:\n  api_key_env: sk-live-abcdef123456\n")
    with pytest.raises(LLMConfigError, match="NAME of the environment variable") as caught:
        load_llm_config(path, {})
    assert "sk-live-abcdef123456" not in str(caught.value)

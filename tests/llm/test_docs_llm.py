"""The examples in docs/llm.md run, so they cannot rot."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from polygon_voice.llm import load_llm_config
from polygon_voice.testing import load_script

DOC = Path(__file__).resolve().parents[2] / "docs" / "llm.md"


def blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", DOC.read_text(), flags=re.DOTALL)


def test_the_config_example_loads(tmp_path: Path) -> None:
    [example] = [b for b in blocks("yaml") if b.startswith("llm:")]
    path = tmp_path / "polygon.yaml"
    path.write_text(example)
    settings = load_llm_config(path, {})
    assert all(settings.is_configured(role) for role in ("caller", "judge", "agent"))
    assert settings.role("caller").base_url == "http://localhost:8000/v1"
    assert settings.role("judge").api_key_env == "OPENAI_API_KEY"
    assert settings.role("agent").timeout == 30
    assert settings.role("agent").max_concurrency == 32


def test_the_script_example_loads(tmp_path: Path) -> None:
    [example] = [b for b in blocks("yaml") if b.startswith("latency:")]
    path = tmp_path / "rules.yaml"
    path.write_text(example)
    script = load_script(path)
    assert [rule.role for rule in script.rules] == ["judge", "caller", "caller"]


async def test_the_fake_server_example_passes() -> None:
    [example] = [b for b in blocks("python") if "FakeLLMServer(rules)" in b]
    namespace: dict[str, Any] = {}
    exec(compile(example, str(DOC), "exec"), namespace)
    await namespace["test_my_judge_reads_scores"]()


def test_every_server_kind_configuration_loads(tmp_path: Path) -> None:
    examples = [b for b in blocks("yaml") if b.startswith("# polygon.yaml for")]
    assert len(examples) == 5  # hosted, vLLM, Ollama, llama.cpp, LiteLLM
    for number, example in enumerate(examples):
        path = tmp_path / f"kind{number}.yaml"
        path.write_text(example)
        settings = load_llm_config(path, {})
        assert any(settings.is_configured(role) for role in ("caller", "judge", "agent"))
    llamacpp = load_llm_config(tmp_path / "kind3.yaml", {}).role("judge")
    assert (llamacpp.structured_output, llamacpp.max_concurrency) == ("json_object", 1)

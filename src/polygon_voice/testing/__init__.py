"""Test doubles shipped for your own tests and offline CI (see docs/llm.md).

`FakeLLMServer` is a real OpenAI-compatible HTTP server on loopback that answers chat
completions from a script of rules; `python -m polygon_voice.testing.fake_llm` runs it as
its own process.
"""

from polygon_voice.testing.answers import Answer
from polygon_voice.testing.script import Rule, Script, ScriptedRequest, ToolCallSpec, load_script
from polygon_voice.testing.server import FakeLLMServer, LoggedRequest

__all__ = [
    "Answer",
    "FakeLLMServer",
    "LoggedRequest",
    "Rule",
    "Script",
    "ScriptedRequest",
    "ToolCallSpec",
    "load_script",
]

"""What a sweep point will cost in model tokens, before it starts (SWEEP-3).

From recorded usage when the profile ran before: its runs' tokens (every role: agent,
caller, judge) per call, times the point's calls. Otherwise, for a prompt agent, the
estimator below, which counts the agent's model only:

* requests per call: the caller's turns plus one for the greeting — a scripted caller's
  steps, else half the turn limit (caller and agent turns alternate);
* each request sends the system prompt and the tool schemas (4 characters a token) plus
  the history so far (60 tokens a turn), and may get `max_tokens` back (200 when unset).

It errs high on purpose: a limit is there to stop a runaway point, and an estimate that is
too low would let one through. An agent Polygon does not run itself (a reference agent,
your code, an HTTP agent) spends no Polygon tokens: its estimate is 0.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from polygon_voice.experiments.profile import Profile

if TYPE_CHECKING:
    from polygon_voice.model import Suite
    from polygon_voice.store import Store

CHARS_PER_TOKEN = 4
HISTORY_TOKENS_PER_TURN = 60
DEFAULT_REPLY_TOKENS = 200


@dataclass(frozen=True)
class Estimate:
    """A point's estimated tokens and where the figure comes from."""

    tokens: int
    source: str  # "recorded" (earlier runs of the profile) or "estimator"
    calls: int

    def to_dict(self) -> dict[str, Any]:
        """As stored with the point and printed by --json."""
        return {"tokens": self.tokens, "source": self.source, "calls": self.calls}

    def describe(self) -> str:
        """`about 12,400 tokens (from recorded usage)`."""
        where = "from recorded usage" if self.source == "recorded" else "by the estimator"
        return f"about {self.tokens:,} tokens ({where})"


def estimate_point(store: Store, profile: Profile, suite: Suite, trials: int) -> Estimate:
    """The point's tokens: recorded usage of the same profile when there is some, else the
    estimator (module docstring)."""
    calls = len(suite.scenarios) * trials
    recorded = store.recorded_usage(profile.hash)
    if recorded:
        per_call = [_tokens(usage) / runs_calls for runs_calls, usage in recorded]
        return Estimate(math.ceil(max(per_call) * calls), "recorded", calls)
    return Estimate(estimated_tokens(profile, suite) * trials, "estimator", calls)


def estimated_tokens(profile: Profile, suite: Suite) -> int:
    """The estimator's tokens for one trial of every scenario of `suite`."""
    if not profile.is_prompt_agent:
        return 0
    config = profile.agent["config"]
    tools = json.dumps({name: tool.parameters for name, tool in suite.tools.items()})
    fixed = math.ceil((len(profile.agent["prompt_text"]) + len(tools)) / CHARS_PER_TOKEN)
    reply = int(config.get("params", {}).get("max_tokens") or DEFAULT_REPLY_TOKENS)
    total = 0
    for scenario in suite.scenarios:
        limit = scenario.max_turns or suite.settings.max_turns
        requests = (len(scenario.script) if scenario.script else limit // 2) + 1
        for turn in range(requests):
            total += fixed + HISTORY_TOKENS_PER_TURN * 2 * turn + reply
    return total


def _tokens(usage: dict[str, Any]) -> int:
    total = usage.get("total") or {}
    return int(total.get("tokens_in", 0)) + int(total.get("tokens_out", 0))

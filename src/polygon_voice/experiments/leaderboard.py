"""The sweep leaderboard (SWEEP-4): mean score, then stability, then speed.

* **score**: the mean composite (0-100) over every judged call of the point (all scenarios,
  all trials); higher is better;
* **stability**: the sample standard deviation of those composites — spread across
  scenarios and trials together; lower is better;
* **speed**: the mean agent response time, in the call's (virtual) seconds: from the end of
  each caller turn to the start of the agent's next turn — what the caller waits, tool waits
  included; lower is better.

Points are compared on the figures as shown (score and stability to 0.1, speed to 0.01 s):
two points equal on all three are a tie and share a rank (1, 1, 3). A point without a score
ranks last.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from polygon_voice.compare.stats import sample_stdev

if TYPE_CHECKING:
    from polygon_voice.api.results import CallResult
    from polygon_voice.model import ConversationResult

SCORE_DIGITS = 1
STABILITY_DIGITS = 1
SPEED_DIGITS = 2


@dataclass(frozen=True)
class PointScore:
    """One point's figures; `rank` is set by `rank_points`."""

    index: int
    settings: dict[str, Any]
    run_id: str | None
    calls: int
    mean_composite: float | None
    pass_rate: float | None
    stability: float | None
    speed: float | None
    rank: int | None = None
    tied: bool = False
    status: str = "done"
    extra: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """As `--json` prints it."""
        return {
            "rank": self.rank,
            "tied": self.tied,
            "point": self.index,
            "status": self.status,
            "settings": self.settings,
            "run_id": self.run_id,
            "calls": self.calls,
            "mean_composite": _round(self.mean_composite, SCORE_DIGITS),
            "pass_rate": _round(self.pass_rate, 3),
            "stability": _round(self.stability, STABILITY_DIGITS),
            "speed_seconds": _round(self.speed, SPEED_DIGITS),
            **self.extra,
        }


def rank_points(points: Iterable[PointScore]) -> list[PointScore]:
    """The points best first, each with its rank; ties (equal as shown) share one."""
    ordered = sorted(points, key=_key)
    ranked: list[PointScore] = []
    for position, point in enumerate(ordered, start=1):
        previous = ranked[-1] if ranked else None
        same = previous is not None and _key(previous) == _key(point)
        rank = previous.rank if same and previous is not None else position
        ranked.append(replace(point, rank=rank))
    keys = [_key(p) for p in ranked]
    return [replace(p, tied=keys.count(_key(p)) > 1) for p in ranked]


def _key(point: PointScore) -> tuple[float, float, float]:
    # Missing figures sort last: no score is worse than any score.
    score = _round(point.mean_composite, SCORE_DIGITS)
    stability = _round(point.stability, STABILITY_DIGITS)
    speed = _round(point.speed, SPEED_DIGITS)
    return (
        -score if score is not None else float("inf"),
        stability if stability is not None else float("inf"),
        speed if speed is not None else float("inf"),
    )


def point_score(
    index: int,
    settings: dict[str, Any],
    run_id: str | None,
    calls: Sequence[CallResult],
    conversations: Iterable[ConversationResult],
) -> PointScore:
    """A point's figures from its run's calls and their conversations."""
    composites = [c.composite for c in calls if c.composite is not None]
    judged = [c for c in calls if c.verdict is not None]
    passes = sum(1 for c in judged if c.verdict == "pass")
    return PointScore(
        index=index,
        settings=settings,
        run_id=run_id,
        calls=len(calls),
        mean_composite=sum(composites) / len(composites) if composites else None,
        pass_rate=passes / len(judged) if judged else None,
        stability=sample_stdev(composites) if len(composites) > 1 else 0.0 if composites else None,
        speed=mean_response_time(conversations),
    )


def mean_response_time(conversations: Iterable[ConversationResult]) -> float | None:
    """The mean gap from the end of a caller turn to the start of the next agent turn."""
    gaps: list[float] = []
    for conversation in conversations:
        waiting_since: float | None = None
        for turn in conversation.turns:
            if turn.speaker.value == "caller":
                waiting_since = turn.end
            elif waiting_since is not None:
                gaps.append(max(0.0, turn.start - waiting_since))
                waiting_since = None
    return sum(gaps) / len(gaps) if gaps else None


def _round(value: float | None, digits: int) -> float | None:
    return None if value is None else round(value, digits)

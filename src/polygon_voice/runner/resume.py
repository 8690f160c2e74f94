"""What a resumed run judges again: stored calls whose judgement is missing or was left
unscored because the judge model failed (an infrastructure failure, not an answer).

Calls are stored before they are judged (runner/run.py), so a run killed while its judge
model was rate-limited keeps every finished call, some without a judgement. `--resume`
judges those again without running them; a judgement made from the model's own answer
(even an unreadable one) stands, since a rerun would replay the same answer.
"""

from __future__ import annotations

from polygon_voice.judge.run import judge_model_failed
from polygon_voice.model.judgement import Judgement
from polygon_voice.store import Store


def calls_to_rejudge(store: Store, run_id: str, stored: set[str]) -> frozenset[str]:
    """The ids among `stored` to judge again: no judgement in the run's own set, or one that
    is `unscored` because its judge model never answered."""
    judged: set[str] = set()
    failed: set[str] = set()
    for conversation_id, data in store.iter_stage_results(run_id, "judge"):
        judged.add(conversation_id)
        judgement = Judgement.model_validate(data)
        if judgement.verdict == "unscored" and judge_model_failed(judgement) is not None:
            failed.add(conversation_id)
    return frozenset((stored - judged) | (failed & stored))

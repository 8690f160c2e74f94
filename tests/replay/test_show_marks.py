"""`polygon show RUN --conversation ID` on a replayed call: each replay mark at its turn."""

from __future__ import annotations

import io
from pathlib import Path

from polygon_voice.cli.console import SafeConsole
from polygon_voice.replay.caller import HANDOVER_KIND, MISMATCH_KIND
from polygon_voice.report.terminal import conversation_view
from polygon_voice.store import Store
from tests.cli.conftest import Polygon
from tests.replay.test_replay_prompt_agent import REFUSAL, replay


def test_show_prints_the_mismatch_where_it_happened(tmp_path: Path, store: Store) -> None:
    _, result = replay(tmp_path, store)
    code, out, err = Polygon(tmp_path)("show", result.run.run_id, "--conversation", "order-call-1")
    assert code == 0, err
    lines = out.splitlines()
    [at] = [i for i, line in enumerate(lines) if "replay mismatch at turn 2" in line]
    assert "before recorded caller line 2 (rule answered_else, then continue)" in lines[at]
    assert "refused" in lines[at]
    # After the new agent's refusal, before the recorded caller line played anyway.
    refusal = next(i for i, line in enumerate(lines) if REFUSAL in line and "agent" in line)
    caller = next(i for i, line in enumerate(lines) if "No, that's all, thank you" in line)
    assert refusal < at < caller
    assert any("new agent:" in line and REFUSAL in line for line in lines[at:caller])


def test_a_handover_is_shown_after_its_mismatch(tmp_path: Path, store: Store) -> None:
    from polygon_voice.testing import Rule

    said = {"say": "Then leave it at 3. Bye.", "end_call": True}
    _, result = replay(tmp_path, store, on_mismatch="llm", extra=[Rule(role="caller", json=said)])
    code, out, err = Polygon(tmp_path)("show", result.run.run_id, "-c", "order-call-1")
    assert code == 0, err
    mismatch = out.index("replay mismatch at turn 2")
    handover = out.index("replay handed over to the LLM caller at recorded caller line 2")
    assert mismatch < handover < out.index(said["say"])


def test_the_quoted_turns_of_a_mark_are_escaped(tmp_path: Path, store: Store) -> None:
    _, result = replay(tmp_path, store)
    call = store.get_conversation(result.run.run_id, "order-call-1")
    hostile = "\x1b[2J[bold red]wiped[/]\u202e"
    trace = [
        entry.model_copy(update={"data": {**entry.data, "recorded": hostile, "reason": hostile}})
        if entry.kind == MISMATCH_KIND
        else entry
        for entry in call.trace
    ]
    handover = {"seq": trace[-1].seq + 1, "kind": HANDOVER_KIND, "data": {"line": hostile}}
    trace.append(trace[-1].model_copy(update=handover))
    out = io.StringIO()
    SafeConsole(file=out, force_terminal=True, width=200).print(
        conversation_view(call.model_copy(update={"trace": trace}))
    )
    text = out.getvalue()
    assert "\x1b[2J" not in text
    assert "\u202e" not in text
    assert "\\x1b[2J[bold red]wiped[/]\\u202e" in text  # shown as text, never as markup
    assert "recorded agent: \\x1b" in text

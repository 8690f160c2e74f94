"""Replay: the caller lines of imported calls played against another agent (docs/replay.md).

* `plan`: what a stored call becomes: its caller lines, the recorded agent turns between
  them, its recorded tool calls and `expect:`; the in-code suite the runner plays.
* `stubs`: the recorded outcomes served for the same call (same tool, same arguments), a
  clear error for anything else.
* `mismatch`: the fixed rule that says when the next recorded caller line no longer fits.
* `caller`: the replay's caller, which marks mismatches and continues, stops or hands over
  to the LLM caller.
* `build`: the runner's call builder and engine for a replayed call.

`polygon_voice.api.replay.replay_run` wires them into a stored run of kind `replay`.
"""

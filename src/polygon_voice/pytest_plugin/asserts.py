"""Assertions on a `PolygonResult` whose failure messages say why, with the evidence.

A bare `assert result.passed` works too; pytest then prints the result's one-line summary.
These helpers fail with the whole explanation: the verdict's reasons, each failing axis with
its evidence, the root cause, and the last turns of the call's transcript.
"""

from __future__ import annotations

from polygon_voice.pytest_plugin.outcome import EXPLAINED_CALLS, PolygonResult


def assert_passed(result: PolygonResult, *, gate: bool = False) -> None:
    """Fail unless every call of `result` passed (`result.passed`); with `gate`, also unless
    the release gate over its three-layer cases passed."""
    __tracebackhide__ = True
    _check_type(result)
    if not result.passed:
        raise AssertionError(result.explain())
    if gate:
        verdict = result.gate
        if verdict is None:
            raise AssertionError(f"polygon {result.label}: no three-layer case, so no gate")
        if not verdict.passed:
            broken = "; ".join(
                f"{c.id} {c.name}: {', '.join(c.cases) or 'no case exercised'}"
                for c in verdict.checks
                if not c.passed
            )
            raise AssertionError(f"polygon {result.label}: the release gate failed: {broken}")


def assert_no_root_cause(result: PolygonResult, cause: str) -> None:
    """Fail when any call of `result` failed for the root cause `cause` (a name of
    `polygon_voice.root_causes()`; another name is an error, never a pass)."""
    __tracebackhide__ = True
    from polygon_voice.api import root_causes

    _check_type(result)
    known = root_causes()
    if cause not in known:
        raise ValueError(f"no root cause is called {cause!r}; the causes: {', '.join(known)}")
    hits = [call for call in result.calls if call.root_cause == cause]
    if not hits:
        return
    lines = [
        f"polygon {result.label}: {len(hits)} of {len(result.calls)} calls failed with root "
        f"cause {cause}: {', '.join(call.id for call in hits)}"
    ]
    lines.extend(result.explain_call(call) for call in hits[:EXPLAINED_CALLS])
    raise AssertionError("\n".join(lines))


def assert_axis(result: PolygonResult, axis: str) -> None:
    """Fail unless the three-layer `axis` held in every call that scored it, naming each call
    where it did not with the axis's evidence."""
    __tracebackhide__ = True
    _check_type(result)
    axes = result.axes
    if axis not in axes:
        known = ", ".join(axes) or "none: the result has no three-layer case"
        raise ValueError(f"no axis {axis!r} in this result; its axes: {known}")
    if axes[axis]:
        return
    lines = [f"polygon {result.label}: axis {axis} failed"]
    lines.extend(result.explain_call(call) for call in result.calls if call.axes.get(axis) is False)
    raise AssertionError("\n".join(lines))


def _check_type(result: object) -> None:
    if not isinstance(result, PolygonResult):
        raise TypeError(
            f"expected the PolygonResult of polygon.run or polygon_result, not "
            f"{type(result).__name__}"
        )

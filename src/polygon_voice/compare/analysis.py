"""CMP-4: the written analysis, template prose over a deterministic summary.

No model writes it: the same compare.json always reads the same, so two people comparing
the same runs see the same sentences.
"""

from __future__ import annotations

from collections import Counter
from typing import Any


def analysis(result: dict[str, Any]) -> str:
    """Sentences on the best run, the criteria that moved, the scenarios and turns that differ."""
    cards: list[dict[str, Any]] = result["scorecards"]
    scored = [c for c in cards if c["composite"]["mean"] is not None]
    lines: list[str] = []
    if len(scored) < 2:
        lines.append("Fewer than two runs have a scored composite; no overall comparison.")
    else:
        ranked = sorted(scored, key=lambda c: (-c["composite"]["mean"], c["run_id"]))
        best, worst = ranked[0], ranked[-1]
        gap = best["composite"]["mean"] - worst["composite"]["mean"]
        overlap = _overlap(best["composite"], worst["composite"])
        lines.append(
            f"Overall, run {best['run_id']} scores best (mean composite "
            f"{best['composite']['mean']:.1f}) and run {worst['run_id']} worst "
            f"({worst['composite']['mean']:.1f}), a gap of {gap:.1f} points"
            + (
                "; their 95 % intervals overlap, so the gap may be noise."
                if overlap
                else "; their 95 % intervals do not overlap."
            )
        )
        moved = _criteria_moves(best, worst)
        if moved:
            lines.append(
                f"By criterion, {best['run_id']} vs {worst['run_id']}: "
                + ", ".join(f"{name} {delta:+.2f}" for name, delta in moved[:5])
                + "."
            )
    changed = [row for row in result["matrix"] if row["spread"] > 0]
    if changed:
        top = ", ".join(f"{row['scenario']} ({row['spread']:.1f})" for row in changed[:3])
        lines.append(
            f"{len(changed)} of {len(result['matrix'])} comparable scenarios differ in mean "
            f"composite; the largest spreads: {top}."
        )
    elif result["matrix"]:
        lines.append("No comparable scenario differs in mean composite.")
    lines.extend(_change_lines(result.get("changes", [])))
    parted = [d for d in result["divergence"] if d["turn"] is not None]
    if parted:
        rules = Counter(d["rule"] for d in parted).most_common()
        turns = Counter(d["turn"] for d in parted).most_common(1)[0]
        lines.append(
            f"The conversations part in {len(parted)} of {len(result['divergence'])} "
            f"scenario pairs, most often by {rules[0][0]} ("
            + ", ".join(f"{rule} {n}" for rule, n in rules)
            + f"); the most common first turn to differ is turn {turns[0]} ({turns[1]} pairs)."
        )
    elif result["divergence"]:
        lines.append("The conversations never part: every compared pair is turn for turn alike.")
    if result["incomparable"]:
        line = (
            f"{len(result['incomparable'])} scenario(s) lack a result in some run and are "
            f"left out of the matrix as incomparable: {', '.join(result['incomparable'])}."
        )
        turned = {d["scenario"] for d in result["divergence"] if not d.get("scored", True)}
        if turned:
            line += (
                f" {len(turned)} of them have a call in every run, unscored in some, so "
                "their turns are compared all the same."
            )
        lines.append(line)
    return "\n".join(lines)


def _overlap(a: dict[str, Any], b: dict[str, Any]) -> bool:
    # Without an interval (one call) we cannot claim a real difference either.
    if a["ci_low"] is None or b["ci_low"] is None:
        return True
    return bool(a["ci_low"] <= b["ci_high"] and b["ci_low"] <= a["ci_high"])


def _criteria_moves(best: dict[str, Any], worst: dict[str, Any]) -> list[tuple[str, float]]:
    shared = set(best["criteria"]) & set(worst["criteria"])
    deltas = [(name, best["criteria"][name] - worst["criteria"][name]) for name in shared]
    return sorted(
        ((n, d) for n, d in deltas if abs(d) >= 0.005), key=lambda item: (-abs(item[1]), item[0])
    )


def _change_lines(changes: list[dict[str, Any]]) -> list[str]:
    """One sentence per later run: its overall mark and how many criteria and scenarios
    changed beyond their noise (compare/change.py)."""
    lines = []
    for change in changes:
        overall = change["overall"]
        marked = [m for m in (*change["criteria"], *change["scenarios"]) if m["mark"] != _NONE]
        line = f"Run {change['after']} against {change['before']}: overall {overall['mark']}"
        if overall["mark"] == _NONE and overall["detectable"]:
            line += f" (a change of {overall['detectable']:.1f} points would most likely show)"
        elif overall["difference"] is not None and overall["mark"] != _NONE:
            line += f" ({overall['difference']:+.1f} points)"
        counts = Counter(m["mark"] for m in marked)
        shown = ", ".join(f"{n} {mark}" for mark, n in sorted(counts.items()))
        lines.append(line + (f"; criteria and scenarios: {shown}." if shown else "."))
    return lines


_NONE = "no detectable change"

"""A stored sweep as plain data: what `polygon sweep show --json`, the HTML report and the
web app all show (one source, so the three never disagree)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from polygon_voice.experiments.curves import curve_conditions, curve_rows
from polygon_voice.experiments.sweep import leaderboard

if TYPE_CHECKING:
    from polygon_voice.store import Store


def sweep_document(store: Store, sweep_id: str) -> dict[str, Any]:
    """The sweep (id or unique prefix), its ranked points and its robustness curves;
    StoreError for an unknown sweep."""
    record = store.get_sweep(sweep_id)
    points = store.sweep_points(record.id)
    board = leaderboard(store, points)
    ranked = [p for p in board if p.rank is not None]
    curves = [
        {"condition": name, "rows": curve_rows(ranked, name)} for name in curve_conditions(ranked)
    ]
    config = record.config
    return {
        "sweep": {
            "id": record.id,
            "name": record.name,
            "path": record.path,
            "status": record.status,
            "reason": record.reason,
            "started_at": record.started_at.isoformat(),
            "finished_at": record.finished_at.isoformat() if record.finished_at else None,
            "strategy": config.get("strategy"),
            "trials": config.get("trials"),
            "suite": config.get("suite"),
            "floor": config.get("floor"),
            "token_limit": config.get("token_limit"),
            "points_planned": config.get("points_planned"),
        },
        "leaderboard": [p.to_dict() for p in board],
        "curves": curves,
    }

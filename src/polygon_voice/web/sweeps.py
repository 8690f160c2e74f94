"""The app's sweep pages: `/sweeps`, the stored sweeps, and `/sweeps/{sweep_id}`, the
leaderboard and robustness curves of one (the same view as `polygon sweep show` and the
sweep report)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from fastapi import FastAPI
from fastapi.responses import Response

from polygon_voice.web.pages import page

if TYPE_CHECKING:
    from collections.abc import Callable

    from polygon_voice.store import Store


def sweep_routes(
    app: FastAPI,
    store_of: Callable[[], Store],
    found: Callable[[Store, Callable[[], Any]], Any],
    context: Callable[..., dict[str, Any]],
) -> None:
    """Add GET `/sweeps` and `/sweeps/{sweep_id}` (an unknown sweep is the app's 404 page)."""

    @app.get("/sweeps")
    def sweeps_page() -> Response:
        store = store_of()
        sweeps = found(store, lambda: store.list_sweeps())
        return page("app_sweeps.html.j2", **context("runs", sweeps=sweeps))

    @app.get("/sweeps/{sweep_id}")
    def sweep_page(sweep_id: str) -> Response:
        from polygon_voice.experiments.view import sweep_document
        from polygon_voice.report.sweep_html import sweep_charts

        store = store_of()
        document = found(store, lambda: sweep_document(store, sweep_id))
        charts = sweep_charts(document)
        return page("app_sweep.html.j2", **context("runs", doc=document, charts=charts))

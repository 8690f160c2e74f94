"""bench/cost_per_request.py runs and its figures add up (a check of the benchmark, not timed).

deepeval's side runs only when its venv exists (`bench/cost_per_request.py` makes it); the
test suite never installs it.
"""

from __future__ import annotations

import pytest
from bench.cost_per_request import (
    DEEPEVAL_VENV,
    EXCHANGES,
    Side,
    check,
    measure_deepeval,
    measure_polygon,
    report,
)

# Per Polygon call: the agent's greeting and its answers to the caller's 5 lines, the 5
# lines, one judgement. Turns: 6 of the agent, 5 of the caller.
POLYGON_REQUESTS_PER_CALL = 2 * EXCHANGES + 2
POLYGON_TURNS_PER_CALL = 2 * EXCHANGES + 1


def test_polygons_side_counts_every_request_at_the_server() -> None:
    side = measure_polygon(conversations=3, concurrency=2)
    assert side.harness == "polygon"
    assert side.conversations == 3
    assert side.server_requests == 3 * POLYGON_REQUESTS_PER_CALL
    assert side.client_requests == side.server_requests  # nothing answered from a cache
    assert side.turns == 3 * POLYGON_TURNS_PER_CALL
    assert 0 < side.cpu_s_from_first_request < side.cpu_s  # the imports come before
    assert side.cpu_ms_per_request == pytest.approx(
        1000 * side.cpu_s_from_first_request / side.server_requests
    )
    check(side)  # raises when the figures do not add up


def test_figures_that_do_not_add_up_are_refused() -> None:
    side = Side("polygon", 2, 22, server_requests=24, client_requests=23, cpu_s=2.0,
                cpu_s_from_first_request=1.0)  # fmt: skip
    with pytest.raises(RuntimeError, match="the client counted 23 requests, the server 24"):
        check(side)
    short = Side("deepeval", 2, 4, 22, -1, 2.0, 1.0)
    with pytest.raises(RuntimeError, match="4 turns in 2 calls"):
        check(short)


def test_the_report_gives_both_figures_and_the_ratio() -> None:
    polygon = Side("polygon", 10, 110, 120, 120, 1.0, 0.24)
    deepeval = Side("deepeval", 10, 100, 110, -1, 3.0, 0.66)
    text = report([polygon], [deepeval])
    assert "polygon: 2.000 ms per request" in text
    assert "deepeval: 6.000 ms per request" in text
    assert "ratio polygon/deepeval: 0.33 -> meets the target of <= 0.5" in text
    assert "ratio" not in report([polygon], [])


@pytest.mark.skipif(
    not (DEEPEVAL_VENV / "bin" / "python").exists(),
    reason="deepeval's venv is absent (bench/cost_per_request.py makes it)",
)
def test_deepevals_side_plays_the_same_exchanges() -> None:
    side = measure_deepeval(DEEPEVAL_VENV / "bin" / "python", conversations=2, concurrency=2)
    assert side.conversations == 2
    # Per call: 5 simulated caller lines, 5 agent answers, one metric request.
    assert side.server_requests == 2 * (2 * EXCHANGES + 1)
    assert side.turns == 2 * 2 * EXCHANGES
    check(side)

"""The fake server says when each kind of request arrived (`arrivals()`, GET /_polygon/arrivals),
so a benchmark in another process can time a command's first request."""

from __future__ import annotations

import json
import time
import urllib.request
from collections.abc import Callable
from typing import Any

from polygon_voice.testing import FakeLLMServer, Rule

Serve = Callable[..., FakeLLMServer]


def _call(
    server: FakeLLMServer, path: str, body: dict[str, Any] | None = None, **headers: str
) -> Any:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(
        f"{server.base_url.removesuffix('/v1')}{path}",
        data,
        {"Content-Type": "application/json", **headers},
    )
    with urllib.request.urlopen(request, timeout=5) as response:
        return json.loads(response.read())


CHAT = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}


def test_nothing_has_arrived_before_the_first_request(serve: Serve) -> None:
    server = serve([Rule(text="ok")])
    assert server.arrivals() == {"any": {"count": 0, "first": None, "last": None}}
    # The server's own routes are not requests of a client: asking does not count.
    assert _call(server, "/_polygon/arrivals") == server.arrivals()
    _call(server, "/_polygon/stats")
    assert server.arrivals()["any"]["count"] == 0


def test_each_kind_is_counted_with_its_first_and_last_arrival(serve: Serve) -> None:
    server = serve([Rule(text="ok")])
    before = time.time()
    _call(server, "/v1/models")
    time.sleep(0.01)
    _call(server, "/v1/chat/completions", CHAT)
    _call(server, "/v1/chat/completions", CHAT)
    _call(server, "/v1/chat/completions", CHAT, **{"X-Polygon-Probe": "capabilities"})
    after = time.time()

    arrivals = _call(server, "/_polygon/arrivals")
    assert arrivals == server.arrivals()
    assert {kind: value["count"] for kind, value in arrivals.items()} == {
        "models": 1,
        "chat": 2,
        "probe": 1,
        "any": 4,
    }
    models, chat, any_kind = arrivals["models"], arrivals["chat"], arrivals["any"]
    assert before <= models["first"] == models["last"] < chat["first"] <= chat["last"] <= after
    assert any_kind["first"] == models["first"]
    assert any_kind["last"] == arrivals["probe"]["last"]


def test_the_stats_route_keeps_its_keys(serve: Serve) -> None:
    server = serve([Rule(text="ok")])
    _call(server, "/v1/chat/completions", CHAT)
    assert _call(server, "/_polygon/stats") == {"requests": 1, "in_flight": 0, "max_in_flight": 1}

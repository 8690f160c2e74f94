"""The calls of a run's results keep their stages packed (api/results.py `StoredCallResult`):
they read, compare, copy and total exactly as the validated models did, in a fraction of the
memory."""

from __future__ import annotations

import dataclasses
import gc
import tracemalloc
from pathlib import Path

import pytest

from polygon_voice import open_store, run_suite
from polygon_voice.api.collect import read_run, summarised
from polygon_voice.api.results import CallResult, StoredCallResult
from polygon_voice.store import Store
from tests.cli.conftest import EXAMPLE_SUITE


@pytest.fixture
def stored(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Store, str]:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("POLYGON_DB", raising=False)
    store = open_store(str(tmp_path / "polygon.db"))
    result = run_suite(EXAMPLE_SUITE, store=store, seed=3)
    return store, result.run_id


def _plain(call: CallResult) -> CallResult:
    """The same call as a plain CallResult of validated models (what read_run once gave)."""
    values = {f.name: getattr(call, f.name) for f in dataclasses.fields(CallResult)}
    return CallResult(**values)


def test_each_call_reads_as_the_plain_call_it_stands_for(stored: tuple[Store, str]) -> None:
    store, run_id = stored
    calls = read_run(store, run_id).calls
    assert calls
    for call in calls:
        assert isinstance(call, StoredCallResult)
        plain = _plain(call)
        assert call == plain
        assert plain == call
        assert call.to_dict() == plain.to_dict()
        assert (call.verdict, call.composite, call.not_exercised) == (
            plain.verdict,
            plain.composite,
            plain.not_exercised,
        )
        assert call.judgement is not None
        assert call.judgement is not call.judgement  # validated anew on each read


def test_totals_are_the_same_from_packed_and_from_plain_calls(
    stored: tuple[Store, str],
) -> None:
    store, run_id = stored
    run = read_run(store, run_id)
    again = summarised(tuple(_plain(call) for call in run.calls))
    assert run.expectations == again.expectations
    assert run.probes == again.probes
    assert run.cases.total == again.cases.total
    assert run.cases.gate() == again.cases.gate()


def test_a_copy_with_a_stage_replaced_reads_the_new_stage(stored: tuple[Store, str]) -> None:
    store, run_id = stored
    call = read_run(store, run_id).calls[0]
    assert call.verdict is not None
    unjudged = dataclasses.replace(call, judgement=None)
    assert (unjudged.judgement, unjudged.verdict, unjudged.composite) == (None, None, None)
    assert unjudged.expect == call.expect
    assert unjudged.probes == call.probes
    with pytest.raises(dataclasses.FrozenInstanceError):
        call.judgement = None  # type: ignore[misc]


def test_the_calls_hold_a_fraction_of_their_models(stored: tuple[Store, str]) -> None:
    store, run_id = stored
    read_run(store, run_id)  # imports and caches warmed

    def held(make: object) -> int:
        gc.collect()
        tracemalloc.start()
        before = tracemalloc.get_traced_memory()[0]
        kept = [make() for _ in range(5)]  # type: ignore[operator]
        gc.collect()
        after = tracemalloc.get_traced_memory()[0]
        tracemalloc.stop()
        assert kept
        return after - before

    packed = held(lambda: read_run(store, run_id).calls)
    plain = held(lambda: tuple(_plain(call) for call in read_run(store, run_id).calls))
    assert packed * 2 < plain


def test_stage_rows_in_another_order_are_joined_by_id(
    stored: tuple[Store, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    store, run_id = stored
    expected = read_run(store, run_id)
    in_order = store.iter_stage_results

    def reversed_rows(*args: object, **kwargs: object) -> object:
        return iter(list(in_order(*args, **kwargs))[::-1])  # type: ignore[arg-type]

    monkeypatch.setattr(store, "iter_stage_results", reversed_rows)
    joined = read_run(store, run_id)
    assert joined.calls == expected.calls
    assert (joined.expectations, joined.probes) == (expected.expectations, expected.probes)

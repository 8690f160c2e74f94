"""The personas browser: filters, a persona's page and the calls it played, marking realism."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from polygon_voice.store import PersonaRecord, Store
from tests.web.conftest import Stored
from tests.web.dom import Element, parse


def listed(client: TestClient, query: str = "") -> list[str]:
    doc = parse(client.get(f"/personas{query}").text)
    return [row.attrs["data-persona"] for row in doc.all(data_testid="persona-row")]


def ids(records: list[PersonaRecord]) -> list[str]:
    return [record.id for record in records]


def test_every_stored_persona_is_listed_with_a_link(client: TestClient, stored: Stored) -> None:
    doc = parse(client.get("/personas").text)
    rows = doc.all(data_testid="persona-row")
    assert [row.attrs["data-persona"] for row in rows] == ids(list(stored.personas))
    for row, record in zip(rows, stored.personas, strict=True):
        row.one("a", href=f"/personas/{record.id}")
        assert record.persona.name in row.text
        assert "current" in row.classes()
    form = doc.testid("persona-filters")
    names = {el.attrs["name"] for el in form.all("select")}
    assert names == {"type", "outcome", "difficulty", "staleness", "realism"}


@pytest.mark.parametrize("name", ["type", "outcome", "difficulty"])
def test_each_filter_keeps_the_matching_personas(
    client: TestClient, stored: Stored, name: str
) -> None:
    def value(record: PersonaRecord) -> str:
        persona = record.persona
        field = {"type": persona.type, "outcome": persona.intended_outcome}.get(name)
        return str(persona.difficulty) if field is None else field.value

    values = {value(record) for record in stored.personas}
    assert len(values) > 1 or name == "difficulty"  # the filter has something to take away
    for chosen in values:
        expected = [r.id for r in stored.personas if value(r) == chosen]
        assert listed(client, f"?{name}={chosen}") == expected


def test_staleness_filters_against_the_prompt_as_it_is_now(
    client: TestClient, stored: Stored
) -> None:
    assert listed(client, "?staleness=stale") == []
    assert listed(client, "?staleness=current") == ids(list(stored.personas))


def test_a_persona_page_shows_its_fields_and_the_calls_it_played(
    client: TestClient, stored: Stored
) -> None:
    record = stored.personas[0]
    doc = parse(client.get(f"/personas/{record.id}").text)
    fields = doc.testid("persona-fields")
    assert fields.one("dd", data_field="goal").text == record.persona.goal
    assert fields.one("dd", data_field="type").text == record.persona.type.value
    for key in record.persona.facts:
        assert key in fields.one("dd", data_field="facts").text
    assert "current" in doc.testid("persona-status").text
    calls = doc.all(data_testid="persona-conversation")
    with Store(stored.db_url) as store:
        run = store.get_run(stored.personas_run)
        scenario = next(e["scenario"] for e in run.config["personas"] if e["persona"] == record.id)
        played = [s.id for s in store.iter_summaries(run.id) if s.scenario_id == scenario]
    assert [c.attrs["data-conversation"] for c in calls] == played
    viewer = calls[0].one("a", href=f"/runs/{run.id}/conversations/{played[0]}")
    assert client.get(viewer.attrs["href"]).status_code == 200
    assert not doc.all(data_testid="unrealistic-badge")


def _mark(client: TestClient, doc: Element, **fields: str) -> Element:
    form = doc.testid("realism-form")
    data = {el.attrs["name"]: el.attrs.get("value", "") for el in form.all("input", type="hidden")}
    data.update(fields)
    response = client.post(form.attrs["action"], data=data, follow_redirects=False)
    assert response.status_code == 303
    return parse(client.get(response.headers["location"]).text)


def test_marking_a_persona_unrealistic_is_stored_shown_and_filterable(
    client: TestClient, stored: Stored
) -> None:
    record = stored.personas[1]
    doc = parse(client.get(f"/personas/{record.id}").text)
    doc.testid("mark-unrealistic")
    try:
        marked = _mark(client, doc, note="Nobody <b>talks</b> like this")
        assert marked.testid("unrealistic-badge").text.strip() == "unrealistic"
        assert "Nobody <b>talks</b> like this" in marked.testid("unrealistic-note").text
        assert not marked.all("b")  # the note is text
        with Store(stored.db_url) as store:
            again = store.get_persona(record.id)
        assert again.unrealistic
        assert again.unrealistic_note == "Nobody <b>talks</b> like this"
        assert listed(client, "?realism=unrealistic") == [record.id]
        assert record.id not in listed(client, "?realism=realistic")
        row = parse(client.get("/personas").text).one(data_persona=record.id)
        assert "unrealistic" in row.classes()
        realistic = _mark(client, marked)
        assert not realistic.all(data_testid="unrealistic-badge")
        realistic.testid("mark-unrealistic")
        assert listed(client, "?realism=unrealistic") == []
    finally:
        with Store(stored.db_url) as store:
            store.mark_persona(record.id, False)


def test_marking_an_unknown_persona_is_a_404(client: TestClient, stored: Stored) -> None:
    token = parse(client.get(f"/personas/{stored.personas[0].id}").text).one("input", name="csrf")
    response = client.post(
        "/personas/p-nosuch/realism", data={"unrealistic": "1", "csrf": token.attrs["value"]}
    )
    assert response.status_code == 404
    assert "p-nosuch" in response.text


def test_a_note_longer_than_the_limit_is_refused_and_nothing_is_marked(
    client: TestClient, stored: Stored
) -> None:
    record = stored.personas[2]
    doc = parse(client.get(f"/personas/{record.id}").text)
    token = doc.one("input", name="csrf").attrs["value"]
    response = client.post(
        f"/personas/{record.id}/realism",
        data={"unrealistic": "1", "note": "x" * 2001, "csrf": token},
    )
    assert response.status_code == 400
    assert "2,001 characters" in response.text
    with Store(stored.db_url) as store:
        assert not store.get_persona(record.id).unrealistic

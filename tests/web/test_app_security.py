"""Who may use the app and what it sends: token, cookie, CSRF, Host check, headers, XSS."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import quote

import pytest
from fastapi.testclient import TestClient

from polygon_voice.store import RunRecord, Store
from polygon_voice.web.app import create_app
from polygon_voice.web.security import CONTENT_SECURITY_POLICY, TOKEN_COOKIE
from polygon_voice.web.settings import WebSettings
from tests.payloads import IMG, LINK, SCRIPT
from tests.web.conftest import BASE_URL, Stored
from tests.web.dom import Element, parse

TOKEN = "s3cret-token-for-tests"
LAN_URL = "http://192.168.7.20:8000"


@pytest.fixture
def lan(stored: Stored) -> TestClient:
    """A client of the app served on a LAN address, which needs the token."""
    settings = stored.settings(host="192.168.7.20", token=TOKEN)
    return TestClient(create_app(settings), base_url=LAN_URL, follow_redirects=False)


def test_a_lan_host_without_a_token_is_refused_at_creation(stored: Stored) -> None:
    with pytest.raises(ValueError, match="access token"):
        create_app(stored.settings(host="0.0.0.0"))
    create_app(stored.settings(host="::1"))  # loopback needs none


def test_without_the_token_every_page_is_401(lan: TestClient, stored: Stored) -> None:
    for url in ("/", f"/runs/{stored.flawed}", "/personas", "/static/charts.js", "/nothing"):
        response = lan.get(url)
        assert response.status_code == 401, url
        assert "Access token needed" in response.text
        assert stored.flawed not in response.text
    assert lan.get("/?token=wrong").status_code == 401
    assert lan.get("/", headers={"Authorization": "Bearer wrong"}).status_code == 401
    lan.cookies.set(TOKEN_COOKIE, "wrong")
    assert lan.get("/").status_code == 401


def test_the_token_in_the_address_becomes_a_cookie_and_leaves_the_address(
    lan: TestClient, stored: Stored
) -> None:
    response = lan.get(f"/runs/{stored.flawed}?token={TOKEN}&set=")
    assert response.status_code == 303
    assert response.headers["location"] == f"/runs/{stored.flawed}?set="
    cookie = response.headers["set-cookie"]
    assert cookie.startswith(f"{TOKEN_COOKIE}={TOKEN};")
    assert "HttpOnly" in cookie
    assert "SameSite=strict" in cookie or "SameSite=Strict" in cookie
    followed = lan.get(response.headers["location"])  # the client keeps the cookie
    assert followed.status_code == 200
    assert stored.flawed in followed.text


def test_a_bearer_header_is_enough(lan: TestClient) -> None:
    response = lan.get("/", headers={"Authorization": f"Bearer {TOKEN}"})
    assert response.status_code == 200
    assert "runs-table" in response.text


def test_a_token_given_on_loopback_is_checked_too(stored: Stored) -> None:
    app = create_app(stored.settings(token=TOKEN))
    with TestClient(app, base_url=BASE_URL, follow_redirects=False) as client:
        assert client.get("/").status_code == 401
        assert client.get(f"/?token={TOKEN}").status_code == 303
        assert client.get("/").status_code == 200


def test_a_host_header_of_another_name_is_refused(client: TestClient, stored: Stored) -> None:
    for host in ("attacker.example", "attacker.example:8000", "127.0.0.1.nip.io"):
        response = client.get("/", headers={"Host": host})
        assert response.status_code == 400, host
        assert stored.flawed not in response.text
    for host in ("127.0.0.1:8000", "localhost:8000", "[::1]:8000", "LOCALHOST"):
        assert client.get("/", headers={"Host": host}).status_code == 200, host


def test_every_response_carries_the_security_headers(client: TestClient, stored: Stored) -> None:
    for url, status in (
        ("/", 200),
        (f"/runs/{stored.flawed}", 200),
        ("/static/charts.js", 200),
        ("/nothing", 404),
    ):
        response = client.get(url)
        assert response.status_code == status
        assert response.headers["content-security-policy"] == CONTENT_SECURITY_POLICY
        assert response.headers["x-content-type-options"] == "nosniff"
        assert response.headers["referrer-policy"] == "same-origin"
    refused = client.get("/", headers={"Host": "evil.example"})
    assert refused.headers["content-security-policy"] == CONTENT_SECURITY_POLICY
    assert "'unsafe-inline'" not in CONTENT_SECURITY_POLICY
    assert "'unsafe-eval'" not in CONTENT_SECURITY_POLICY


def _get_pages(stored: Stored) -> list[str]:
    """One address of each GET page, and a static file, an unknown run and no page at all."""
    persona = stored.personas[0]
    prompt = quote(str((stored.root / "weak.md").resolve()))
    return [
        "/",
        "/?rubric=v2",
        f"/runs/{stored.flawed}",
        f"/runs/{stored.flawed}/conversations/{_first_call(stored)}",
        f"/compare?run={stored.flawed}&run={stored.robust}",
        f"/compare?run={stored.robust}&run={stored.robust_v2}",  # refused: 409
        "/prompts",
        f"/prompts/edit?path={prompt}",
        "/personas",
        f"/personas/{persona.id}",
        "/static/charts.js",
        "/favicon.ico",
        "/runs/no-such-run",
        "/nothing",
    ]


def _first_call(stored: Stored) -> str:
    with Store(stored.db_url) as store:
        return next(iter(store.iter_summaries(stored.flawed))).id


def test_every_get_page_answers_head_with_its_status_and_headers_and_no_body(
    client: TestClient, stored: Stored
) -> None:
    for url in _get_pages(stored):
        got, head = client.get(url), client.head(url)
        assert head.status_code == got.status_code != 405, url
        assert head.content == b"", url
        assert dict(head.headers) == dict(got.headers), url
    # A POST-only address still refuses HEAD, as it refuses GET.
    assert client.head(f"/personas/{stored.personas[0].id}/realism").status_code == 405


def test_head_passes_the_same_checks_as_get(lan: TestClient, stored: Stored) -> None:
    for url in _get_pages(stored):
        head = lan.head(url)
        assert head.status_code == 401, url
        assert head.content == b"", url
        assert head.headers["content-security-policy"] == CONTENT_SECURITY_POLICY
    assert lan.head("/", headers={"Host": "attacker.example"}).status_code == 400
    redirect = lan.head(f"/?token={TOKEN}")
    assert redirect.status_code == 303
    assert redirect.headers["location"] == "/"
    assert lan.head("/", headers={"Authorization": f"Bearer {TOKEN}"}).status_code == 200


def _csrf(client: TestClient, url: str) -> str:
    field = parse(client.get(url).text).one("input", name="csrf")
    return field.attrs["value"]


def test_a_post_without_the_form_token_is_refused(client: TestClient, stored: Stored) -> None:
    persona = stored.personas[-1]
    url = f"/personas/{persona.id}/realism"
    response = client.post(url, data={"unrealistic": "1"})
    assert response.status_code == 403
    response = client.post(url, data={"unrealistic": "1", "csrf": "guessed"})
    assert response.status_code == 403
    with Store(stored.db_url) as store:
        assert not store.get_persona(persona.id).unrealistic


def test_a_post_from_another_origin_is_refused_even_with_the_form_token(
    client: TestClient, stored: Stored
) -> None:
    persona = stored.personas[-1]
    token = _csrf(client, f"/personas/{persona.id}")
    url = f"/personas/{persona.id}/realism"
    data = {"unrealistic": "1", "csrf": token}
    for headers in (
        {"Origin": "http://attacker.example"},
        {"Origin": "null"},
        {"Sec-Fetch-Site": "cross-site"},
        {"Referer": "http://attacker.example/page"},
    ):
        response = client.post(url, data=data, headers=headers, follow_redirects=False)
        assert response.status_code == 403, headers
    with Store(stored.db_url) as store:
        assert not store.get_persona(persona.id).unrealistic
    prompt = stored.root / "weak.md"
    before = prompt.read_bytes()
    response = client.post(
        f"/prompts/edit?path={quote(str(prompt.resolve()))}",
        data={"text": "changed", "action": "save", "csrf": token},
        headers={"Origin": "http://attacker.example"},
    )
    assert response.status_code == 403
    assert prompt.read_bytes() == before


def test_paths_outside_the_known_prompts_are_never_opened(
    client: TestClient, stored: Stored
) -> None:
    secret = stored.root / "secret.txt"
    secret.write_text("DO-NOT-SHOW")
    known = str((stored.root / "weak.md").resolve())
    token = _csrf(client, f"/prompts/edit?path={quote(known)}")
    for path in (
        str(secret),
        f"{stored.root}/../{stored.root.name}/secret.txt",
        known + "/../secret.txt",
        str(stored.root / "sub" / ".." / "weak.md"),  # the same file, spelt another way
        "/etc/passwd",
        "../../etc/passwd",
        "",
    ):
        response = client.get(f"/prompts/edit?path={quote(path)}")
        assert response.status_code == 404, path
        assert "DO-NOT-SHOW" not in response.text
        saved = client.post(
            f"/prompts/edit?path={quote(path)}",
            data={"text": "overwritten", "action": "save", "csrf": token},
        )
        assert saved.status_code == 404, path
    assert secret.read_text() == "DO-NOT-SHOW"
    assert client.get(f"/prompts/edit?path={quote(known)}").status_code == 200


def _no_markup_from_data(doc: Element) -> None:
    """No element a payload could have made: only the app's own scripts, no handlers,
    no javascript: links."""
    for element in doc.iter():
        if element.tag == "script":
            assert element.attrs.get("type") == "application/json" or element.attrs.get(
                "src", ""
            ).startswith("/static/"), element.attrs
        if element.tag == "img":
            raise AssertionError(f"an img element came from data: {element.attrs}")
        for name, value in element.attrs.items():
            assert not name.startswith("on"), (element.tag, name)
            if name in ("href", "src", "action", "formaction"):
                assert not value.strip().lower().startswith("javascript:"), (element.tag, value)


def test_payloads_in_caller_lines_and_tool_results_come_out_as_text(
    client: TestClient, stored: Stored
) -> None:
    with Store(stored.db_url) as store:
        (summary,) = store.iter_summaries(stored.hostile)
        call = store.get_conversation(stored.hostile, summary.id)
    assert any(SCRIPT in turn.text for turn in call.turns)
    assert any(c.result and IMG in str(c.result) for c in call.tool_calls)
    for url in (
        f"/runs/{stored.hostile}/conversations/{summary.id}",
        f"/runs/{stored.hostile}",
        "/",
    ):
        response = client.get(url)
        assert response.status_code == 200
        doc = parse(response.text)
        _no_markup_from_data(doc)
        assert "<script>alert" not in response.text
    viewer = parse(client.get(f"/runs/{stored.hostile}/conversations/{summary.id}").text)
    text = viewer.text
    for payload in (SCRIPT, IMG, LINK):
        assert payload in text  # shown as the characters it is made of


def test_a_json_script_element_cannot_be_closed_by_data(client: TestClient, stored: Stored) -> None:
    response = client.get(f"/runs/{stored.hostile}")
    for element in parse(response.text).all("script", type="application/json"):
        assert "</script" not in element.text.lower()
        assert "<" not in element.text


def test_no_credential_of_a_run_config_reaches_a_page(tmp_path: Path) -> None:
    db_url = f"sqlite:///{tmp_path / 'secrets.db'}"
    started = datetime.now(UTC)
    agent = "http://voice:hunter2-password@agent.example/call?api_key=sk-query-0123456789"
    with Store(db_url) as store:
        store.create_run(
            RunRecord(
                id="secretrun001",
                suite="s",
                suite_path="suite.yaml",
                suite_hash="0" * 16,
                agent=agent,
                seed=0,
                started_at=started,
                config={"llm": {"api_key": "sk-live-abcdef123456"}, "agent_spec": agent},
            )
        )
        store.finish_run("secretrun001", "finished", started)
    with TestClient(create_app(WebSettings(db_url=db_url)), base_url=BASE_URL) as client:
        for url in ("/", "/runs/secretrun001"):
            response = client.get(url)
            assert response.status_code == 200, url
            assert "secretrun001" in response.text
            for secret in ("hunter2-password", "sk-query-0123456789", "sk-live-abcdef123456"):
                assert secret not in response.text, (url, secret)

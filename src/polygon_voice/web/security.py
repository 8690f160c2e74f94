"""Who may use the app: the Host check, the access token, cross-site posts, response headers.

Every request passes `guard` (a FastAPI HTTP middleware) in this order:

1. The Host header must name this server (DNS rebinding: a page of another site whose
   name was re-pointed at 127.0.0.1 would otherwise read the app as same-origin).
2. With a token (any non-loopback host): `?token=` once, which sets an HttpOnly,
   SameSite=Strict cookie and redirects to the same URL without it; afterwards the
   cookie or an `Authorization: Bearer` header. Compared in constant time.
3. A POST (or any unsafe method) must come from this origin: a foreign `Origin` header or
   `Sec-Fetch-Site: cross-site` is refused (also on loopback: any web page in the user's
   browser can post to 127.0.0.1). Each form carries the process's CSRF token besides,
   checked by `check_csrf` in the handler.

Every response, refusals included, gets the security headers of `SECURITY_HEADERS`.
"""

from __future__ import annotations

import hmac
from collections.abc import Awaitable, Callable
from urllib.parse import urlencode, urlsplit

from fastapi import Request
from fastapi.responses import RedirectResponse, Response

from polygon_voice.web.settings import WebSettings

TOKEN_COOKIE = "polygon_token"
TOKEN_PARAM = "token"
CSRF_FIELD = "csrf"
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})

# The charts run from files of this origin and get their specs from JSON script elements;
# the vega interpreter evaluates expressions without eval, so no 'unsafe-eval' is needed.
CONTENT_SECURITY_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
)
SECURITY_HEADERS = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Content-Type-Options": "nosniff",
    # same-origin, not no-referrer: under no-referrer a browser sends `Origin: null` with a
    # form post, and the same-origin check below would refuse every form of the app.
    "Referrer-Policy": "same-origin",
    "X-Frame-Options": "DENY",
    "Cache-Control": "no-store",
}

Refuse = Callable[[Request, int, str, str], Response]
CallNext = Callable[[Request], Awaitable[Response]]


def same_secret(given: str | None, expected: str) -> bool:
    """`given == expected` in time independent of where they differ."""
    if given is None:
        return False
    return hmac.compare_digest(given.encode("utf-8", "replace"), expected.encode("utf-8"))


def check_csrf(settings: WebSettings, given: str | None) -> bool:
    """Whether a form's CSRF field carries this process's token."""
    return same_secret(given, settings.csrf_token)


def host_name(host_header: str) -> str:
    """The name of a Host header without its port: `[::1]:8000` -> `::1`."""
    value = host_header.strip().lower()
    if value.startswith("["):
        return value[1:].split("]", 1)[0]
    if value.count(":") == 1:
        return value.split(":", 1)[0]
    return value


def bearer(request: Request) -> str | None:
    """The token of an `Authorization: Bearer T` header, if any."""
    scheme, _, value = request.headers.get("authorization", "").partition(" ")
    return value.strip() if scheme.lower() == "bearer" and value.strip() else None


def make_guard(
    settings: WebSettings, refuse: Refuse
) -> Callable[[Request, CallNext], Awaitable[Response]]:
    """The middleware: checks each request, then adds the security headers to the answer."""
    allowed = settings.allowed_hosts()

    async def guard(request: Request, call_next: CallNext) -> Response:
        response = _check(request, settings, allowed, refuse)
        if response is None:
            response = await call_next(request)
        for name, value in SECURITY_HEADERS.items():
            response.headers.setdefault(name, value)
        return response

    return guard


def _check(
    request: Request, settings: WebSettings, allowed: frozenset[str] | None, refuse: Refuse
) -> Response | None:
    """A refusal or redirect for this request, or None when it may go on."""
    host = host_name(request.headers.get("host", ""))
    if allowed is not None and host not in allowed:
        return refuse(
            request,
            400,
            "Unknown host name",
            f"This server answers only to {', '.join(sorted(allowed))}; open it by one of "
            "those names (a page that reached it under another name is refused).",
        )
    if settings.token is not None:
        answer = _check_token(request, settings.token, refuse)
        if answer is not None:
            return answer
    if request.method not in SAFE_METHODS and not _same_origin(request):
        return refuse(
            request,
            403,
            "Cross-site request refused",
            "This form was sent from another site. Open the page in this app and send it again.",
        )
    return None


def _check_token(request: Request, token: str, refuse: Refuse) -> Response | None:
    given = request.query_params.get(TOKEN_PARAM)
    if given is not None and request.method in SAFE_METHODS:
        if not same_secret(given, token):
            return _unauthorized(request, refuse)
        # The token leaves the address bar (and the history) at once; the cookie carries it.
        rest = [(k, v) for k, v in request.query_params.multi_items() if k != TOKEN_PARAM]
        target = request.url.path + (f"?{urlencode(rest)}" if rest else "")
        redirect = RedirectResponse(target, status_code=303)
        redirect.set_cookie(
            TOKEN_COOKIE, token, httponly=True, samesite="strict", path="/", secure=False
        )
        return redirect
    if same_secret(request.cookies.get(TOKEN_COOKIE), token):
        return None
    if same_secret(bearer(request), token):
        return None
    return _unauthorized(request, refuse)


def _unauthorized(request: Request, refuse: Refuse) -> Response:
    return refuse(
        request,
        401,
        "Access token needed",
        "This server is reachable from other machines, so it asks for its access token. "
        "Open the address `polygon serve` printed (it ends in ?token=...), or send the "
        "header Authorization: Bearer TOKEN.",
    )


def _same_origin(request: Request) -> bool:
    """Whether an unsafe request comes from a page of this server (or from no page at all)."""
    if request.headers.get("sec-fetch-site", "").lower() == "cross-site":
        return False
    origin = request.headers.get("origin")
    if origin is None:
        referer = request.headers.get("referer")
        if referer is None:
            # Not sent by a browser page (curl, a script): the token and the CSRF field decide.
            return True
        origin = referer
    parts = urlsplit(origin)
    if origin == "null" or not parts.netloc:
        return False
    return parts.netloc.lower() == request.headers.get("host", "").strip().lower()

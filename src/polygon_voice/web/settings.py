"""What one `polygon serve` process serves, and to whom."""

from __future__ import annotations

import ipaddress
import secrets
from dataclasses import dataclass, field
from pathlib import Path

# Names a browser on this machine may use to reach a loopback server.
LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})
# Addresses that bind every interface: the Host header cannot be predicted for them.
WILDCARD_HOSTS = frozenset({"0.0.0.0", "::", ""})
DEFAULT_LINT_TIER = 2  # rules and surprisal: no model needed


def is_loopback(host: str) -> bool:
    """Whether `host` (a name or an address) only listens on this machine."""
    name = host.strip("[]").lower()
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


@dataclass(frozen=True)
class WebSettings:
    """How the app is served: the results database, the access token and the prompt files.

    `token` is required unless `host` is a loopback address (`create_app` refuses
    otherwise). `prompt_files` may be edited in the prompt editor, as may every prompt
    file that stored personas were generated from; no other path is ever opened.
    """

    db_url: str
    host: str = "127.0.0.1"
    port: int = 8000
    token: str | None = None
    prompt_files: tuple[Path, ...] = ()
    lint_max_tier: int = DEFAULT_LINT_TIER
    # Host names accepted besides the loopback names and `host` (e.g. a machine's DNS name).
    extra_hosts: tuple[str, ...] = ()
    # Tied to this process: a form rendered by an earlier server is refused after a restart.
    csrf_token: str = field(default_factory=lambda: secrets.token_urlsafe(32), repr=False)

    @property
    def needs_token(self) -> bool:
        """Whether the address can be reached from other machines."""
        return not is_loopback(self.host)

    def allowed_hosts(self) -> frozenset[str] | None:
        """Host header names accepted (DNS rebinding); None: any, for a wildcard bind."""
        if self.host in WILDCARD_HOSTS:
            return None  # the token still guards every request
        names = {*LOOPBACK_NAMES, self.host.strip("[]").lower()}
        names.update(name.lower() for name in self.extra_hosts)
        return frozenset(names)

    def url(self) -> str:
        """The address to open in a browser, without the token."""
        host = "127.0.0.1" if self.host in WILDCARD_HOSTS else self.host
        shown = f"[{host}]" if ":" in host and not host.startswith("[") else host
        return f"http://{shown}:{self.port}/"

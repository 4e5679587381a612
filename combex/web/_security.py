"""Who may read and write: the bind check, allowed hosts, sign-in sessions and CSRF tokens.

The model (stated once; ``docs/guide/studies.md`` explains it to users):

* **Bind.** The server listens on a loopback address unless ``allow_remote`` is given
  (:func:`check_bind`); a remote bind is served over plain HTTP, so the command warns that
  traffic (tokens, cookies, scores) is unencrypted and belongs behind a TLS proxy.
* **Host header.** Requests whose ``Host`` is not a loopback name (``localhost``,
  ``127.0.0.1``, ``::1``) or one given with ``--allowed-host`` are refused with 400
  (Starlette's ``TrustedHostMiddleware``): a page of another site that rebinds its DNS name
  to 127.0.0.1 cannot read the studies.
* **Sign-in.** An assistant signs in to one study with the token
  ``study.add_assistant(name)`` printed once; the server keeps the sign-in in its memory
  (:class:`SignIns`) under a random session id, and the browser holds only that id in a
  signed cookie (HttpOnly, SameSite=Strict). Every write checks the token again, so removing
  an assistant ends their sign-in at once. The *owner* (whoever started the server, at its
  terminal) signs in with the owner token the command prints; the owner may correct or
  release any ticket, and the study records the owner's writes as ``assistant=None``.
* **Writes** are form posts that carry the session's CSRF token; a post whose ``Origin``
  (or ``Sec-Fetch-Site``) names another site is refused before the token is looked at.
"""

from __future__ import annotations

import hmac
import ipaddress
import re
import secrets
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from .._validation import check_int, param_error

__all__ = ["LOCAL_HOSTS", "is_loopback", "check_bind", "check_port", "allowed_hosts", "SignIns", "SignIn",
           "same_origin", "new_token", "tokens_equal"]

#: The names a browser on this machine uses for the server.
LOCAL_HOSTS = ("localhost", "127.0.0.1", "[::1]")

#: How long a sign-in lasts without use (seconds): a working day.
SIGN_IN_SECONDS = 12 * 3600


def is_loopback(host: str) -> bool:
    """Whether ``host`` (a name or an address, IPv6 with or without brackets) is this
    machine's loopback interface only."""
    h = host.strip().strip("[]").lower()
    if h == "localhost":
        return True
    try:
        return ipaddress.ip_address(h).is_loopback
    except ValueError:
        return False


def check_port(port: Any, *, owner: str = "combex dashboard") -> int:
    """The TCP port, an int in [0, 65535] (0: any free port)."""
    if isinstance(port, str):
        try:
            port = int(port, 10)
        except ValueError:
            raise param_error("port", owner, "an int in the range [0, 65535]", port) from None
    return check_int(port, "port", owner=owner, low=0, high=65535)


def check_bind(host: str, *, allow_remote: bool, owner: str = "combex dashboard") -> None:
    """Refuse a non-loopback ``host`` unless ``allow_remote``.

    Raises
    ------
    InvalidParameterError
        When ``host`` is empty, or not a loopback address and ``allow_remote`` is false.
    """
    if not isinstance(host, str) or not host.strip():
        raise param_error("host", owner, "a host name or an address", host)
    if not allow_remote and not is_loopback(host):
        raise param_error(
            "host", owner,
            "a loopback address (127.0.0.1, ::1, localhost) unless remote access is allowed "
            "(--allow-remote; the traffic is then unencrypted: put the server behind TLS)", host)


def allowed_hosts(host: str, extra: Any = ()) -> list[str]:
    """The ``Host`` header values accepted: the loopback names, the bind address when it
    is a specific one, and ``extra`` (``--allowed-host``)."""
    names = [host] if host.strip().strip("[]") not in ("0.0.0.0", "::", "") else []
    out = list(LOCAL_HOSTS)
    for e in names + list(extra or ()):
        v = e.strip().strip("[]").lower() if isinstance(e, str) else ""
        if not (_is_address(v) or _HOST_NAME.match(v)):
            raise param_error("allowed_host", "combex dashboard",
                              "a host name or an address without port or scheme (e.g. lab-pc.example.org)", e)
        if ":" in v:  # an IPv6 literal: the Host header writes it in brackets
            v = f"[{v}]"
        if v not in out:
            out.append(v)
    return out


_HOST_NAME = re.compile(r"^(\*\.)?[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$")


def _is_address(text: str) -> bool:
    try:
        ipaddress.ip_address(text)
        return True
    except ValueError:
        return False


def new_token(nbytes: int = 24) -> str:
    """A random URL-safe secret."""
    return secrets.token_urlsafe(nbytes)


def tokens_equal(a: Any, b: Any) -> bool:
    """Constant-time comparison of two secrets (False unless both are non-empty strings)."""
    if not isinstance(a, str) or not isinstance(b, str) or not a or not b:
        return False
    return hmac.compare_digest(a.encode(), b.encode())


def same_origin(headers: Any, host: str) -> bool:
    """Whether a write comes from a page of this server: ``Sec-Fetch-Site`` (when the
    browser sends it) is ``same-origin`` or ``none``, and ``Origin`` (when present) has
    ``host`` as its host and port."""
    site = headers.get("sec-fetch-site")
    if site is not None and site not in ("same-origin", "none"):
        return False
    origin = headers.get("origin")
    if origin is None:
        return True
    if origin == "null":
        return False
    _, sep, rest = origin.partition("://")
    return bool(sep) and rest.rstrip("/").lower() == host.lower()


@dataclass
class SignIn:
    """One browser's sign-ins: the owner flag and, per study, ``(assistant, token)``."""

    owner: bool = False
    studies: dict[str, tuple[str, str]] = field(default_factory=dict)
    last_used: float = 0.0


class SignIns:
    """The server's sign-in table: session id -> :class:`SignIn` (in memory only, so a
    restart signs everybody out; entries unused for ``max_age`` seconds are dropped)."""

    def __init__(self, *, max_age: float = SIGN_IN_SECONDS, clock: Any = time.time) -> None:
        self.max_age = float(max_age)
        self.clock = clock
        self._d: dict[str, SignIn] = {}
        self._lock = threading.Lock()

    def get(self, sid: Any) -> SignIn | None:
        if not isinstance(sid, str):
            return None
        now = self.clock()
        with self._lock:
            s = self._d.get(sid)
            if s is None:
                return None
            if now - s.last_used > self.max_age:
                del self._d[sid]
                return None
            s.last_used = now
            return s

    def start(self, old_sid: Any) -> tuple[str, SignIn]:
        """A fresh session id carrying the sign-ins of ``old_sid`` (the id changes at every
        sign-in, so an id known before it is worth nothing after)."""
        old = self.get(old_sid)
        now = self.clock()
        sid = new_token(32)
        s = SignIn(owner=old.owner if old else False, studies=dict(old.studies) if old else {}, last_used=now)
        with self._lock:
            if isinstance(old_sid, str):
                self._d.pop(old_sid, None)
            for k in [k for k, v in self._d.items() if now - v.last_used > self.max_age]:
                del self._d[k]
            self._d[sid] = s
        return sid, s

    def end(self, sid: Any) -> None:
        with self._lock:
            if isinstance(sid, str):
                self._d.pop(sid, None)

"""The study web app (Starlette + Jinja2): pages, JSON endpoints and the assistants' forms.

Routes (``NAME`` is a study name, URL-quoted)::

    GET  /                          the studies             GET /api/studies
    GET  /study/NAME                a study (polls JSON)    GET /api/study/NAME
    GET  /study/NAME/assistant      sign in, ask, enter a score, release, correct
    POST /study/NAME/signin         token -> sign-in                     (CSRF)
    POST /study/NAME/ask            a ticket for the signed-in assistant (CSRF, sign-in)
    POST /study/NAME/enter          the confirmation page of a score     (CSRF, sign-in)
    POST /study/NAME/tell           record the confirmed score           (CSRF, sign-in)
    POST /study/NAME/release        hand a ticket back                   (CSRF, sign-in)
    POST /study/NAME/correct        the confirmation page of a correction(CSRF, sign-in)
    POST /study/NAME/correct/confirm  record the correction              (CSRF, sign-in)
    POST /study/NAME/budget         the owner sets the budget            (CSRF, owner)
    POST /study/NAME/stop           the owner ends the study now         (CSRF, owner)
    POST /signout

Reads go through the Study API's read methods on one :class:`~combex.studies.Study`
object per study kept for reading, writes through another (each guarded by its own lock:
a slow write never holds up a poll). The security model is in :mod:`combex.web._security`.
"""

from __future__ import annotations

import inspect
import math
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np

from .._validation import check_float, param_error
from ..exceptions import StateError, StudyFinishedError
from ..studies import get_all_study_names, get_storage, load_study
from ._data import Scrubber, studies_list, study_snapshot, told_row, told_rows_all
from ._security import SIGN_IN_SECONDS, SignIns, allowed_hosts, new_token

__all__ = ["create_app", "parse_score", "fmt_score", "accepts_assistant", "WebApp"]

HERE = Path(__file__).resolve().parent

#: Content-Security-Policy of every response: scripts, styles and images from this server only.
CSP = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
       "object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'")


def parse_score(text: Any) -> float:
    """A score typed in a form: a plain decimal number ("75", "7.5", "-3e1").

    Raises
    ------
    ValueError
        With a message for the person typing (a comma as decimal mark, an empty field,
        words, an infinite value).
    """
    s = str(text if text is not None else "").strip()
    if not s:
        raise ValueError("Enter the score (a number).")
    if "," in s:
        raise ValueError(f"Write the score with a decimal point, not a comma. Got {s!r}.")
    try:
        x = float(s)
    except ValueError:
        raise ValueError(f"The score must be a number. Got {s!r}.") from None
    if not math.isfinite(x):
        raise ValueError(f"The score must be a finite number. Got {s!r}.")
    return x


def fmt_time(iso: Any) -> str:
    """An ISO-8601 UTC time for people, to the second (several scores can be told in one
    minute): "2026-11-27 18:31:05 UTC" ("-" for None)."""
    if not iso:
        return "-"
    text = str(iso)
    return text[:19].replace("T", " ") + " UTC" if text.endswith("Z") and "T" in text else text


def fmt_score(x: Any) -> str:
    """A score as typed back: the shortest text that reads back to the same float ("75",
    "7.5", "74.123456789"); "-" for None."""
    if x is None:
        return "-"
    v = float(x)
    if v.is_integer() and abs(v) < 1e15:
        return str(int(v))
    return repr(v)


def forecast_plot(f: Any, width: float = 640.0) -> dict[str, Any]:
    """The forecast page's figure (an inline SVG the template draws): one dot per
    continuation at the evaluations more it needed (hollow at the right edge: not certified
    within the horizon), stacked where they fall together, and the end of the budget as a
    dashed line. Pixel coordinates, and the axis ticks with their labels."""
    left = None if f.budget is None else max(f.budget - f.evaluations, 0)
    done = [m for m in f.more if m is not None]
    xmax = float(f.horizon) if len(done) < len(f.more) else max(done + ([left] if left else []) + [1]) * 1.08
    x0, x1 = 14.0, width - 26.0  # room for the last tick's label

    def px(v: float) -> float:
        return x0 + (x1 - x0) * min(float(v), xmax) / xmax

    stack: dict[int, int] = {}
    raw = []
    for m in sorted(f.more, key=lambda v: math.inf if v is None else v):
        x = px(xmax if m is None else m)
        k = stack[int(x // 8)] = stack.get(int(x // 8), -1) + 1
        raw.append((x, k, m))
    height = 64.0 + 8.0 * max(stack.values(), default=0)
    base = height - 26.0
    dots = [{"x": round(x, 1), "y": round(base - 7 - 8 * k, 1), "open": m is None,
             "title": f"not certified within {f.horizon:,} more" if m is None else f"{m:,} more"} for x, k, m in raw]
    step = 10.0 ** math.floor(math.log10(max(xmax / 4, 1.0)))
    step *= 5 if xmax / step > 20 else (2 if xmax / step > 8 else 1)
    ticks = [{"x": round(px(v), 1), "label": f"{int(v):,}"} for v in np.arange(0.0, xmax + 1e-9, step)]
    budget = None if left is None else {"x": round(px(left), 1), "label": f"the budget: {left:,} more"}
    return {"width": width, "height": height, "base": base, "x0": x0, "x1": x1, "dots": dots, "ticks": ticks,
            "budget": budget}


class _StudyHandle:
    """The read and write :class:`Study` objects of one study, each with its lock, and
    the last snapshot (kept ``ttl`` seconds, dropped at every write)."""

    def __init__(self, storage: Any, name: str) -> None:
        self.name = name
        self.reader = load_study(storage=storage, name=name)
        self.writer = load_study(storage=storage, name=name)
        self.read_lock = threading.Lock()
        self.write_lock = threading.Lock()
        self.snapshot: tuple[float, dict[str, Any]] | None = None


class WebApp:
    """State of one server: the storage, its studies, the sign-in table and settings."""

    def __init__(self, storage: Any, *, interval: float, remote: bool, owner_token: str | None,
                 clock: Any = time.time) -> None:

        self.storage_arg = storage
        self.storage = get_storage(storage)
        self.scrub = Scrubber(storage, self.storage)
        self.interval = float(interval)
        self.remote = bool(remote)
        self.owner_token = owner_token
        self.signins = SignIns()
        self.clock = clock
        self._handles: dict[str, _StudyHandle] = {}
        self._lock = threading.Lock()
        self._forecasts: dict[tuple[str, int], tuple[Any, dict[str, Any]]] = {}
        self._forecast_lock = threading.Lock()

    def handle(self, name: str) -> _StudyHandle:
        """The handle of study ``name`` (:class:`StudyNotFoundError` when absent)."""
        with self._lock:
            h = self._handles.get(name)
        if h is None:
            h = _StudyHandle(self.storage, name)
            with self._lock:
                h = self._handles.setdefault(name, h)
        return h

    def forget(self, name: str) -> None:
        with self._lock:
            self._handles.pop(name, None)

    def snapshot(self, name: str) -> dict[str, Any]:
        h = self.handle(name)
        ttl = min(1.0, self.interval / 2)
        with h.read_lock:
            now = self.clock()
            if h.snapshot is not None and now - h.snapshot[0] < ttl:
                return h.snapshot[1]
            snap = study_snapshot(h.reader, self.scrub, now=now)
            snap["interval"] = self.interval
            h.snapshot = (now, snap)
            return snap

    def told_row(self, name: str, ticket: int) -> dict[str, Any] | None:
        """The told evaluation of ticket number ``ticket`` of study ``name`` (a row of the told
        log), or None: for corrections of rows older than the page lists."""
        return told_row(self.handle(name).reader, ticket)

    def forecast(self, name: str, runs: int) -> dict[str, Any]:
        """The forecast of study ``name`` (:meth:`Study.forecast` with ``runs``
        continuations) as the forecast page shows it: ``summary``, ``lines`` (words) and
        ``error`` (why there is none: too early, identified). Kept per (study, runs) until
        the study's told log or corrections change; one forecast at a time per server (each
        is seconds of CPU), made on a study object of its own so the pages' reads never wait
        for it."""
        with self.storage.read(name) as rx:
            key = (name, int(runs), rx.study.n_told, rx.study.n_corrections, rx.study.budget, rx.study.status)
        with self._forecast_lock:
            if self._forecasts.get((name, runs), (None,))[0] == key:
                return self._forecasts[(name, runs)][1]
            try:
                f = load_study(storage=self.storage, name=name).forecast(runs=runs)
                out = {"summary": f.summary(), "lines": f.lines(), "error": None, "plot": forecast_plot(f)}
            except (StateError, StudyFinishedError) as exc:
                out = {"summary": None, "lines": [], "error": self.scrub(str(exc))}
            self._forecasts[(name, runs)] = (key, out)
            return out

    def told_all(self, name: str) -> list[dict[str, Any]]:
        """Every told evaluation of study ``name``, newest first (rows of the told log)."""
        return told_rows_all(self.handle(name).reader)

    def names(self) -> list[str]:
        return get_all_study_names(self.storage)

    def studies(self) -> list[dict[str, Any]]:
        return studies_list(self.storage, lambda n: self.handle(n).reader, self.scrub)


def create_app(storage: Any, *, host: str = "127.0.0.1", allowed_host: Any = (), allow_remote: bool = False,
               interval: float = 3.0, owner_token: str | None = None, secret_key: str | None = None) -> Any:
    """The Starlette application serving the studies of ``storage``.

    Parameters
    ----------
    storage : str, path-like or BaseStorage
        A file path (SQLite), a SQLAlchemy URL or a storage object.
    host : str
        The address the server binds (added to the accepted ``Host`` names when it is a
        specific address).
    allowed_host : sequence of str
        More accepted ``Host`` names (the names remote browsers use for this machine).
    allow_remote : bool
        Served beyond this machine: every page and JSON of a study then needs a sign-in
        to that study (on a loopback bind, reads are open to this machine's users).
    interval : float
        Seconds between two polls of a study page.
    owner_token : str, optional
        The owner's sign-in secret (``combex dashboard`` prints a new one at every start);
        None: nobody signs in as the owner.
    secret_key : str, optional
        Key signing the session cookies (default: a new random key, so a restart signs
        everybody out).

    Returns
    -------
    starlette.applications.Starlette
    """
    # Starlette and Jinja2 are optional (the studies extra)
    from jinja2 import Environment, FileSystemLoader, select_autoescape
    from starlette.applications import Starlette
    from starlette.middleware import Middleware
    from starlette.middleware.sessions import SessionMiddleware
    from starlette.middleware.trustedhost import TrustedHostMiddleware
    from starlette.routing import Mount, Route
    from starlette.staticfiles import StaticFiles
    from starlette.templating import Jinja2Templates

    interval = check_float(interval, "interval", owner="create_app", low=0.1, high=3600.0)
    if owner_token is not None and (not isinstance(owner_token, str) or len(owner_token) < 16):
        raise param_error("owner_token", "create_app", "None or a str of at least 16 characters", owner_token)
    app_state = WebApp(storage, interval=interval, remote=allow_remote, owner_token=owner_token)
    env = Environment(loader=FileSystemLoader(str(HERE / "templates")),
                      autoescape=select_autoescape(default=True, default_for_string=True))
    env.filters["score"] = fmt_score
    env.filters["when"] = fmt_time
    templates = Jinja2Templates(env=env)
    from . import _views  # _views imports this module

    env.filters["status"] = _views._status_words

    views = _views.Views(app_state, templates)
    name = "{name:path}"
    routes = [
        Route("/", views.index),
        Route("/api/studies", views.api_studies),
        Route("/signout", views.signout, methods=["POST"]),
        Route(f"/api/study/{name}", views.api_study),
        Route(f"/study/{name}/assistant", views.assistant),
        Route(f"/study/{name}/signin", views.signin, methods=["POST"]),
        Route(f"/study/{name}/ask", views.ask, methods=["POST"]),
        Route(f"/study/{name}/enter", views.enter, methods=["POST"]),
        Route(f"/study/{name}/confirm", views.confirm),
        Route(f"/study/{name}/forecast", views.forecast),
        Route(f"/study/{name}/tell", views.tell, methods=["POST"]),
        Route(f"/study/{name}/release", views.release, methods=["POST"]),
        Route(f"/study/{name}/stop", views.stop, methods=["POST"]),
        Route(f"/study/{name}/budget", views.budget, methods=["POST"]),
        Route(f"/study/{name}/correct/confirm", views.correct_confirm, methods=["POST"]),
        Route(f"/study/{name}/correct", views.correct, methods=["POST"]),
        Route(f"/study/{name}", views.study),
        Mount("/static", app=StaticFiles(directory=str(HERE / "static")), name="static"),
    ]
    middleware = [
        Middleware(TrustedHostMiddleware, allowed_hosts=allowed_hosts(host, allowed_host)),
        Middleware(SessionMiddleware, secret_key=secret_key or new_token(32), session_cookie="combex_session",
                   max_age=SIGN_IN_SECONDS, same_site="strict", https_only=False),
        Middleware(_SecurityHeaders),
    ]
    app = Starlette(routes=routes, middleware=middleware, exception_handlers=views.exception_handlers())
    app.state.web = app_state
    return app


class _SecurityHeaders:
    """Adds CSP, no-sniff, no-framing, referrer and no-store headers to every response."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_wrapper(message: Any) -> None:
            if message["type"] == "http.response.start":
                from starlette.datastructures import MutableHeaders  # Starlette is optional (the studies extra)

                h = MutableHeaders(scope=message)
                h["Content-Security-Policy"] = CSP
                h["X-Content-Type-Options"] = "nosniff"
                h["X-Frame-Options"] = "DENY"
                h["Referrer-Policy"] = "same-origin"
                if not scope["path"].startswith("/static/"):
                    h["Cache-Control"] = "no-store"
            await send(message)

        await self.app(scope, receive, send_wrapper)


def accepts_assistant(fn: Any) -> bool:
    """Whether a Study write method records who wrote (an ``assistant`` keyword)."""
    try:
        return "assistant" in inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False


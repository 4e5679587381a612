"""The request handlers of the study web app (see :mod:`combex.web._app` for the routes)."""

from __future__ import annotations

import logging
import statistics
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, urlencode

from ..exceptions import CombexError
from ..studies import MAX_BUDGET, StudyNotFoundError
from ._app import WebApp, accepts_assistant, fmt_score, fmt_time, parse_score
from ._data import LOG_ROWS, cancelled_tickets, handed_back_ticket, handed_back_tickets, team_names
from ._security import new_token, same_origin, tokens_equal

__all__ = ["Views", "Who", "Refused", "study_path"]

log = logging.getLogger("combex.web")

#: Longest correction reason kept (characters).
MAX_REASON = 500
#: Continuations of a forecast page by default, and the most it takes (`?runs=`).
FORECAST_RUNS = 20
FORECAST_MAX_RUNS = 200
#: What to do with the score of a cancelled ticket whose session was run all the same.
NOTE_FOR_OWNER = ("If its session was run all the same, note the score with the ticket number for the owner: the "
                  "study's answer does not need it, the lab's records may.")
#: A cookie set at sign-in (no secret in it): the sign-in page says an earlier sign-in ended.
SIGNED_IN_BEFORE = "combex_signed_in_before"


def _theirs(row: dict[str, Any], who: "Who") -> bool:
    """Whether a told row is on ``who``'s told list: every row for the owner; for an
    assistant, the rows they told and those another told in their place (asked by them)."""
    return who.owner or who.assistant in (row.get("assistant"), row.get("asked_by"))


def study_path(name: str, suffix: str = "") -> str:
    """The URL path of a study page (``suffix`` e.g. ``"/assistant"``)."""
    return "/study/" + quote(name, safe="") + suffix


@dataclass(frozen=True)
class Who:
    """Who a request writes as: the owner (recorded as ``assistant=None``) or an assistant."""

    owner: bool
    assistant: str | None
    token: str | None = None

    @property
    def label(self) -> str:
        return "the owner" if self.owner else str(self.assistant)

    @property
    def recorded(self) -> str | None:
        return None if self.owner else self.assistant


#: The heading of an error page by HTTP status (the message says what and why).
HEADINGS = {400: "Not accepted", 401: "Not signed in", 403: "Refused", 404: "Not found", 409: "Not accepted",
            500: "Internal error", 501: "Not available"}


def _status_words(status: Any, by_owner: bool = False) -> str:
    """A study's status in the lab's words (``by_owner``: the owner's stop ended it)."""
    if by_owner and status == "budget_exhausted":
        return "stopped by the owner, before its stopping rule held"
    return {"running": "running", "identified": "identified (the answer is certified)",
            "budget_exhausted": "stopped at its budget, before its stopping rule held"}.get(
        str(status), str(status).replace("_", " "))


class Refused(Exception):
    """A request refused before anything is read or written (status, message; ``link``: a
    way on, ``(href, text)``)."""

    def __init__(self, status: int, message: str, heading: str | None = None,
                 link: tuple[str, str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.heading = heading
        self.link = link


def _safe_next(name: str, value: Any) -> str | None:
    """``value`` when it is a page of study ``name`` to go back to after a sign-in (its
    confirmation page with a ticket and a score, or its assistant page), else None: no
    other site, no other path (a sign-in never sends the browser elsewhere)."""
    if not isinstance(value, str) or len(value) > 300 or "\\" in value or "//" in value:
        return None
    if value == study_path(name, "/assistant") or value.startswith(study_path(name, "/confirm") + "?ticket="):
        return value
    return None


class Views:
    def __init__(self, web: WebApp, templates: Any) -> None:
        self.web = web
        self.templates = templates

    # ------------------------------------------------------------------ helpers
    async def _run(self, fn: Any, *args: Any, **kwargs: Any) -> Any:
        from starlette.concurrency import run_in_threadpool  # Starlette is optional (the studies extra)

        return await run_in_threadpool(fn, *args, **kwargs)

    def _csrf(self, request: Any) -> str:
        tok = request.session.get("csrf")
        if not isinstance(tok, str) or len(tok) < 16:
            tok = new_token()
            request.session["csrf"] = tok
        return tok

    def _who(self, request: Any, name: str) -> Who | None:
        s = self.web.signins.get(request.session.get("sid"))
        if s is None:
            return None
        if name in s.studies:
            a, tok = s.studies[name]
            return Who(False, a, tok)
        if s.owner:
            return Who(True, None)
        return None

    def _is_owner(self, request: Any) -> bool:
        s = self.web.signins.get(request.session.get("sid"))
        return bool(s and s.owner)

    def _render(self, request: Any, template: str, status: int = 200, **ctx: Any) -> Any:
        flash = request.session.pop("flash", None) if "flash" in request.session else None
        base = {"csrf": self._csrf(request), "flash": flash, "remote": self.web.remote,
                "owner_signed_in": self._is_owner(request), "study_path": study_path}
        return self.templates.TemplateResponse(request, template, {**base, **ctx}, status_code=status)

    def _refused(self, request: Any, status: int, message: str, heading: str | None = None,
                 link: tuple[str, str] | None = None) -> Any:
        if request.url.path.startswith("/api/"):
            from starlette.responses import JSONResponse  # Starlette is optional (the studies extra)

            return JSONResponse({"error": message}, status_code=status)
        name = request.path_params.get("name") if hasattr(request, "path_params") else None
        if status == 404:  # no study of that name: no links back to its pages
            name = None
        return self._render(request, "error.html", status=status, message=message, study_name=name,
                            heading=heading or HEADINGS.get(status, "Refused"), link=link)

    def _flash(self, request: Any, kind: str, text: str, where: str | None = None) -> None:
        """The message of the next page: at its top, or in its section ``where`` (a refused
        budget is said beside the budget's box)."""
        request.session["flash"] = {"kind": kind, "text": text, "where": where}

    def _redirect(self, path: str) -> Any:
        from starlette.responses import RedirectResponse  # Starlette is optional (the studies extra)

        return RedirectResponse(path, status_code=303)

    def _name(self, request: Any) -> str:
        return str(request.path_params["name"])

    def _may_read(self, request: Any, name: str) -> bool:
        return not self.web.remote or self._who(request, name) is not None

    async def _guard(self, request: Any, name: str | None, *, signed_in: bool = True) -> tuple[Any, Who | None]:
        """The checks of every write: same origin, CSRF token, sign-in (the token checked
        again against the study, so a removed assistant can no longer write)."""
        if not same_origin(request.headers, request.headers.get("host", "")):
            raise Refused(403, "Refused: this form was sent from a page of another site.")
        form = await request.form()
        if not tokens_equal(form.get("csrf"), request.session.get("csrf")):
            if not request.session.get("csrf") and form.get("csrf"):  # a form of a session this server does not know
                link = None
                tid, score = str(form.get("ticket") or ""), str(form.get("score") or "")
                if (name is not None and request.url.path.endswith(("/enter", "/tell")) and tid.isdigit()
                        and len(tid) <= 18 and 0 < len(score) <= 64):  # back to this score after the sign-in
                    back = study_path(name, "/confirm") + "?" + urlencode({"ticket": tid, "score": score})
                    link = (study_path(name, "/assistant") + "?" + urlencode({"next": back}),
                            f"Sign in again, then confirm {score} for ticket #{tid} (nothing to type again)")
                if link is not None:
                    raise Refused(403, "Refused: this browser's sign-in has ended (the server was restarted, or the "
                                       "page was left open 12 hours without use). This press recorded nothing. Sign "
                                       "in again with your token (the tickets you hold are still yours): the page "
                                       "then says the last score recorded as yours, in case an earlier press went "
                                       "through, and brings back this confirmation.", heading="Sign in again",
                                  link=link)
                raise Refused(403, "Refused: this browser's sign-in has ended (the server was restarted, or the page "
                                   "was left open 12 hours without use). Nothing was recorded. Open the study's "
                                   "assistant page, sign in again with your token (the tickets you hold are still "
                                   "yours) and send the form again.", heading="Sign in again")
            raise Refused(403, "Refused: the form's security token is missing or out of date. Reload the page "
                               "and send the form again.")
        if not signed_in or name is None:
            return form, None
        who = self._who(request, name)
        if who is None:
            raise Refused(403, "Refused: sign in to this study first (with your assistant token).")
        if not who.owner:
            h = self.web.handle(name)
            check = getattr(h.writer, "assistant_for_token", None)
            ok = check is not None and (await self._run(check, who.token)) == who.assistant
            if not ok:
                s = self.web.signins.get(request.session.get("sid"))
                if s is not None:
                    s.studies.pop(name, None)
                raise Refused(403, f"Refused: the sign-in of {who.assistant!r} is no longer valid (the assistant "
                                   "was removed or given a new token). Sign in again.")
        return form, who

    def exception_handlers(self) -> dict[Any, Any]:
        async def not_found(request: Any, exc: Exception) -> Any:
            return self._refused(request, 404, "No study of that name in this storage.")

        async def refused(request: Any, exc: Refused) -> Any:
            return self._refused(request, exc.status, exc.message, exc.heading, exc.link)

        async def failed(request: Any, exc: Exception) -> Any:
            log.exception("request failed: %s", request.url.path)
            return self._refused(request, 500, f"Internal error: {self.web.scrub(exc)}")

        return {StudyNotFoundError: not_found, Refused: refused, Exception: failed}

    # ------------------------------------------------------------------ reads
    async def index(self, request: Any) -> Any:
        if self.web.remote and not self._is_owner(request):
            rows = [{"name": n, "hidden": True} for n in await self._run(self.web.names)]
        else:
            rows = await self._run(self.web.studies)
        return self._render(request, "index.html", studies=rows, interval=self.web.interval)

    async def api_studies(self, request: Any) -> Any:
        from starlette.responses import JSONResponse  # Starlette is optional (the studies extra)

        if self.web.remote and not self._is_owner(request):
            rows = [{"name": n} for n in await self._run(self.web.names)]
        else:
            rows = await self._run(self.web.studies)
        return JSONResponse({"studies": rows})

    async def study(self, request: Any) -> Any:
        name = self._name(request)
        if not self._may_read(request, name):
            return self._redirect(study_path(name, "/assistant"))
        snap = await self._run(self.web.snapshot, name)
        return self._render(request, "study.html", snap=snap, name=name, who=self._who(request, name))

    async def forecast(self, request: Any) -> Any:
        """The forecast page: how many more evaluations the study may need (computed on
        request: seconds of CPU; kept until the next told score)."""
        name = self._name(request)
        if not self._may_read(request, name):
            return self._redirect(study_path(name, "/assistant"))
        raw = request.query_params.get("runs", str(FORECAST_RUNS))
        if not (raw.isdigit() and len(raw) <= 4 and 1 <= int(raw) <= FORECAST_MAX_RUNS):
            return self._refused(request, 400, f"The 'runs' parameter of the forecast must be a whole number from 1 to "
                                               f"{FORECAST_MAX_RUNS}. Got {raw[:32]!r}.")
        runs = int(raw)
        fc = await self._run(self.web.forecast, name, runs)
        return self._render(request, "forecast.html", name=name, fc=fc, runs=runs, more_runs=FORECAST_MAX_RUNS,
                            who=self._who(request, name))

    async def api_study(self, request: Any) -> Any:
        from starlette.responses import JSONResponse  # Starlette is optional (the studies extra)

        name = self._name(request)
        if not self._may_read(request, name):
            raise Refused(403, "Sign in to this study to read it (remote access).")
        return JSONResponse(await self._run(self.web.snapshot, name))

    async def assistant(self, request: Any) -> Any:
        name = self._name(request)
        h = await self._run(self.web.handle, name)
        who = self._who(request, name)
        if who is None:
            can = hasattr(h.writer, "assistant_for_token")
            return self._render(request, "signin.html", name=name, can_sign_in=can,
                                ended=request.cookies.get(SIGNED_IN_BEFORE) == "1",
                                next=_safe_next(name, request.query_params.get("next")))
        snap = await self._run(self.web.snapshot, name)
        values = {}
        raw_t, raw_s = request.query_params.get("ticket", ""), request.query_params.get("score", "")
        if raw_t.isdigit() and len(raw_t) <= 18 and len(raw_s) <= 64:  # "Back: change it" keeps what was typed
            values[int(raw_t)] = raw_s
        typed = request.query_params.get("budget")  # a refused budget stays in its box
        typed = typed if typed is not None and len(typed) <= 32 else None
        extra: dict[str, Any] = {}
        if request.query_params.get("told") == "all":  # every told score, with its ticket number
            rows = await self._run(self.web.told_all, name)
            extra["told_all"] = [r for r in rows if _theirs(r, who)]
        older = request.query_params.get("older", "")
        if older.isdigit() and len(older) <= 18:  # "correct an older score", its ticket filled in
            extra.update(correction_open="older", correction_values={"ticket": older})
        return self._render(request, "assistant.html", **await self._assistant_context(snap, name, who, values=values,
                                                                                 budget_typed=typed, **extra))

    async def _assistant_context(self, snap: dict[str, Any], name: str, who: Who, **extra: Any) -> dict[str, Any]:
        pend = snap["pending"]
        mine, others = [], []
        if pend.get("available"):
            mine = [t for t in pend["tickets"] if who.owner or t.get("assistant") == who.assistant]
            others = [t for t in pend["tickets"] if not who.owner and t.get("assistant") != who.assistant]
        typed = set(extra.get("errors") or {}) | set(extra.get("values") or {})
        back = [] if who.owner or (snap.get("summary") or {}).get("status") != "running" else \
            await self._run(handed_back_tickets, self.web.handle(name).reader, who.assistant, self.web.clock())
        cancelled = [] if who.owner else \
            await self._run(cancelled_tickets, self.web.handle(name).reader, who.assistant, self.web.clock())
        log_ = snap["log"]
        told = []
        if log_.get("available"):
            rule = _far_rule(snap)
            told = [_flag_far(r, rule) for r in log_["rows"] if _theirs(r, who)]
            if "told_all" in extra:
                extra["told_all"] = [_flag_far(r, rule) for r in extra["told_all"]]
        h = self.web.handle(name)
        writes = {m: accepts_assistant(getattr(h.writer, m, None)) for m in ("ask", "tell", "release", "correct")}
        return {"name": name, "snap": snap, "who": who, "tickets": mine, "told": told, "pending": pend,
                "others": others, "others_open": any(t["id"] in typed for t in others),
                "handed_back": back, "cancelled": cancelled, "note_for_owner": NOTE_FOR_OWNER,
                "log_rows": LOG_ROWS,
                "log": log_, "writes": writes, "running": (snap["summary"].get("status") or "running") == "running",
                **extra}

    # ------------------------------------------------------------------ sign-in
    async def signin(self, request: Any) -> Any:
        name = self._name(request)
        form, _ = await self._guard(request, None, signed_in=False)
        token = str(form.get("token") or "").strip()
        h = await self._run(self.web.handle, name)
        owner = tokens_equal(token, self.web.owner_token)
        who = None
        if not owner:
            check = getattr(h.writer, "assistant_for_token", None)
            if check is None:
                raise Refused(501, "Not available: this version of combex.studies has no assistants "
                                   "(Study.assistant_for_token).")
            who = await self._run(check, token) if token else None
            if who is None:
                log.warning("failed sign-in to study %r", name)
                raise Refused(403, "Refused: that token is not an assistant token of this study. Each study has "
                                   "its own assistant tokens (a token of another study signs in only there); the "
                                   "owner token is new at every start of the dashboard (it prints it).",
                              heading="Not signed in")
        sid, s = self.web.signins.start(request.session.get("sid"))
        if owner:
            s.owner = True
        else:
            s.studies[name] = (str(who), token)
        request.session["sid"] = sid
        request.session["csrf"] = new_token()
        log.info("study %r: %s signed in", name, "the owner" if owner else repr(who))
        last = "" if owner else await self._run(self._last_told_words, name, str(who))
        self._flash(request, "ok", f"Signed in as {'the owner' if owner else who}.{last}")
        resp = self._redirect(_safe_next(name, form.get("next")) or study_path(name, "/assistant"))
        # a plain mark (no secret in it): a later visit without a live sign-in knows it ended
        resp.set_cookie(SIGNED_IN_BEFORE, "1", max_age=30 * 86400, httponly=True, samesite="lax")
        return resp

    def _last_told_words(self, name: str, assistant: str) -> str:
        """The assistant's last score the study recorded (among its newest told scores), said
        at sign-in: a score sent as the server stopped is recorded though its confirmation
        never reached the browser, and the assistant must not enter it again."""
        log_ = self.web.snapshot(name).get("log") or {}
        rows = [r for r in log_.get("rows") or () if r.get("assistant") == assistant and r.get("seq") is not None
                and not r.get("older")]
        if not rows:
            return ""
        row = max(rows, key=lambda r: r["seq"])
        return (f" The last score recorded as told by you: {fmt_score(row.get('score'))} for ticket #{row.get('id')} "
                f"({', '.join(row.get('team') or ())}), at {fmt_time(row.get('told_at'))}. If a confirmation did not "
                f"reach you (the connection broke), this is the score that was recorded: do not enter it again.")

    async def signout(self, request: Any) -> Any:
        await self._guard(request, None, signed_in=False)
        self.web.signins.end(request.session.get("sid"))
        request.session.clear()
        resp = self._redirect("/")
        resp.delete_cookie(SIGNED_IN_BEFORE)
        return resp

    # ------------------------------------------------------------------ writes
    def _ticket(self, snap: dict[str, Any], tid: int) -> dict[str, Any] | None:
        pend = snap["pending"]
        if not pend.get("available"):
            return None
        for t in pend["tickets"]:
            if t.get("id") == tid:
                return t
        return None

    def _told_row(self, snap: dict[str, Any], tid: int) -> dict[str, Any] | None:
        """The told row of ticket ``tid``: from the page's log, or read for itself when it is
        older than the rows the page lists (or was pushed out of them meanwhile)."""
        log_ = snap["log"]
        if not log_.get("available"):
            return None
        for r in log_["rows"]:
            if r.get("id") == tid:
                return r
        return self.web.told_row(snap["name"], tid)

    def _ticket_id(self, form: Any) -> int:
        raw = str(form.get("ticket") or "").strip()
        if not raw.isdigit() or len(raw) > 18:
            raise Refused(400, f"Refused: the ticket number must be a positive whole number. Got {raw!r}.")
        return int(raw)

    def _needs(self, h: Any, method: str) -> Any:
        fn = getattr(h.writer, method, None)
        if fn is None or not accepts_assistant(fn):
            raise Refused(501, f"Not available: this version of combex.studies has no Study.{method}() that "
                               "records the assistant; nothing was written.")
        return fn

    def _fresh(self, name: str) -> dict[str, Any]:
        h = self.web.handle(name)
        with h.read_lock:
            h.snapshot = None
        return self.web.snapshot(name)

    async def _write(self, name: str, what: str, fn: Any, *args: Any, **kwargs: Any) -> tuple[bool, Any]:
        """Run a write under the study's write lock; (True, result) or (False, message).
        ``what`` (who did what) goes to the server's log."""
        h = self.web.handle(name)

        def call() -> Any:
            with h.write_lock:
                try:
                    return fn(*args, **kwargs)
                finally:
                    with h.read_lock:
                        h.snapshot = None

        try:
            res = await self._run(call)
        except CombexError as exc:
            msg = self.web.scrub(exc)
            log.info("study %r: not done: %s: %s", name, what, msg)
            return False, msg
        log.info("study %r: %s", name, what)
        return True, res

    async def ask(self, request: Any) -> Any:
        name = self._name(request)
        form, who = await self._guard(request, name)
        h = self.web.handle(name)
        fn = self._needs(h, "ask")
        ok, res = await self._write(name, f"{who.label} asked for a ticket", fn, assistant=who.recorded)
        if not ok:
            self._flash(request, "error", f"No ticket: {res}")
        else:
            t = res[0] if isinstance(res, list) and res else res
            if t is None or (isinstance(res, list) and not res):
                self._flash(request, "info", "No ticket right now: every evaluation the solver can use is out"
                                             f"{await self._run(self._budget_held_words, name)}. Ask again when "
                                             "pending tickets are told.")
            else:
                labels = (getattr(h.writer, "_record", None) and h.writer._record.problem.get("labels")) or None
                names = team_names(getattr(t, "names", None) or getattr(t, "arm", None), labels)
                self._flash(request, "ok", f"Ticket #{t.id}: evaluate {', '.join(map(str, names))}.")
        return self._redirect(study_path(name, "/assistant"))

    def _budget_held_words(self, name: str) -> str:
        """Why an ask got no ticket when the study has a budget: the tickets out that hold
        what is left of it, by number and assistant (the owner can release one that will not
        come back); empty without a budget."""
        snap = self.web.snapshot(name)
        sm = snap.get("summary") or {}
        budget, told = sm.get("budget"), sm.get("evaluations")
        if budget is None:
            return ""
        out = (snap.get("pending") or {}).get("tickets") or []
        held = ", ".join(f"#{t['id']} ({t.get('assistant') or 'the owner'}, asked {t['age']} ago)" for t in out[:5])
        left = max(int(budget) - int(told or 0), 0)
        if out and left <= len(out):
            return (f" (the budget of {budget} evaluations has {left} left, and the {len(out)} ticket"
                    f"{'' if len(out) == 1 else 's'} out hold{'s' if len(out) == 1 else ''} "
                    f"{'it' if left == 1 else 'them'}: {held}{', ...' if len(out) > 5 else ''}; the owner can "
                    "release a ticket that will not come back)")
        return (f" (with a budget of {budget} evaluations, the tickets out may already fill what is left of it: "
                "the owner can release a ticket that will not come back)")

    def _held(self, snap: dict[str, Any], tid: int, who: Who, *, others: bool = False) -> dict[str, Any] | None:
        """Pending ticket ``tid`` when ``who`` may release it (its assistant, or the owner),
        or, with ``others``, tell it: any assistant may enter the score of a session run in
        the place of the one who asked (the confirmation page says whose ticket it is);
        else None."""
        t = self._ticket(snap, tid)
        return t if t is not None and (others or who.owner or t.get("assistant") == who.assistant) else None

    async def _handed_back(self, snap: dict[str, Any], name: str, tid: int, who: Who) -> dict[str, Any] | None:
        """Ticket ``tid`` when it was released or expired (not told) and ``who`` asked for it
        (or is the owner), on a running study: its session may have been run meanwhile (a
        release by the owner while the assistant typed the score), and its score counts."""
        if (snap.get("summary") or {}).get("status") != "running":
            return None
        t = await self._run(handed_back_ticket, self.web.handle(name).reader, tid, self.web.clock())
        return t if t is not None and (who.owner or t.get("assistant") == who.assistant) else None

    @staticmethod
    def _not_pending(snap: dict[str, Any], tid: int, what: str) -> str:
        """Why a ticket is not among the assistant's pending ones, in the lab's words."""
        status = (snap.get("summary") or {}).get("status")
        if status and status != "running":
            if (snap.get("summary") or {}).get("stopped_by_owner"):
                status = "stopped by the owner"
            keep = f" {NOTE_FOR_OWNER}" if what == "recorded" else ""
            return (f"The study has stopped ({str(status).replace('_', ' ')}): ticket #{tid} was cancelled and its "
                    f"score is not needed. Nothing was {what}.{keep}")
        return f"Ticket #{tid} is not one of your pending tickets (told, released or expired meanwhile?). Nothing " \
               f"was {what}."

    async def enter(self, request: Any) -> Any:
        """*Review*: a score the ticket accepts goes to the confirmation page by a redirect
        (so *Back* from it, or from the page after *Record*, is a plain page, not a form sent
        again); a refused one is said beside its form."""
        name = self._name(request)
        form, who = await self._guard(request, name)
        tid = self._ticket_id(form)
        raw = form.get("score")
        return await self._review(request, name, who, tid, raw, post=True)

    async def confirm(self, request: Any) -> Any:
        """The confirmation page: what will be recorded (nothing is written here)."""
        name = self._name(request)
        who = self._who(request, name)
        raw_t = request.query_params.get("ticket", "")
        if who is None or not raw_t.isdigit() or len(raw_t) > 18:
            return self._redirect(study_path(name, "/assistant"))
        return await self._review(request, name, who, int(raw_t), request.query_params.get("score", "")[:64],
                                  post=False)

    async def _review(self, request: Any, name: str, who: Who, tid: int, raw: Any, *, post: bool) -> Any:
        snap = await self._run(self._fresh, name)
        t = self._held(snap, tid, who, others=True) or await self._handed_back(snap, name, tid, who)
        if t is None:
            self._flash(request, *(await self._gone(snap, tid, who)))
            return self._redirect(study_path(name, "/assistant"))
        try:
            x = parse_score(raw)
        except ValueError as exc:
            ctx = await self._assistant_context(snap, name, who, errors={tid: str(exc)}, values={tid: str(raw or "")})
            return self._render(request, "assistant.html", status=400, **ctx)
        lo, hi = t.get("low"), t.get("high")
        if (lo is not None and x < lo) or (hi is not None and x > hi):
            msg = f"The score must lie in [{_g(lo)}, {_g(hi)}]. Got {_g(x)}."
            ctx = await self._assistant_context(snap, name, who, errors={tid: msg}, values={tid: str(raw)})
            return self._render(request, "assistant.html", status=400, **ctx)
        if post:
            return self._redirect(study_path(name, "/confirm") + "?" + urlencode({"ticket": tid,
                                                                                 "score": str(raw).strip()}))
        return self._render(request, "confirm.html", name=name, who=who, ticket=t, score=x, raw=str(raw).strip(),
                            warning=_unusual(x, t, snap))

    async def _gone(self, snap: dict[str, Any], tid: int, who: Who) -> tuple[str, str]:
        """The flash for a ticket that is no longer out for ``who``: recorded already (a form
        sent twice: a double click, a reload, *Back* then *Record* again), or not theirs."""
        told = await self._run(self._told_row, snap, tid)
        if told is not None:  # by whoever told it: an assistant may enter a session run in another's place
            return "info", (f"Ticket #{tid} is recorded: {_g(told.get('score'))} by "
                            f"{told.get('assistant') or 'the owner'}. Nothing more was recorded.")
        return "error", self._not_pending(snap, tid, "recorded")

    async def tell(self, request: Any) -> Any:
        name = self._name(request)
        form, who = await self._guard(request, name)
        tid = self._ticket_id(form)
        h = self.web.handle(name)
        fn = self._needs(h, "tell")
        snap = await self._run(self._fresh, name)
        t = self._held(snap, tid, who, others=True) or await self._handed_back(snap, name, tid, who)
        if t is None:
            self._flash(request, *(await self._gone(snap, tid, who)))
            return self._redirect(study_path(name, "/assistant"))
        try:
            x = parse_score(form.get("score"))
        except ValueError as exc:
            raise Refused(400, f"Refused: {exc}") from None
        ok, res = await self._write(name, f"{who.label} told ticket #{tid}: {_g(x)}", fn, tid, x,
                                    assistant=who.recorded)
        if ok:
            late = (f" The ticket had been {t['state']}; the session was run, so its score counts all the same."
                    if t.get("state") else "")
            self._flash(request, "ok", f"Recorded {_g(x)} for ticket #{tid} ({', '.join(t['team'])}) by "
                                       f"{who.label}. The study is {_status_words(res)}.{late}")
        else:
            now = await self._run(self._fresh, name)
            if await self._run(self._told_row, now, tid) is not None:
                # told by another in the same moment (two assistants on one ticket): by whom, as for a form sent twice
                kind, msg = await self._gone(now, tid, who)
                self._flash(request, kind, f"{msg} Your {_g(x)} was not recorded.")
            elif (now.get("summary") or {}).get("status") not in (None, "running"):
                # stopped in the same moment (another's score certified it): said as to every assistant
                self._flash(request, "error", self._not_pending(now, tid, "recorded").replace(
                    "Nothing was recorded.", f"Nothing was recorded: your {_g(x)} was not."))
            else:
                self._flash(request, "error", f"Not recorded: {res}")
        return self._redirect(study_path(name, "/assistant"))

    async def release(self, request: Any) -> Any:
        name = self._name(request)
        form, who = await self._guard(request, name)
        tid = self._ticket_id(form)
        h = self.web.handle(name)
        fn = self._needs(h, "release")
        snap = await self._run(self._fresh, name)
        t = self._held(snap, tid, who)
        if t is None:
            self._flash(request, "error", self._not_pending(snap, tid, "released"))
            return self._redirect(study_path(name, "/assistant"))
        ok, res = await self._write(name, f"{who.label} released ticket #{tid}", fn, tid, assistant=who.recorded)
        again = ("it is handed out again" if (snap.get("summary") or {}).get("policy") == "batch" else
                 "its score is no longer expected, and the study's rule chooses the next teams afresh (this one "
                 "again only if the rule still needs it)")
        whose = (f", {t['assistant']}'s" if who.owner and t.get("assistant") else "")
        if not ok:
            now = await self._run(self._fresh, name)
            if (now.get("summary") or {}).get("status") not in (None, "running"):  # stopped in the same moment
                res = self._not_pending(now, tid, "released")
            else:
                res = f"Not released: {res}"
        self._flash(request, "ok" if ok else "error",
                    f"Released ticket #{tid} ({', '.join(t['team'])}{whose}): {again}." if ok else res)
        return self._redirect(study_path(name, "/assistant"))

    async def stop(self, request: Any) -> Any:
        """The owner ends the study now, on the evaluations told (``Study.stop``): the
        leader is the answer, with its anytime-valid ``delta_achieved``."""
        name = self._name(request)
        form, who = await self._guard(request, name)
        if not who.owner:
            raise Refused(403, "Refused: only the study's owner can stop it.")
        if not form.get("confirm"):
            raise Refused(400, "Refused: tick the box that confirms stopping the study now.")
        fn = getattr(self.web.handle(name).writer, "stop", None)
        if fn is None:
            raise Refused(501, "Not available: this version of combex.studies has no Study.stop().")
        ok, res = await self._write(name, f"{who.label} stopped the study", fn)
        self._flash(request, "ok" if ok else "error",
                    "The study is stopped (by you, before its stopping rule held): the study page shows the answer "
                    "and how sure it is. A larger budget continues it." if ok else f"Not stopped: {res}")
        return self._redirect(study_path(name, "/assistant"))

    async def budget(self, request: Any) -> Any:
        """The owner sets the study's budget of evaluations (``Study.set_budget``): raised,
        the study runs on; lowered to the evaluations told, it stops now."""
        name = self._name(request)
        form, who = await self._guard(request, name)
        if not who.owner:
            raise Refused(403, "Refused: only the study's owner can change its budget.")
        text = str(form.get("budget") or "").strip()
        # the box keeps it, the page opens at it, the refusal is said beside it
        back = study_path(name, "/assistant") + "?" + urlencode({"budget": text[:32]}) + "#budget-section"
        if not text.isdigit() or int(text) < 1:
            self._flash(request, "error", f"Budget not changed: the budget is a positive whole number of "
                                          f"evaluations (digits only, such as 900). Got {text!r}.", "budget")
            return self._redirect(back)
        fn = getattr(self.web.handle(name).writer, "set_budget", None)
        if fn is None:
            raise Refused(501, "Not available: this version of combex.studies has no Study.set_budget().")
        told = (await self._run(self.web.snapshot, name)).get("summary", {}).get("evaluations")
        if int(text) > MAX_BUDGET:
            self._flash(request, "error", f"Budget not changed: {int(text):,} evaluations is more than a study can "
                                          f"count (at most {MAX_BUDGET:,}). Got {text}.", "budget")
            return self._redirect(back)
        if isinstance(told, int) and int(text) <= told:
            running = (await self._run(self.web.snapshot, name)).get("summary", {}).get("status") == "running"
            how = " (to end the study now, use Stop the study now)" if running else ""
            self._flash(request, "error", f"Budget not changed: {told} evaluations are already told, so the budget "
                                          f"must be above {told}{how}. Got {int(text)}.", "budget")
            return self._redirect(back)
        ok, res = await self._write(name, f"{who.label} set the budget to {text}", fn, int(text))
        note = ((await self._run(self._fresh, name)).get("best") or {}).get("budget_checks_note") if ok else None
        self._flash(request, "ok" if ok else "error",
                    (f"The budget is now {int(text)} evaluations (the study is {_status_words(res)})."
                     + (f" {note}" if note else "") if ok else f"Budget not changed: {res}"), None if ok else "budget")
        return self._redirect(study_path(name, "/assistant") if ok else back)

    def _correction(self, form: Any, snap: dict[str, Any], who: Who, tid: int) -> tuple[dict[str, Any], float | None,
                                                                                      str]:
        row = self._told_row(snap, tid)
        if row is None:
            raise Refused(400, f"Refused: ticket #{tid} has no told score in this study.")
        if not (who.owner or row.get("assistant") == who.assistant):
            raise Refused(403, f"Refused: ticket #{tid} was told by {row.get('assistant') or 'the owner'}; an "
                               "assistant corrects their own scores (the owner any).")
        reason = str(form.get("reason") or "").strip()
        if not reason:
            raise Refused(400, "Refused: give the reason of the correction.")
        if len(reason) > MAX_REASON:
            raise Refused(400, f"Refused: the reason is longer than {MAX_REASON} characters.")
        if form.get("void"):
            return row, None, reason
        try:
            x = parse_score(form.get("score"))
        except ValueError as exc:
            raise Refused(400, f"Refused: {exc}") from None
        lo, hi = row.get("low"), row.get("high")
        if (lo is not None and x < lo) or (hi is not None and x > hi):
            raise Refused(400, f"Refused: the score must lie in [{_g(lo)}, {_g(hi)}]. Got {_g(x)}.")
        return row, x, reason

    async def correct(self, request: Any) -> Any:
        name = self._name(request)
        form, who = await self._guard(request, name)
        snap = await self._run(self._fresh, name)
        try:
            tid = self._ticket_id(form)
            row, x, reason = self._correction(form, snap, who, tid)
        except Refused as exc:  # said beside the form, what was typed kept (a wrong digit is mended there)
            if exc.status != 400:
                raise
            key = "older" if form.get("older") else str(form.get("ticket") or "")
            values = {k: str(form.get(k) or "")[:600] for k in ("ticket", "score", "reason")}
            ctx = await self._assistant_context(snap, name, who, correction_error={
                "key": key, "message": exc.message.removeprefix("Refused: ")}, correction_values={
                **values, "void": bool(form.get("void"))})
            return self._render(request, "assistant.html", status=400, **ctx)
        return self._render(request, "confirm_correction.html", name=name, who=who, row=row, score=x,
                            reason=reason, warning=None if x is None else _unusual(x, row, snap))

    async def correct_confirm(self, request: Any) -> Any:
        name = self._name(request)
        form, who = await self._guard(request, name)
        tid = self._ticket_id(form)
        h = self.web.handle(name)
        fn = self._needs(h, "correct")
        snap = await self._run(self._fresh, name)
        row, x, reason = self._correction(form, snap, who, tid)
        ok, res = await self._write(name, f"{who.label} corrected ticket #{tid} to {_g(x)} ({reason!r})", fn, tid, x,
                                    reason=reason, assistant=who.recorded)
        what = "voided" if x is None else f"corrected to {_g(x)}"
        self._flash(request, "ok" if ok else "error",
                    f"Ticket #{tid} {what} by {who.label} (reason: {reason})." if ok else f"Not corrected: {res}")
        return self._redirect(study_path(name, "/assistant"))


def _g(x: Any) -> str:
    return fmt_score(x) if isinstance(x, (int, float)) else ("-" if x is None else str(x))


def _flag_far(row: dict[str, Any], rule: tuple[float, float] | None) -> dict[str, Any]:
    """A told row with ``far``: its score is far from the scores told so far by the rule that
    warns before recording (:func:`_far_rule`, computed once per page), so a slip recorded
    all the same stays visible until it is corrected."""
    x = row.get("score")
    return dict(row, far=rule is not None and x is not None and not row.get("voided") and _is_far(float(x), row, rule))


def _far_rule(snap: dict[str, Any]) -> tuple[float, float] | None:
    """``(median, factor)`` of the warning: the median of the told scores per evaluation, and
    4 (6 while fewer than 5 are told); None before any score."""
    log_ = snap.get("log") or {}
    if not log_.get("available"):
        return None
    per = [r["score"] / max(int(r.get("count") or 1), 1) for r in log_["rows"]
           if r.get("score") is not None and not r.get("voided")]
    if not per:
        return None
    return statistics.median(per), 4.0 if len(per) >= 5 else 6.0


def _is_far(x: float, ticket: dict[str, Any], rule: tuple[float, float]) -> bool:
    """Whether ``x`` (of ``ticket``'s evaluations) is far from the median of ``rule``."""
    med, factor = rule
    v = x / max(int(ticket.get("count") or 1), 1)
    return med > 0 and (v < med / factor or v > med * factor)


def _unusual(x: float, ticket: dict[str, Any], snap: dict[str, Any]) -> str | None:
    """A warning when ``x`` is far from the scores told so far (per evaluation): below a
    quarter or above four times their median, where a misplaced decimal point (a tenth or
    ten times the score) is more likely than a real score; from the first told score on,
    with a factor of 6 instead of 4 while fewer than 5 are told (a median of few scores
    is rougher; a slipped decimal point is still a factor of 10)."""
    rule = _far_rule(snap)
    if rule is None or not _is_far(x, ticket, rule):
        return None
    return (f"{_g(x)} is far from the scores told so far (median {_g(round(rule[0], 2))} per session). "
            "Check it (a slipped decimal point, a digit dropped or added) before recording it.")


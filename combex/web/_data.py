"""What the pages show, as JSON: read from the Study API's read methods only.

Every value comes from :mod:`combex.studies` reads (``summary``, ``best``,
``member_estimates``, ``history``, ``events``, ``pending``, ``told_log``), which never take a study's
write lock. A read the installed study API lacks, or one that fails, becomes a section
``{"available": false, "reason": ...}``: the page says so and shows the rest.
Nothing here names the storage (path, URL) or any secret: :class:`Scrubber` removes the
storage's names from every message.
"""

from __future__ import annotations

import datetime as _dt
import logging
import math
import os
import re
from typing import Any
from ..exceptions import CombexError
from ..studies import get_all_study_names, owner_stop

__all__ = ["Scrubber", "study_snapshot", "studies_list", "unavailable", "team_names", "score_range",
           "iso_time", "age_text", "solver_title"]

log = logging.getLogger("combex.web")

#: Told evaluations listed on the study page (the newest; the whole log is exported with
#: ``combex study export``).
LOG_ROWS = 50
#: Points of the statistic chart (evenly thinned, the last one always kept).
CHART_POINTS = 600


class Scrubber:
    """Removes the storage's path, URL and ``repr`` from messages shown on a page."""

    def __init__(self, storage_arg: Any, storage: Any) -> None:
        names: set[str] = set()
        for v in (storage_arg, getattr(storage, "url", None)):
            if v is None:
                continue
            try:
                text = os.fspath(v) if not isinstance(v, str) else v
            except TypeError:
                continue
            if not isinstance(text, str) or not text:
                continue
            names.add(text)
            if "://" not in text:
                names.add(os.path.abspath(text))
                names.add("sqlite:///" + os.path.abspath(text))
        names.add(repr(storage))
        safe = getattr(storage, "_safe_url", None)
        if callable(safe):
            try:
                names.add(str(safe()))
            except Exception:  # noqa: BLE001 - a name we cannot compute is not shown either
                pass
        self.names = sorted((n for n in names if len(n) >= 3), key=len, reverse=True)

    def __call__(self, text: Any) -> str:
        out = str(text)
        for n in self.names:
            out = out.replace(n, "the storage")
        # a path or URL the storage layer put in a message in another spelling
        out = re.sub(r"\b(sqlite|postgresql|mysql)(\+\w+)?://\S+", "the storage", out)
        return out


def unavailable(reason: str) -> dict[str, Any]:
    """A section the page cannot show, with the reason in words."""
    return {"available": False, "reason": reason}


def _read(study: Any, method: str, scrub: Scrubber, *args: Any, **kwargs: Any) -> Any:
    """``study.method(...)``, or an :func:`unavailable` section."""
    fn = getattr(study, method, None)
    if fn is None:
        return unavailable(f"not available: this version of combex.studies has no Study.{method}()")
    try:
        return fn(*args, **kwargs)
    except Exception as exc:  # noqa: BLE001 - one broken section never takes the page down
        if not _is_combex_error(exc):
            log.exception("Study.%s() failed", method)
        return unavailable(f"Study.{method}() failed: {scrub(exc)}")


def _is_combex_error(exc: BaseException) -> bool:
    return isinstance(exc, CombexError)


def _is_unavailable(x: Any) -> bool:
    return isinstance(x, dict) and x.get("available") is False


# ============================================================================ small formatters
def iso_time(t: Any) -> str | None:
    """An ISO-8601 UTC time ("2026-11-27T18:31:54Z") from an ISO string or Unix seconds."""
    if t is None:
        return None
    if isinstance(t, str):
        return t
    try:
        x = float(t)
    except (TypeError, ValueError):
        return None
    if not math.isfinite(x):
        return None
    return _dt.datetime.fromtimestamp(x, _dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _seconds(t: Any) -> float | None:
    if t is None:
        return None
    if isinstance(t, (int, float)):
        return float(t)
    try:
        return _dt.datetime.fromisoformat(str(t).replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def age_text(seconds: float | None) -> str:
    """"42 s", "7 min", "3 h 5 min", "2 d 4 h"."""
    if seconds is None or not math.isfinite(seconds):
        return "-"
    s = max(0, int(seconds))
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min"
    if s < 86400:
        return f"{s // 3600} h {s % 3600 // 60} min"
    return f"{s // 86400} d {s % 86400 // 3600} h"


def _num(x: Any) -> float | None:
    try:
        v = float(x)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


def team_names(arm: Any, labels: Any) -> list[str]:
    """The names of an arm: a worker index, a member list, a name or a list of names."""
    if isinstance(arm, dict):
        for key in ("names", "labels"):
            if arm.get(key) is not None:
                return team_names(arm[key], labels)
        return team_names(arm.get("arm"), labels)
    if arm is None:
        return []
    if isinstance(arm, str):
        return [arm]
    if isinstance(arm, (list, tuple)):
        return [x if isinstance(x, str) else _label(x, labels) for x in arm]
    return [_label(arm, labels)]


def _label(i: Any, labels: Any) -> str:
    try:
        j = int(i)
    except (TypeError, ValueError):
        return str(i)
    if labels and 0 <= j < len(labels):
        return str(labels[j])
    return f"#{j}"


def score_range(problem: dict[str, Any], arm: Any = None, count: int = 1) -> tuple[float | None, float | None]:
    """The range of a ticket's score: ``count`` times the range of one evaluation of
    ``arm`` (a team's session score for team studies)."""
    lo, hi = (problem.get("score_range") or problem.get("reward_range") or [None, None])[:2]
    per_team = problem.get("score_range") is not None
    m = 1 if per_team or not isinstance(arm, (list, tuple)) else len(arm)
    return (None if lo is None else float(lo) * m * count, None if hi is None else float(hi) * m * count)


_TITLES = {
    "saqm": "SAQM", "sa-foa": "SA-FOA", "icb": "ICB", "exhaustive": "Exhaustive", "lucb": "LUCB",
    "lil-lucb": "lil'LUCB", "lucb++": "LUCB++", "lil-ucb": "lil'UCB", "lil-clucb": "lil'CLUCB",
    "lil-randlucb": "lil'RandLUCB", "top-two": "Top-Two", "fw-sampling": "Frank-Wolfe sampling",
    "track-and-stop": "Track-and-Stop", "lingame": "LinGame", "lingape": "LinGapE", "random-design": "Random design",
    "comb-game": "CombGame", "rage": "RAGE",
}


def solver_title(name: str) -> str:
    """The solver's name as its paper writes it (the registered name otherwise)."""
    return _TITLES.get(name, name)


# ============================================================================ sections
def _labels(summary: Any, study: Any) -> list[str] | None:
    rec = getattr(study, "_record", None)
    prob = getattr(rec, "problem", None) or {}
    return prob.get("labels")


def _problem(study: Any) -> dict[str, Any]:
    rec = getattr(study, "_record", None)
    return dict(getattr(rec, "problem", None) or {})


def _leader(best: dict[str, Any]) -> Any:
    """The leader of a ``best()`` read; None before any evaluation is told (the solver's
    first pick is no leader yet)."""
    if not best.get("evaluations"):
        return None
    return best.get("leader", best.get("labels", best.get("answer")))


def _best_section(best: Any, labels: Any, solver: str) -> dict[str, Any]:
    if _is_unavailable(best):
        return best
    leader = _leader(best)
    stops = best.get("stops_when")
    stat = _num(best.get("statistic"))
    thr = _num(best.get("threshold"))
    return {
        "available": True,
        "status": best.get("status"),
        "leader": team_names(leader, labels),
        "challenger": (team_names(best.get("challenger"), labels)
                       if best.get("challenger") is not None and leader is not None else None),
        "statistic": stat, "threshold": thr, "stops_when": stops,
        "statistic_name": best.get("statistic_name"),
        "delta": _num(best.get("delta")),
        "delta_achieved": _num(best.get("delta_achieved")),
        "evaluations_left": _num(best.get("evaluations_left")),
        "evaluations_left_note": _page_words(best.get("evaluations_left_note")),
        "evaluations_left_short": _left_short(best),
        "evaluations": best.get("evaluations"), "budget": best.get("budget"),
        "noise_check": _noise_check(best.get("noise_check")),
        "certificate_text": _page_words(best.get("certificate_text")),
        "has_certificate": bool(best.get("certificate")),
        "first_check_pending": bool(best.get("first_check_pending")),
        "checked_at": best.get("checked_at"), "next_check_at": best.get("next_check_at"),
        "oblivious_design": bool(best.get("oblivious_design")),
        "budget_checks_note": (best.get("budget_checks") or {}).get("note"),
        "budget_last_check": (best.get("budget_checks") or {}).get("last"),
    }


def _page_words(text: Any) -> Any:
    """A note of the study API in the page's words (its form, not the Python method)."""
    if not isinstance(text, str):
        return text
    return re.sub(r"\([^()]*Study\.set_budget[^()]*\)", "(Budget, on the owner's page)", text)


def _noise_check(nc: Any) -> Any:
    if nc is None or isinstance(nc, str):
        return nc
    if isinstance(nc, dict):
        text = nc.get("text") or nc.get("message")
        if text:
            return str(text)
        return "; ".join(f"{k}: {v}" for k, v in nc.items() if not isinstance(v, (dict, list)))
    return str(nc)


def validity_text(problem: dict[str, Any], *, blind: bool = False) -> str:
    """What the intervals of ``Study.member_estimates()`` mean, in words (its docstring's
    statement, for the page); ``blind``: the solver draws its evaluations at random, blind
    to the scores (``best()["oblivious_design"]``), so the fixed design is not an
    approximation."""
    sigma = (problem.get("noise") or {}).get("sigma")
    scale = (f"the declared standard deviation of one evaluation ({sigma:g})" if isinstance(sigma, (int, float))
             else "the residual variance of the fit (the noise level is not declared)")
    if problem.get("arm_type") == "mask":
        what = ("each member's contribution to a session's score: least squares over the told sessions (a "
                "team's expected score is the sum of its members' contributions)")
        tail = (" A member whose contribution the teams told so far cannot separate from the others has no "
                "interval.")
    else:
        what = "each arm's mean: the mean of its told evaluations"
        tail = ""
    design = ("They treat the evaluations told so far as a fixed design, which they are: the solver drew them at "
              "random, blind to the scores (exact given the draws when the noise is Gaussian); they are neither "
              if blind else
              "They treat the evaluations chosen so far as a fixed design although the study chose them from the "
              "scores (an approximation), and they are neither ")
    return (f"pointwise 95% confidence intervals of {what}, with {scale}. {design}simultaneous over the members nor "
            f"valid at any time: the stopping rule, not these intervals, carries the study's guarantee.{tail}")


def _noise_words(nl: Any) -> str | None:
    """The noise level of one evaluation in words (``Study.noise_level()``), or None."""
    if _is_unavailable(nl) or not isinstance(nl, dict) or not isinstance(nl.get("sd"), (int, float)):
        return None
    if nl.get("declared"):
        return f"The noise of one evaluation: standard deviation {nl['sd']:.3g}, declared."
    return (f"The noise of one evaluation: standard deviation {nl['sd']:.3g}, estimated from the fit's residuals "
            f"({nl.get('dof')} degrees of freedom; combex plan --noise-sd takes it to plan a similar study).")


def _estimates_section(est: Any, labels: Any, problem: dict[str, Any], *, blind: bool = False) -> dict[str, Any]:
    if _is_unavailable(est):
        return est
    validity = None
    rows = est
    if isinstance(est, dict):
        validity = est.get("validity") or est.get("interval")
        rows = est.get("rows") or est.get("members") or []
    out = []
    for i, r in enumerate(rows or []):
        name = r.get("name")
        if name is None:
            name = _label(r.get("arm", i), labels)
        out.append({"name": str(name), "n": r.get("n"), "estimate": _num(r.get("estimate")),
                    "low": _num(r.get("low")), "high": _num(r.get("high")),
                    "estimable": bool(r.get("estimable", True))})
    return {"available": True, "rows": out, "validity": validity or validity_text(problem, blind=blind)}


def _history_section(hist: Any) -> dict[str, Any]:
    if _is_unavailable(hist):
        return hist
    xs: list[Any] = []
    st: list[Any] = []
    th: list[Any] = []
    if isinstance(hist, dict) and any(k in hist for k in ("statistic", "evaluations", "points")):
        if "points" in hist:
            hist = hist["points"]
        else:
            xs = list(hist.get("evaluations") or hist.get("evaluation") or [])
            st = list(hist.get("statistic") or [])
            th = list(hist.get("threshold") or [])
            hist = None
    if hist is not None:
        for i, p in enumerate(hist or []):
            xs.append(p.get("evaluations", p.get("evaluation", p.get("told_seq", i + 1))))
            st.append(p.get("statistic"))
            th.append(p.get("threshold"))
    n = min(len(xs), len(st)) if xs else 0
    pts = [(x, _num(s), _num(t) if i < len(th) else None) for i, (x, s, t) in
           enumerate(zip(xs[:n], st[:n], (th + [None] * n)[:n]))]
    pts = [p for p in pts if _num(p[0]) is not None]
    # a told score after which the rule did not check (a solver that checks at set points)
    # repeats the last check's values: drawn once, at the check
    pts = [p for i, p in enumerate(pts) if i == 0 or p[1:] != pts[i - 1][1:]]
    if len(pts) > CHART_POINTS:
        step = len(pts) / CHART_POINTS
        pts = [pts[int(i * step)] for i in range(CHART_POINTS)] + [pts[-1]]
    return {"available": True, "evaluations": [p[0] for p in pts], "statistic": [p[1] for p in pts],
            "threshold": [p[2] for p in pts]}


def _events_section(events: Any) -> dict[str, Any]:
    if _is_unavailable(events):
        return events
    return {"available": True, "rows": [{"at": iso_time(e.get("at")), "text": str(e.get("text") or "")}
                                        for e in events or [] if e.get("event") != "upgraded"]}


def _ticket_dict(t: Any, labels: Any, problem: dict[str, Any], now: float) -> dict[str, Any]:
    get = (lambda k, d=None: t.get(k, d)) if isinstance(t, dict) else (lambda k, d=None: getattr(t, k, d))
    arm = get("arm")
    names = get("labels") or get("names")
    names = list(names) if names is not None and not isinstance(names, str) else team_names(arm, labels)
    issued = get("issued_at")
    count = int(get("count", 1) or 1)
    lo, hi = score_range(problem, arm, count)
    issued_s = _seconds(issued)
    age = _num(get("age_seconds"))
    if age is None and issued_s is not None:
        age = now - issued_s
    return {"id": get("id"), "team": names, "count": count, "assistant": get("assistant"),
            "issued_at": iso_time(issued), "lease_deadline": iso_time(get("lease_deadline")),
            "age": age_text(age), "overdue": bool(get("overdue")), "low": lo, "high": hi}


def _pending_section(pend: Any, labels: Any, problem: dict[str, Any], now: float) -> dict[str, Any]:
    if _is_unavailable(pend):
        return pend
    return {"available": True, "tickets": [_ticket_dict(t, labels, problem, now) for t in pend or []]}


def _left_short(best: dict[str, Any]) -> str | None:
    """The study page card's line when the estimate of the evaluations left is above what
    the budget leaves (the whole note stays in the certificate text), else None."""
    left, budget, told = best.get("evaluations_left"), best.get("budget"), best.get("evaluations")
    if (best.get("status") != "running" or not isinstance(left, (int, float)) or not isinstance(budget, int)
            or not isinstance(told, int) or not left > budget - told):
        return None
    return (f"more than the {budget - told} the budget leaves: the budget may end the study first, uncertified, "
            "unless the owner raises it (a rough estimate, mostly high early on)")


def _log_section(rows: Any, labels: Any, problem: dict[str, Any]) -> dict[str, Any]:
    if _is_unavailable(rows):
        return rows
    if isinstance(rows, dict):
        rows = rows.get("rows") or []
    out = []
    for r in rows or []:
        get = (lambda k, d=None, r=r: r.get(k, d)) if isinstance(r, dict) else \
            (lambda k, d=None, r=r: getattr(r, k, d))
        names = get("labels") or get("names")
        names = list(names) if names is not None and not isinstance(names, str) else team_names(get("arm"), labels)
        corr = []
        for c in get("corrections") or []:
            cg = c.get if isinstance(c, dict) else (lambda k, d=None, c=c: getattr(c, k, d))
            value = cg("score", cg("reward_sum"))
            corr.append({"score": _num(value), "reason": cg("reason"), "assistant": cg("assistant"),
                         "at": iso_time(cg("at", cg("created_at"))), "voided": value is None})
        count = int(get("count", 1) or 1)
        lo, hi = score_range(problem, get("arm"), count)
        out.append({"seq": get("told_seq", get("seq")), "id": get("id", get("ticket")), "team": names,
                    "count": count, "low": lo, "high": hi, "score": _num(get("score", get("reward_sum"))),
                    "original": _num(get("original_score", get("original"))),
                    "assistant": get("assistant", get("told_by")), "asked_by": get("asked_by"),
                    "told_at": iso_time(get("told_at")),
                    "voided": bool(get("voided", False)), "corrections": corr, "older": bool(get("older", False))})
    return {"available": True, "rows": out}


def told_tail(study: Any, last: int | None = None, *, ticket: int | None = None) -> list[dict[str, Any]]:
    """The newest ``last`` told evaluations (newest first) and, after them, every older one
    that was corrected (``older`` True); or the told evaluation of ticket number ``ticket`` (empty when that ticket is not told), with their corrections, from one
    read transaction of the study's storage (``told_at`` of those rows and the correction
    records; the told log itself is never read whole)."""
    older: list[Any] = []
    with study.storage.read(study.name) as rx:
        corrections = rx.corrections()
        if ticket is None:
            n = int(rx.study.n_told)
            first = max(1, n - int(last or 0) + 1)
            rows = rx.told_at(list(range(first, n + 1)))
            # corrected rows older than the tail are listed too (after it): a correction is never hidden
            older = rx.told_at(sorted({int(c.told_seq) for c in corrections if int(c.told_seq) < first}))
        else:
            row = rx.get_ticket(int(ticket))
            rows = [row] if row is not None and row.told_seq is not None else []
    by_seq: dict[int, list[Any]] = {}
    for c in corrections:
        by_seq.setdefault(int(c.told_seq), []).append(c)
    out = []
    old_ids = {id(r) for r in older}
    for r in sorted(rows, key=lambda r: -int(r.told_seq)) + sorted(older, key=lambda r: -int(r.told_seq)):
        cs = sorted(by_seq.get(int(r.told_seq), []), key=lambda c: c.seq)
        final = cs[-1].reward_sum if cs else r.reward_sum
        out.append({"told_seq": r.told_seq, "id": r.id, "arm": r.arm, "count": r.count, "score": final,
                    "original_score": r.reward_sum, "voided": bool(cs) and final is None,
                    "assistant": r.told_by, "asked_by": r.asked_by, "told_at": r.told_at,
                    "corrections": [{"score": c.reward_sum, "reason": c.reason, "assistant": c.assistant,
                                     "at": c.created_at} for c in cs], "older": id(r) in old_ids})
    return out


def _log_read(study: Any, scrub: Scrubber) -> Any:
    if getattr(study, "told_log", None) is not None:
        return _read(study, "told_log", scrub, last=LOG_ROWS)
    if getattr(study.storage, "read", None) is None:
        return unavailable("not available: this version of combex.studies has no read transactions "
                           "(BaseStorage.read) to list the told evaluations")
    try:
        return told_tail(study, LOG_ROWS)
    except Exception as exc:  # noqa: BLE001 - one broken section never takes the page down
        if not _is_combex_error(exc):
            log.exception("reading the told log failed")
        return unavailable(f"Reading the told evaluations failed: {scrub(exc)}")


def handed_back_ticket(study: Any, ticket: int, now: float) -> dict[str, Any] | None:
    """Ticket ``ticket`` when it was released or expired without a score (a page's dict,
    with ``state`` and the assistant who asked), else None: its session may have been run
    all the same, and :meth:`Study.tell <combex.studies.Study.tell>` accepts its score."""
    with study.storage.read(study.name) as rx:
        row = rx.get_ticket(int(ticket))
    if row is None or row.state not in ("released", "expired") or row.told_seq is not None:
        return None
    problem = _problem(study)
    out = _ticket_dict(row, problem.get("labels"), problem, now)
    out.update(state=row.state, assistant=row.asked_by)
    return out


#: How long a ticket handed back without a score stays on its assistant's page (seconds
#: since it was asked for; a cancelled one: since its cancellation), and how many of each
#: are listed.
HANDED_BACK_SECONDS = 2 * 86400.0
HANDED_BACK_ROWS = 5


def handed_back_tickets(study: Any, assistant: str, now: float) -> list[dict[str, Any]]:
    """The newest tickets ``assistant`` asked for that were released without a score (by
    them or the owner) in the last :data:`HANDED_BACK_SECONDS`: a page's dicts, newest
    first, at most :data:`HANDED_BACK_ROWS`. Their sessions may have been run all the same
    (the owner released a ticket while its assistant was in session), and their scores
    count."""
    rows = [r for r in study.storage.tickets(study.name, states=("released",))
            if r.asked_by == assistant and r.told_seq is None and now - r.issued_at <= HANDED_BACK_SECONDS]
    rows = sorted(rows, key=lambda r: -r.id)[:HANDED_BACK_ROWS]
    problem = _problem(study)
    released: dict[int, dict[str, Any]] = {}  # who handed each back, and when (the study's history)
    if rows:
        with study.storage.read(study.name) as rx:
            for h in rx.study.history or []:
                if h.get("event") == "released":
                    released[h.get("ticket")] = h
    out = []
    for r in rows:
        d = _ticket_dict(r, problem.get("labels"), problem, now)
        h = released.get(r.id, {})
        d.update(state=r.state, assistant=r.asked_by, released_at=h.get("at"),
                 released_by=(h.get("by") or "the owner") if h else None)
        out.append(d)
    return out


def _cancel_reason(entry: dict[str, Any], before: dict[str, Any]) -> str:
    """Why the stop of history ``entry`` (``before``: the entry ahead of it) cancelled the
    tickets out, in the lab's words."""
    n = entry.get("evaluations")
    if before.get("evaluations") == n and before.get("event") == "stopped_by_owner":
        return "the owner stopped the study"
    if before.get("evaluations") == n and before.get("event") == "budget" and before.get("to") == n:
        return f"the owner set the budget to {n} evaluations, the number already told, which stopped the study"
    if entry.get("status") == "identified":
        return "the study's stopping rule held: its answer is certified and needs no more scores"
    if entry.get("status") == "budget_exhausted":
        return f"the study reached its budget of {n} evaluations"
    return f"the study stopped ({str(entry.get('status')).replace('_', ' ')})"


def cancelled_tickets(study: Any, assistant: str, now: float) -> list[dict[str, Any]]:
    """The newest tickets ``assistant`` asked for that a stop of the study cancelled (the
    owner's stop, a budget set to the evaluations told, the budget reached or the stopping
    rule holding: the only cancellations; a released or expired ticket still takes its
    score) in the last :data:`HANDED_BACK_SECONDS`: a page's dicts with ``cancelled_at`` and
    ``why``, newest first, at most :data:`HANDED_BACK_ROWS`. Their scores are not taken."""
    rows = [r for r in study.storage.tickets(study.name, states=("cancelled",))
            if r.asked_by == assistant and r.told_seq is None]
    if not rows:
        return []
    stops: dict[int, tuple[Any, str]] = {}  # when and why each was cancelled (the study's history)
    with study.storage.read(study.name) as rx:
        history = [h for h in rx.study.history or [] if isinstance(h, dict)]
    for before, h in zip([{}] + history, history):
        for c in h.get("cancelled") or []:
            stops[c.get("ticket")] = (h.get("at"), _cancel_reason(h, before))
    problem = _problem(study)
    out = []
    for r in sorted(rows, key=lambda r: -r.id):
        at, why = stops.get(r.id, (None, "the study stopped"))
        at_s = _seconds(at)
        if now - (r.issued_at if at_s is None else at_s) > HANDED_BACK_SECONDS:
            continue
        d = _ticket_dict(r, problem.get("labels"), problem, now)
        d.update(state=r.state, assistant=r.asked_by, cancelled_at=iso_time(at), why=why)
        out.append(d)
    return out[:HANDED_BACK_ROWS]


def told_row(study: Any, ticket: int) -> dict[str, Any] | None:
    """One told evaluation as a row of the page's told log (older rows than the page lists
    are corrected through it), or None when ticket ``ticket`` is not told."""
    problem = _problem(study)
    rows = _log_section(told_tail(study, ticket=ticket), problem.get("labels"), problem)["rows"]
    return rows[0] if rows else None


def told_rows_all(study: Any) -> list[dict[str, Any]]:
    """Every told evaluation as rows of the page's told log, newest first (the assistant page
    with ``?told=all``: the ticket numbers of scores older than the page lists)."""
    problem = _problem(study)
    return _log_section(told_tail(study, 10 ** 12), problem.get("labels"), problem)["rows"]


def _owner_stop(summary: dict[str, Any]) -> dict[str, Any]:
    """``stopped_by_owner`` (a ``budget_exhausted`` study whose budget the owner's stop set
    to the evaluations told: the pages say who stopped it) and ``budget_before_stop`` (the
    budget it had then, None without one)."""
    stop = owner_stop(summary.get("status"), summary.get("budget"), summary.get("history"))
    return {"stopped_by_owner": stop is not None, "budget_before_stop": None if stop is None else stop.get("from")}


def study_snapshot(study: Any, scrub: Scrubber, *, now: float) -> dict[str, Any]:
    """The JSON of the study page (every section from the read API; see the module docstring)."""
    summary = _read(study, "summary", scrub)
    problem = _problem(study)
    labels = problem.get("labels")
    solver = getattr(getattr(study, "_record", None), "solver", None) or (
        summary.get("solver") if isinstance(summary, dict) else None) or "?"
    if _is_unavailable(summary):
        head: dict[str, Any] = {"available": False, "reason": summary["reason"]}
    else:
        head = {"available": True, "status": summary.get("status"), "evaluations": summary.get("evaluations"),
                "voided": summary.get("voided") or 0,
                "budget": summary.get("budget"), "tickets": summary.get("tickets"),
                "solver_params": summary.get("solver_params"), "policy": summary.get("policy"),
                **_owner_stop(summary)}
    dc = problem.get("decision_class") or {}
    team = problem.get("arm_type") == "mask"
    k = (dc.get("params") or {}).get("k") if isinstance(dc, dict) else None
    lo, hi = score_range(problem)
    best = _read(study, "best", scrub)
    est = _estimates_section(_read(study, "member_estimates", scrub), labels, problem,
                             blind=not _is_unavailable(best) and bool(best.get("oblivious_design")))
    if est.get("available"):
        est = {**est, "noise": _noise_words(_read(study, "noise_level", scrub))}
    return {
        "name": study.name,
        "solver": solver, "solver_title": solver_title(solver),
        "problem": {"team": team, "team_size": k, "n": problem.get("n_arms"), "low": lo, "high": hi,
                    "workers": labels},
        "summary": head,
        "best": _best_section(best, labels, solver),
        "estimates": est,
        "history": _history_section(_read(study, "history", scrub)),
        "pending": _pending_section(_read(study, "pending", scrub), labels, problem, now),
        "log": _log_section(_log_read(study, scrub), labels, problem),
        "events": _events_section(_read(study, "events", scrub)),
        "updated_at": iso_time(now),
    }


def studies_list(storage: Any, study_for: Any, scrub: Scrubber) -> list[dict[str, Any]]:
    """One line per study of the storage: name, status, evaluations, leader names."""
    out = []
    for name in get_all_study_names(storage):
        study = study_for(name)
        summary = _read(study, "summary", scrub)
        best = _read(study, "best", scrub)
        problem = _problem(study)
        row: dict[str, Any] = {"name": name, "solver": solver_title(getattr(study._record, "solver", "?"))}
        if _is_unavailable(summary):
            row.update(status="?", evaluations=None, budget=None, pending=None, reason=summary["reason"])
        else:
            row.update(status=summary.get("status"), evaluations=summary.get("evaluations"),
                       budget=summary.get("budget"), pending=(summary.get("tickets") or {}).get("pending"))
        row["leader"] = None if _is_unavailable(best) else team_names(_leader(best), problem.get("labels"))
        out.append(row)
    return out

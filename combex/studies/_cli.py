"""``combex study create|ask|tell|release|correct|pending|status|forecast|history|estimates|
add-assistant|remove-assistant|assistants|export|list|delete|upgrade|backup``: live studies from
scripts.

Every command prints one JSON document on stdout (errors: a message on stderr, exit 2).
STORAGE is a file path (SQLite) or a SQLAlchemy URL.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

from ..exceptions import InvalidParameterError
from ..exceptions import StorageError, StudyFinishedError
from . import _study as S
from ._problem import problem_spec
from ._study import DEFAULT_LEASE_SECONDS
from ._upgrade import upgrade_storage

__all__ = ["add_study_command"]


def _print(doc: Any) -> None:
    print(json.dumps(doc, indent=None, sort_keys=False, allow_nan=False, default=str))


def _value(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def _assignments(items: Any, option: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for item in items or []:
        key, sep, val = item.partition("=")
        if not sep or not key:
            raise InvalidParameterError(f"The {option} option takes KEY=VALUE. Got {item!r} instead.")
        out[key.strip()] = _value(val.strip())
    return out


def _floats(text: str, option: str, n: int) -> list[float | None]:
    """``n`` comma-separated numbers (an empty field or "none" for an open end)."""
    parts = [p.strip() for p in text.split(",")]
    out: list[float | None] = []
    for p in parts:
        if p.lower() in ("", "none"):
            out.append(None)
            continue
        try:
            out.append(float(p))
        except ValueError:
            out = []
            break
    if len(out) != n or len(parts) != n:
        raise InvalidParameterError(f"The {option} option takes {n} comma-separated numbers (LOW,HIGH). "
                                    f"Got {text!r} instead.")
    return out


def _names(text: str, option: str) -> list[str]:
    names = [p.strip() for p in text.split(",")]
    if not all(names):
        raise InvalidParameterError(f"The {option} option takes comma-separated non-empty names. Got {text!r} instead.")
    return names


def _problem(args: argparse.Namespace) -> dict[str, Any]:
    lab = [o for o, v in (("--workers", args.workers), ("--team-size", args.team_size)) if v is not None]
    if args.problem:
        if lab or args.n_arms is not None:
            raise InvalidParameterError("Give the problem either as --problem JSON or with options "
                                        "(--workers/--team-size or --n-arms), not both.")
        text = args.problem
        if text.startswith("@"):
            try:
                with open(text[1:], encoding="utf-8") as fh:
                    text = fh.read()
            except OSError as exc:
                raise InvalidParameterError(f"The --problem option names a file that cannot be read: "
                                            f"{text[1:]!r} ({exc.strerror}).") from None
        try:
            doc = json.loads(text)
        except json.JSONDecodeError as exc:
            raise InvalidParameterError(f"The --problem option must be a JSON object ({exc}).") from None
        if not isinstance(doc, dict):
            raise InvalidParameterError(f"The --problem option must be a JSON object. Got {doc!r} instead.")
        known = {"n_arms", "workers", "team_size", "score_range", "noise_scale", "noise", "arm_type",
                 "decision_class", "reward_range", "labels"}
        unknown = sorted(set(doc) - known)
        if unknown:
            raise InvalidParameterError(f"The --problem option has unknown keys {unknown}; known keys: "
                                        f"{sorted(known)}.")
        return problem_spec(**doc)
    noise: Any = None if args.noise is None else args.noise
    if args.sigma is not None:
        noise = {"kind": args.noise or "gaussian", "sigma": args.sigma}
    sr = _floats(args.score_range, "--score-range", 2) if args.score_range else None
    rr = _floats(args.reward_range, "--reward-range", 2) if args.reward_range else None
    if lab:
        if args.workers is None or args.team_size is None:
            raise InvalidParameterError("A team study needs both --workers NAME,NAME,... and --team-size K.")
        if args.n_arms is not None or args.labels or args.decision_class:
            raise InvalidParameterError("--workers replaces --n-arms, --labels and --decision-class; give one form.")
        return problem_spec(workers=_names(args.workers, "--workers"), team_size=args.team_size, score_range=sr,
                            noise_scale=args.noise_scale, noise=noise, reward_range=rr)
    if args.n_arms is None:
        raise InvalidParameterError("Give the problem: --workers NAMES --team-size K [--score-range LOW,HIGH], "
                                    "--problem JSON (or @file), or --n-arms N [--noise ...].")
    dc = None
    if args.decision_class:
        dc = {"name": args.decision_class, "params": _assignments(args.dc_param, "--dc-param")}
    labels = _names(args.labels, "--labels") if args.labels else None
    return problem_spec(args.n_arms, noise=noise, noise_scale=args.noise_scale, arm_type=args.arm_type,
                        decision_class=dc, score_range=sr, reward_range=rr, labels=labels)


def _number(text: str, what: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise InvalidParameterError(f"The {what} must be a number. Got {text!r} instead.") from None


def _ticket(text: str, what: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise InvalidParameterError(f"The {what} must be a ticket id (an int). Got {text!r} instead.") from None


def _export(study: Any, out: str | None) -> None:
    df = study.trials_dataframe()
    if not out:
        print(df.to_json(orient="records"))
        return
    folder = os.path.dirname(os.path.abspath(out))
    if not os.path.isdir(folder):
        raise InvalidParameterError(f"The --out option names a file in a folder that does not exist: {folder!r}.")
    try:
        if out.endswith(".csv"):  # a team as text a spreadsheet reads: "Ana, Ben, Cleo, Dev"; arms "0 1 2 3"
            for col in ("names", "arm"):
                sep = ", " if col == "names" else " "
                df[col] = [sep.join(map(str, v)) if isinstance(v, (list, tuple)) else v for v in df[col]]
            df.to_csv(out, index=False)
        else:
            df.to_json(out, orient="records")
    except OSError as exc:
        raise InvalidParameterError(f"The --out file {out!r} cannot be written ({exc.strerror}).") from None
    _print({"written": out, "rows": len(df)})


def _status_text(doc: dict[str, Any]) -> str:
    """Where a study stands, in a few lines of words (``combex study status --text``)."""
    b = doc["best"]
    budget = f" of {doc['budget']}" if doc.get("budget") else ""
    pending = (doc.get("tickets") or {}).get("pending", 0)
    void = f" ({doc['voided']} voided: counted against the budget, not in the statistics)" if doc.get("voided") else ""
    lines = [f"{doc['name']}: {str(doc['status']).replace('_', ' ')}, {doc['evaluations']}{budget} evaluations told"
             f"{void}, {pending} ticket{'s' if pending != 1 else ''} out ({doc['solver']})."]
    names = (b.get("leader") or {}).get("names")
    if names and not b.get("first_check_pending") and doc["evaluations"]:  # none before the first scores
        who = "Answer" if doc["status"] != "running" else "Leader"
        lines.append(f"{who}: {', '.join(map(str, names)) if isinstance(names, list) else names}.")
    nl = doc.get("noise_level") or {}
    if isinstance(nl.get("sd"), (int, float)):
        lines.append(f"Noise of one evaluation: sd {nl['sd']:.3g}" + (", declared." if nl.get("declared") else
                     f", estimated on {nl['dof']} degrees of freedom."))
    if isinstance(b.get("delta_achieved"), (int, float)):
        lines.append(f"delta achieved: {b['delta_achieved']:.3g} (the study's delta: "
                     f"{(doc.get('solver_params') or {}).get('delta', '?')}).")
    lines.append(b["certificate_text"])
    events = [e for e in doc.get("events") or [] if e.get("event") != "upgraded"]
    if events:
        lines.append("History:")
        lines += [f"  {e['at'][:16].replace('T', ' ')} UTC  {e['text']}" if e.get("at") else f"  {e['text']}"
                  for e in events]
    return "\n".join(lines)


def _cmd(args: argparse.Namespace) -> int:
    action = args.action
    if action == "upgrade":
        _print(upgrade_storage(args.storage))
        return 0
    if action == "backup":
        st = S.get_storage(args.storage)
        if not hasattr(st, "backup"):
            raise StorageError(f"This storage ({type(st).__name__}) has no backup; copy it with its own tools.")
        _print({"backup": st.backup(args.out), "studies": [r.name for r in st.list_studies()]})
        return 0
    if action == "list":
        st = S.get_storage(args.storage)
        _print([S.Study(st, r).summary() for r in st.list_studies()])
        return 0
    if action == "create":
        study = S.create_study(storage=args.storage, name=args.name, problem=_problem(args), solver=args.solver,
                               solver_params=_assignments(args.param, "--param"), seed=args.seed,
                               budget=args.budget, lease_seconds=args.lease, snapshot_every=args.snapshot_every,
                               load_if_exists=args.load_if_exists)
        _print(study.summary())
        return 0
    if action == "delete":
        S.delete_study(storage=args.storage, name=args.name)
        _print({"deleted": args.name})
        return 0
    study = S.load_study(storage=args.storage, name=args.name)
    who = getattr(args, "assistant", None)
    if action == "ask":
        try:
            tickets = study.ask(n=args.n, assistant=who)
        except StudyFinishedError as exc:
            _print({"status": study.status, "tickets": [], "message": str(exc), "best": study.best()})
            return 0
        _print({"status": "running", "tickets": [t.to_dict() for t in tickets]})
        return 0
    if action == "tell":
        pairs: list[tuple[int, Any]] = []
        for item in args.result or []:
            tid, sep, val = item.partition("=")
            if not sep:
                raise InvalidParameterError(f"The --result option takes TICKET=REWARD_SUM. Got {item!r} instead.")
            pairs.append((_ticket(tid.strip(), "ticket of --result"), _number(val.strip(), "score of --result")))
        if args.ticket is not None:
            if args.reward_sum is None:
                raise InvalidParameterError("--ticket needs --reward-sum.")
            pairs.append((args.ticket, args.reward_sum))
        elif args.reward_sum is not None:
            raise InvalidParameterError("--reward-sum needs --ticket.")
        if not pairs:
            raise InvalidParameterError("Give --ticket ID --reward-sum X, or --result ID=X (repeatable).")
        status = study.tell_many(pairs, assistant=who)
        _print({"status": status, "told": [p[0] for p in pairs]})
        return 0
    if action == "release":
        status = study.release(args.ticket, assistant=who)
        _print({"status": status, "released": args.ticket})
        return 0
    if action == "set-budget":
        status = study.set_budget(args.budget)
        _print({"status": status, "budget": args.budget, "best": study.best()})
        return 0
    if action == "stop":
        status = study.stop()
        _print({"status": status, "best": study.best()})
        return 0
    if action == "correct":
        if (args.reward_sum is None) == (not args.void):
            raise InvalidParameterError("Give exactly one of --reward-sum X (the right score) and --void.")
        status = study.correct(args.ticket, None if args.void else args.reward_sum, reason=args.reason,
                               assistant=who)
        _print({"status": status, "corrected": args.ticket, "best": study.best()})
        return 0
    if action == "pending":
        _print([t.to_dict() for t in study.pending()])
        return 0
    if action == "status":
        doc = study.summary()
        doc["best"] = study.best()
        doc["events"] = study.events()
        doc["noise_level"] = study.noise_level()
        if args.text:
            print(_status_text(doc))
        else:
            _print(doc)
        return 0
    if action == "forecast":
        f = study.forecast(runs=args.runs, more=args.more, rng=args.seed)
        if args.text:
            print(f)
        else:
            _print(f.to_dict())
        return 0
    if action == "history":
        _print(study.history(max_points=args.max_points))
        return 0
    if action == "estimates":
        _print(study.member_estimates())
        return 0
    if action == "add-assistant":
        token = study.add_assistant(args.assistant)
        _print({"assistant": args.assistant, "token": token,
                "note": "the token is shown once (only a salted hash is stored): give it to the assistant"})
        return 0
    if action == "remove-assistant":
        study.remove_assistant(args.assistant)
        _print({"removed": args.assistant})
        return 0
    if action == "assistants":
        _print(study.assistants())
        return 0
    if action == "export":
        _export(study, args.out)
        return 0
    raise InvalidParameterError(f"Unknown study action {action!r}.")  # pragma: no cover


def add_study_command(sub: Any) -> None:
    """Register ``combex study ...`` on the ``combex`` parser's subparsers."""
    p = sub.add_parser(
        "study", help="live studies: create, ask, tell, release, correct, status, assistants, export... (JSON)",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Run a live study through a storage (a file path for SQLite, or a SQLAlchemy URL such as "
                    "postgresql+psycopg://user@host/db). Every command prints JSON.",
        epilog="Examples:\n"
               "  combex study create lab.db --name lab --workers Ana,Ben,Cleo,Dev,Eli,Fay,Gus,Hana,Ivo,Jun,Kai,Lea "
               "--team-size 4 --score-range 0,100 --solver top-two --param delta=0.1 --param epsilon=5\n"
               "  combex study create lab.db --name quiz --n-arms 8 --noise bernoulli --solver lil-clucb "
               "--param K=2 --param delta=0.05\n"
               "  combex study add-assistant lab.db --name lab --assistant ann\n"
               "  combex study ask lab.db --name lab --assistant ann\n"
               "  combex study tell lab.db --name lab --ticket 3 --reward-sum 64.5 --assistant ann\n"
               "  combex study correct lab.db --name lab --ticket 3 --reward-sum 46.5 --reason 'digits swapped'\n"
               "  combex study release lab.db --name lab --ticket 4\n"
               "  combex study pending lab.db --name lab\n"
               "  combex study set-budget lab.db --name lab --budget 200\n"
               "  combex study stop lab.db --name lab\n"
               "  combex study status lab.db --name quiz\n"
               "  combex study forecast lab.db --name lab --text\n"
               "  combex study export lab.db --name quiz --out trials.csv\n"
               "  combex dashboard lab.db --port 8050",
    )
    acts = p.add_subparsers(dest="action", required=True)
    c = acts.add_parser("create", help="create a study (or load it with --load-if-exists)")
    c.add_argument("storage")
    c.add_argument("--name", required=True)
    c.add_argument("--solver", required=True, help="solver name (see `combex list`)")
    c.add_argument("--param", action="append", metavar="KEY=VALUE", help="solver setting (repeatable)")
    c.add_argument("--workers", default=None, metavar="NAME,NAME,...",
                   help="a team study: the workers' names, comma-separated (blanks around the commas are not "
                        "part of a name); with --team-size; arms are teams")
    c.add_argument("--team-size", type=int, default=None, help="members of a team (with --workers)")
    c.add_argument("--score-range", default=None, metavar="LOW,HIGH",
                   help="range of one observation (one session's score of a team)")
    c.add_argument("--noise-scale", type=float, default=None,
                   help="known standard deviation of one observation (default: unknown, estimated)")
    c.add_argument("--problem", help="problem spec as JSON, or @file.json")
    c.add_argument("--n-arms", type=int, help="number of base arms (workers), instead of --problem")
    c.add_argument("--noise", default=None,
                   help="noise kind: bernoulli (default), gaussian (team studies' default), rademacher")
    c.add_argument("--sigma", type=float, default=None, help="noise sigma (a gaussian kind's known scale)")
    c.add_argument("--arm-type", default=None, choices=["index", "mask"])
    c.add_argument("--decision-class", default=None, help="registered decision class name")
    c.add_argument("--dc-param", action="append", metavar="KEY=VALUE", help="decision class parameter")
    c.add_argument("--reward-range", default=None, help="LOW,HIGH of one observation of one arm")
    c.add_argument("--labels", default=None, help="comma-separated arm names")
    c.add_argument("--seed", type=int, default=0)
    c.add_argument("--budget", type=int, default=None, help="stop after this many evaluations told")
    c.add_argument("--lease", type=float, default=DEFAULT_LEASE_SECONDS,
                   help="ticket lease in seconds (default one day)")
    c.add_argument("--snapshot-every", type=int, default=1000)
    c.add_argument("--load-if-exists", action="store_true")

    def cmd(name: str, help: str, assistant: bool = False) -> Any:
        q = acts.add_parser(name, help=help)
        q.add_argument("storage")
        q.add_argument("--name", required=True, help="the study")
        if assistant:
            q.add_argument("--assistant", default=None, help="the assistant acting (default: the owner)")
        return q

    a = cmd("ask", "hand out tickets", assistant=True)
    a.add_argument("--n", type=int, default=1, help="number of tickets (default 1)")
    t = cmd("tell", "record scores (reward sums)", assistant=True)
    t.add_argument("--ticket", type=int, default=None)
    t.add_argument("--reward-sum", type=float, default=None)
    t.add_argument("--result", action="append", metavar="TICKET=REWARD_SUM", help="repeatable; one transaction")
    r = cmd("release", "hand a ticket back unevaluated", assistant=True)
    r.add_argument("--ticket", type=int, required=True)
    co = cmd("correct", "replace (or void) a told score, with a reason", assistant=True)
    co.add_argument("--ticket", type=int, required=True)
    co.add_argument("--reward-sum", type=float, default=None, help="the right score")
    co.add_argument("--void", action="store_true", help="void the told score (the evaluation did not count)")
    co.add_argument("--reason", required=True)
    sb = cmd("set-budget", "set the budget of evaluations (equal to the evaluations told: stop now; above them on a "
                           "stopped study: continue it)")
    sb.add_argument("--budget", type=int, required=True)
    cmd("stop", "end the study now with the current leader and its delta_achieved (the owner)")
    cmd("pending", "the tickets out: assistant, age, lease deadline")
    st = cmd("status", "status, ticket counts, leader / result, certificate in words (JSON)")
    st.add_argument("--text", action="store_true", help="a few lines in words instead of the JSON document")
    fc = cmd("forecast", "how many more evaluations the study may need: its exploration continued in simulated "
                         "sessions under truths drawn around the current estimates")
    fc.add_argument("--runs", type=int, default=20, help="simulated continuations (default 20)")
    fc.add_argument("--more", type=int, default=None,
                    help="evaluations more a continuation may take (default: the largest of 1000, twice the told, "
                         "twice what the budget leaves)")
    fc.add_argument("--seed", type=int, default=0)
    fc.add_argument("--text", action="store_true", help="the forecast in words instead of the JSON document")
    h = cmd("history", "the stopping statistic over the evaluations (at most --max-points rows, evenly spread over "
                       "the told log)")
    h.add_argument("--max-points", type=int, default=400,
                   help="rows at most (default 400; the number of evaluations told lists every one)")
    cmd("estimates", "per-worker estimates with intervals")
    aa = cmd("add-assistant", "add an assistant; prints their token (shown once)")
    aa.add_argument("--assistant", required=True, help="the assistant's name")
    ra = cmd("remove-assistant", "remove an assistant (their token stops working)")
    ra.add_argument("--assistant", required=True, help="the assistant's name")
    cmd("assistants", "the assistants: name, created, last seen, evaluations told")
    e = cmd("export", "every ticket (JSON records, or --out .csv/.json)")
    e.add_argument("--out", default=None)
    li = acts.add_parser("list", help="the studies of a storage")
    li.add_argument("storage")
    up = acts.add_parser("upgrade", help="upgrade a storage written by an older combex to the current schema "
                                         "(back it up first: combex study backup)")
    up.add_argument("storage")
    bk = acts.add_parser("backup", help="a consistent copy of an SQLite storage in a new file, while studies run "
                                        "(a plain copy of the file can miss the newest writes)")
    bk.add_argument("storage")
    bk.add_argument("--out", required=True, help="the new file")
    d = cmd("delete", "delete a study and its logs")
    del d
    p.set_defaults(func=_cmd)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(0)

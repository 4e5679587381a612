"""Live studies: how bad inputs are answered (clear error / unclear error / silently accepted).

Every case gives one bad input to the study API or to ``combex study ...`` on a fresh
study and classifies the answer:

* ``clear``: a :class:`~combex.exceptions.CombexError` whose message names the culprit
  (the CLI: exit status 2 with a ``combex: error:`` line, or argparse's usage error) and
  nothing written;
* ``unclear``: any other exception (a raw traceback), or a clear error after which the
  study's log changed;
* ``silent``: accepted.

Storage cases run on SQLite and on PostgreSQL (a temporary cluster started like the test
fixture, ``tests/_studies_helpers.py``); CLI cases on SQLite. Cases that need an API this
combex lacks are reported as ``n/a``. The test suite checks each case for a clear error
(tests/test_studies_bad_inputs.py); this script prints the counts, so it can be run on
any checkout (``PYTHONPATH=CHECKOUT python benchmarks/studies_bad_inputs.py``).

Run: python benchmarks/studies_bad_inputs.py [--no-postgresql] [--verbose]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import sqlite3
import sys
import tempfile
from pathlib import Path
from typing import Any, Callable

import numpy as np

import combex.studies as cs
from combex.exceptions import CombexError

ROOT = Path(__file__).resolve().parents[1]


def _bern(n: int = 3) -> dict:
    return cs.problem_spec(n, noise="bernoulli", labels=[f"w{i}" for i in range(n)])


def _study(url: str, name: str = "s", **kw: Any) -> Any:
    kw.setdefault("problem", _bern())
    kw.setdefault("solver", "lucb")
    kw.setdefault("solver_params", {"K": 1})
    return cs.create_study(storage=url, name=name, **kw)


def _asked(url: str) -> tuple[Any, Any]:
    s = _study(url)
    return s, s.ask()


# ---------------------------------------------------------------------------- cases
# (id, kind, function): kind "storage" (run on every backend, given a fresh URL) or "cli"
# (given a temporary folder); the function does the bad thing.
# Each case is ``fn(url_or_folder) -> thunk``: ``fn`` sets the study up, the thunk does the
# bad thing (storage cases), or returns the argv of ``combex`` (CLI cases). ``expect``: a
# fragment the error message must contain (an error for another reason is counted as
# unclear); ``new``: a case of an API that older combex versions lack (reported n/a there).
CASES: list[tuple[str, str, Callable[[Any], Any], str, bool]] = []


def case(cid: str, kind: str = "storage", expect: str = "", new: bool = False) -> Callable[[Any], Any]:
    def deco(f: Callable[[Any], Any]) -> Callable[[Any], Any]:
        CASES.append((cid, kind, f, expect, new))
        return f

    return deco


def _tell(value: Any) -> Callable[[str], Any]:
    def f(url: str) -> Any:
        s, t = _asked(url)
        return lambda: s.tell(t.id, value)

    return f


for _cid, _v in [("reward-str", "1"), ("reward-bool", True), ("reward-half-bernoulli", 0.5), ("reward-none", None),
                 ("reward-list", [1]), ("reward-nan", float("nan")), ("reward-inf", float("inf")),
                 ("reward-too-high", 2.0), ("reward-negative", -1.0), ("reward-numpy-bool", np.bool_(True)),
                 ("reward-complex", 1 + 0j), ("reward-bytes", b"1")]:
    case(_cid, expect="reward_sum")(_tell(_v))


def _tell_id(tid: Any) -> Callable[[str], Any]:
    def f(url: str) -> Any:
        s, _ = _asked(url)
        return lambda: s.tell(tid, 1.0)

    return f


for _cid, _v in [("ticket-str", "abc"), ("ticket-2**31", 2**31), ("ticket-10**20", 10**20), ("ticket-negative", -1),
                 ("ticket-float", 1.5), ("ticket-bool", True), ("ticket-none", None), ("ticket-unknown", 999)]:
    case(_cid, expect="ticket")(_tell_id(_v))


def _on_asked(call: Callable[[Any, Any], Any]) -> Callable[[str], Any]:
    def f(url: str) -> Any:
        s, t = _asked(url)
        return lambda: call(s, t)

    return f


case("tell-many-not-pairs", expect="results")(_on_asked(lambda s, t: s.tell_many([t.id, 1.0])))
case("tell-many-empty", expect="results")(_on_asked(lambda s, t: s.tell_many([])))


@case("tell-twice", expect="already told")
def _(url: str) -> Any:
    s, t = _asked(url)
    s.tell(t, 1.0)
    return lambda: s.tell(t, 1.0)


def _ask(n: Any) -> Callable[[str], Any]:
    def f(url: str) -> Any:
        s = _study(url)
        return lambda: s.ask(n=n)

    return f


for _cid, _v in [("ask-n-0", 0), ("ask-n-negative", -1), ("ask-n-20000", 20000), ("ask-n-str", "3"),
                 ("ask-n-float", 2.5), ("ask-n-bool", True)]:
    case(_cid, expect="'n'")(_ask(_v))


def _create(**kw: Any) -> Callable[[str], Any]:
    def f(url: str) -> Any:
        return lambda: _study(url, **kw)

    return f


for _cid, _kw, _e in [
    ("name-empty", {"name": ""}, "name"), ("name-300-chars", {"name": "x" * 300}, "name"),
    ("name-int", {"name": 123}, "name"), ("name-newline", {"name": "lab\n2"}, "name"),
    ("seed-negative", {"seed": -1}, "seed"), ("seed-2**70", {"seed": 2**70}, "seed"),
    ("seed-str", {"seed": "1"}, "seed"), ("lease-zero", {"lease_seconds": 0}, "lease_seconds"),
    ("lease-inf", {"lease_seconds": float("inf")}, "lease_seconds"),
    ("lease-str", {"lease_seconds": "60"}, "lease_seconds"), ("snapshot-every-zero", {"snapshot_every": 0}, "snapshot"),
    ("solver-unknown", {"solver": "nope"}, "nope"), ("solver-regret", {"solver": "sub-ts", "solver_params": {}}, "pac"),
    ("solver-param-unknown", {"solver_params": {"K": 1, "bogus": 1}}, "bogus"),
    ("solver-delta-2", {"solver_params": {"K": 1, "delta": 2.0}}, "delta"),
    ("solver-K-too-big", {"solver_params": {"K": 5}}, "K"),
]:
    case(_cid, expect=_e)(_create(**_kw))
for _cid, _kw in [("budget-zero", {"budget": 0}), ("budget-str", {"budget": "10"}), ("budget-bool", {"budget": True})]:
    case(_cid, expect="budget", new=True)(_create(**_kw))


def _problem(**kw: Any) -> Callable[[str], Any]:
    def f(url: str) -> Any:
        return lambda: _study(url, problem=cs.problem_spec(**kw))

    return f


case("noise-misspelled", expect="gausian")(_problem(n_arms=3, noise="gausian"))
case("noise-dict-misspelled", expect="gausian")(_problem(n_arms=3, noise={"kind": "gausian", "sigma": 2.0}))
for _cid, _kw, _e in [
    ("noise-int", {"n_arms": 3, "noise": 3}, "noise"),
    ("noise-sigma-negative", {"n_arms": 3, "noise": {"kind": "gaussian", "sigma": -1.0}}, "sigma"),
    ("n-arms-zero", {"n_arms": 0}, "n_arms"), ("n-arms-str", {"n_arms": "3"}, "'3'"),
    ("labels-short", {"n_arms": 3, "labels": ["a"]}, "labels"),
    ("labels-duplicate", {"n_arms": 3, "labels": ["a", "a", "b"]}, "labels"),
    ("label-300-chars", {"n_arms": 3, "labels": ["a", "b", "c" * 300]}, "labels"),
    ("reward-range-reversed", {"n_arms": 3, "reward_range": (1, 0)}, "reward_range"),
    ("reward-range-str", {"n_arms": 3, "reward_range": ("a", "b")}, "reward_range"),
    ("reward-range-nan", {"n_arms": 3, "reward_range": (float("nan"), 1)}, "reward_range"),
    ("arm-type-bad", {"n_arms": 3, "arm_type": "team"}, "arm_type"),
    ("dc-unknown", {"n_arms": 3, "arm_type": "mask", "decision_class": {"name": "nope", "params": {}}}, "nope"),
    ("dc-k-too-big", {"n_arms": 3, "arm_type": "mask", "decision_class": {"name": "topk", "params": {"n": 3, "k": 9}}},
     "'k'"),
]:
    case(_cid, expect=_e)(_problem(**_kw))
for _cid, _kw, _e in [
    ("team-size-missing", {"workers": ["a", "b", "c"]}, "team_size"),
    ("team-size-too-big", {"workers": ["a", "b", "c"], "team_size": 3}, "team_size"),
    ("score-range-str", {"workers": ["a", "b", "c"], "team_size": 2, "score_range": ("0", "x")}, "score_range"),
    ("noise-scale-negative", {"workers": ["a", "b", "c"], "team_size": 2, "noise_scale": -1.0}, "noise_scale"),
    ("workers-duplicate", {"workers": ["Ana", "Ben", "Ana"], "team_size": 2}, "'workers' parameter"),
    ("worker-trailing-blank", {"workers": ["Ana", "Ben ", "Cam"], "team_size": 2}, "('Ben ' is not)"),
]:
    case(_cid, expect=_e, new=True)(_problem(**_kw))


@case("problem-dict-bogus-key", expect="bogus")
def _(url: str) -> Any:
    spec = dict(_bern(), bogus=1)
    return lambda: _study(url, problem=spec)


@case("storage-int", expect="storage")
def _(url: str) -> Any:
    return lambda: cs.create_study(storage=12345, name="s", problem=_bern(), solver="lucb", solver_params={"K": 1})


@case("load-missing", expect="nope")
def _(url: str) -> Any:
    return lambda: cs.load_study(storage=url, name="nope")


@case("tell-finished", expect="identified")
def _(url: str) -> Any:
    import inspect

    from combex.solvers import get_solver

    level = "delta" if "delta" in inspect.signature(get_solver("lucb")).parameters else "nu"  # older combex: nu
    s = _study(url, solver_params={"K": 1, level: 0.5})
    while True:
        try:
            t = s.ask()
        except cs.StudyFinishedError:
            break
        s.tell(t, 1.0 if t.arm == 0 else 0.0)
    return lambda: s.tell(1, 1.0)


# -- assistants, release, corrections
def _with_assistant(call: Callable[[Any, Any], Any], told: bool = False) -> Callable[[str], Any]:
    def f(url: str) -> Any:
        s, t = _asked(url)
        s.add_assistant("Ann")
        if told:
            s.tell(t, 1.0)
        return lambda: call(s, t)

    return f


for _cid, _call, _e in [
    ("assistant-name-empty", lambda s, t: s.add_assistant(""), "name"),
    ("assistant-name-300", lambda s, t: s.add_assistant("a" * 300), "name"),
    ("assistant-name-int", lambda s, t: s.add_assistant(5), "name"),
    ("assistant-twice", lambda s, t: s.add_assistant("Ann"), "Ann"),
    ("assistant-unknown-ask", lambda s, t: s.ask(assistant="Zed"), "assistant"),
    ("assistant-unknown-tell", lambda s, t: s.tell(t, 1.0, assistant="Zed"), "assistant"),
    ("assistant-remove-unknown", lambda s, t: s.remove_assistant("Zed"), "name"),
    ("release-unknown", lambda s, t: s.release(999), "999"),
    ("release-str", lambda s, t: s.release("1"), "ticket"),
    ("correct-pending", lambda s, t: s.correct(t, 1.0, reason="x"), "not told"),
    ("history-max-points", lambda s, t: s.history(max_points=0), "max_points"),
    ("estimates-level", lambda s, t: s.member_estimates(level=1.5), "level"),
]:
    case(_cid, expect=_e, new=True)(_with_assistant(_call))
for _cid, _call, _e in [
    ("release-told", lambda s, t: s.release(t), "told"),
    ("correct-no-reason", lambda s, t: s.correct(t, 0.0, reason=""), "reason"),
    ("correct-bad-value", lambda s, t: s.correct(t, "0", reason="x"), "reward_sum"),
    ("correct-out-of-range", lambda s, t: s.correct(t, 5.0, reason="x"), "reward_sum"),
    ("correct-twice-told", lambda s, t: s.tell(t, 0.0), "already told"),
]:
    case(_cid, expect=_e, new=True)(_with_assistant(_call, told=True))


# -- foreign databases (SQLite files only)
@case("sqlite-other-program", "cli", expect="another program")
def _(tmp: Path) -> Any:
    path = tmp / "app.db"
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE invoices (id INTEGER PRIMARY KEY, total REAL)")
    con.commit()
    con.close()
    return lambda: _study(str(path))


@case("sqlite-optuna", "cli", expect="optuna")
def _(tmp: Path) -> Any:
    path = tmp / "optuna.db"
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE studies (study_id INTEGER PRIMARY KEY, study_name VARCHAR(512))")
    con.execute("CREATE TABLE trials (trial_id INTEGER PRIMARY KEY, study_id INTEGER)")
    con.execute("CREATE TABLE alembic_version (version_num VARCHAR(32))")
    con.commit()
    con.close()
    return lambda: _study(str(path))


@case("sqlite-not-a-database", "cli", expect="not a database")
def _(tmp: Path) -> Any:
    path = tmp / "notes.txt"
    path.write_text("hello, this is not a database\n" * 50)
    return lambda: _study(str(path))


@case("storage-bad-timeouts", "cli", expect="lock_timeout", new=True)
def _(tmp: Path) -> Any:
    return lambda: cs.SQLStorage(tmp / "t.db", lock_timeout=-1)


# -- CLI
def _cli(*argv: str, setup: bool = True) -> Callable[[Path], Any]:
    def f(tmp: Path) -> Any:
        db = str(tmp / "lab.db")
        if setup:
            s = _study(db)
            s.ask()
        return [a.replace("DB", db).replace("TMP", str(tmp)) for a in argv]

    return f


for _cid, _argv, _e in [
    ("cli-result-true", ("study", "tell", "DB", "--name", "s", "--result", "1=true"), "true"),
    ("cli-result-abc-id", ("study", "tell", "DB", "--name", "s", "--result", "abc=1"), "abc"),
    ("cli-result-abc-value", ("study", "tell", "DB", "--name", "s", "--result", "1=abc"), "abc"),
    ("cli-result-no-equals", ("study", "tell", "DB", "--name", "s", "--result", "1"), "--result"),
    ("cli-ticket-10**20", ("study", "tell", "DB", "--name", "s", "--ticket", str(10**20), "--reward-sum", "1"),
     "ticket"),
    ("cli-ticket-without-reward", ("study", "tell", "DB", "--name", "s", "--ticket", "1"), "--reward-sum"),
    ("cli-tell-nothing", ("study", "tell", "DB", "--name", "s"), "--ticket"),
    ("cli-ask-n-20000", ("study", "ask", "DB", "--name", "s", "--n", "20000"), "'n'"),
    ("cli-ask-n-0", ("study", "ask", "DB", "--name", "s", "--n", "0"), "'n'"),
    ("cli-export-missing-folder", ("study", "export", "DB", "--name", "s", "--out", "TMP/missing/x.csv"), "missing"),
    ("cli-status-missing-study", ("study", "status", "DB", "--name", "nope"), "nope"),
]:
    case(_cid, "cli", expect=_e)(_cli(*_argv))
for _cid, _argv, _e in [
    ("cli-correct-neither", ("study", "correct", "DB", "--name", "s", "--ticket", "1", "--reason", "x"), "--void"),
    ("cli-correct-pending", ("study", "correct", "DB", "--name", "s", "--ticket", "1", "--void", "--reason", "x"),
     "not told"),
    ("cli-release-unknown", ("study", "release", "DB", "--name", "s", "--ticket", "77"), "77"),
    ("cli-assistant-unknown", ("study", "ask", "DB", "--name", "s", "--assistant", "Zed"), "Zed"),
    ("cli-add-assistant-empty", ("study", "add-assistant", "DB", "--name", "s", "--assistant", ""), "name"),
]:
    case(_cid, "cli", expect=_e, new=True)(_cli(*_argv))

for _cid, _argv, _e in [
    ("cli-problem-missing-file", ("--problem", "@TMP/missing.json"), "missing.json"),
    ("cli-problem-unknown-key", ("--problem", '{"n_arms": 3, "bogus": 1}'), "bogus"),
    ("cli-problem-not-json", ("--problem", "{n_arms: 3"), "JSON"),
    ("cli-problem-list", ("--problem", "[3]"), "JSON object"),
    ("cli-reward-range-ab", ("--n-arms", "3", "--reward-range", "a,b"), "reward-range"),
    ("cli-reward-range-one", ("--n-arms", "3", "--reward-range", "1"), "reward"),
    ("cli-n-arms-zero", ("--n-arms", "0"), "n_arms"),
    ("cli-labels-short", ("--n-arms", "3", "--labels", "a,b"), "labels"),
    ("cli-param-no-equals", ("--n-arms", "3", "--param", "K"), "--param"),
    ("cli-param-bad-value", ("--n-arms", "3", "--param", "delta=abc"), "delta"),
    ("cli-seed-negative", ("--n-arms", "3", "--seed", "-1"), "seed"),
    ("cli-lease-zero", ("--n-arms", "3", "--lease", "0"), "lease"),
    ("cli-dc-unknown", ("--n-arms", "3", "--arm-type", "mask", "--decision-class", "nope"), "nope"),
    ("cli-no-problem", (), "problem"),
    ("cli-noise-misspelled", ("--n-arms", "3", "--noise", "gausian"), "gausian"),
]:
    case(_cid, "cli", expect=_e)(_cli("study", "create", "DB", "--name", "t", "--solver", "lucb", "--param", "K=1",
                                     *_argv, setup=False))
for _cid, _argv, _e in [
    ("cli-workers-no-team-size", ("--workers", "a,b,c"), "--team-size"),
    ("cli-score-range-ab", ("--workers", "a,b,c", "--team-size", "2", "--score-range", "a,b"), "--score-range"),
    ("cli-budget-zero", ("--n-arms", "3", "--budget", "0"), "budget"),
    ("cli-workers-duplicate", ("--workers", "Ana,Ben,Ana", "--team-size", "2"), "'workers' parameter"),
]:
    case(_cid, "cli", expect=_e, new=True)(_cli("study", "create", "DB", "--name", "t", "--solver", "icb",
                                                "--param", "delta=0.1", *_argv, setup=False))
case("cli-dashboard-port-99999", "cli", expect="port")(_cli("dashboard", "DB", "--port", "99999", setup=False))


# ---------------------------------------------------------------------------- running
def _log_state(url: Any) -> Any:
    if isinstance(url, str) and "://" not in url and not os.path.exists(url):
        return None
    try:
        st = cs.get_storage(url)
        out = [(r.name, r.n_told, r.status, tuple((t.id, t.state) for t in st.tickets(r.name)))
               for r in st.list_studies()]
        st.close()
        return out
    except Exception:  # noqa: BLE001 - a storage the case broke
        return None


def _fail(exc: BaseException, expect: str) -> tuple[str, str]:
    if isinstance(exc, CombexError):
        if expect and expect not in str(exc):
            return "unclear", f"an error for another reason: {str(exc)[:150]}"
        return "clear", f"{type(exc).__name__}: {str(exc)[:150]}"
    return "unclear", f"{type(exc).__name__}: {str(exc).splitlines()[0][:150] if str(exc) else ''}"


def classify_storage(fn: Callable[[Any], Any], url: Any, expect: str = "") -> tuple[str, str]:
    """Set up, then run the bad call; clear = a CombexError naming ``expect`` with the
    storage unchanged."""
    thunk = fn(url)
    before = _log_state(url) if url is not None else None
    try:
        thunk()
    except BaseException as exc:  # noqa: BLE001
        verdict = _fail(exc, expect)
        if verdict[0] == "clear" and url is not None and _log_state(url) != before:
            return "unclear", "an error, but the storage changed: " + verdict[1]
        return verdict
    return "silent", "accepted"


def classify_cli(fn: Callable[[Path], Any], tmp: Path, expect: str = "") -> tuple[str, str]:
    from combex.cli import main

    try:
        argv = fn(tmp)
        if callable(argv):
            argv()
    except BaseException as exc:  # noqa: BLE001
        return _fail(exc, expect)
    if not isinstance(argv, list):
        return "silent", "accepted"
    db = str(tmp / "lab.db")
    before = _log_state(db) if os.path.exists(db) else None
    out, err = io.StringIO(), io.StringIO()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(argv)
    except SystemExit as exc:  # argparse: usage error, exit 2
        code = exc.code
        if code == 2:
            return "clear", "usage: " + err.getvalue().strip().splitlines()[-1][:150]
        return "unclear", f"SystemExit {code}"
    except Exception as exc:  # noqa: BLE001
        return "unclear", f"{type(exc).__name__}: {str(exc).splitlines()[0][:150] if str(exc) else ''}"
    if code == 2:
        after = _log_state(db) if os.path.exists(db) else None
        if before is not None and after != before:
            return "unclear", "error, but the log changed: " + err.getvalue().strip()[:120]
        if expect not in err.getvalue():
            return "unclear", "an error for another reason: " + err.getvalue().strip()[:150]
        return "clear", err.getvalue().strip()[:150]
    return "silent", f"exit {code}: {out.getvalue().strip()[:100]}"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--no-postgresql", action="store_true")
    ap.add_argument("--verbose", action="store_true")
    args = ap.parse_args()
    backends: list[tuple[str, Callable[[], str]]] = []
    tmp_root = Path(tempfile.mkdtemp(prefix="combex-bad-"))
    counter = iter(range(10**6))
    backends.append(("SQLite", lambda: str(tmp_root / f"s{next(counter)}.db")))
    cluster = None
    if not args.no_postgresql:
        sys.path.insert(0, str(ROOT / "tests"))
        from _studies_helpers import PgCluster

        cluster = PgCluster()
        backends.append(("PostgreSQL", cluster.new_database))
    import warnings

    warnings.simplefilter("ignore")
    try:
        for label, fresh in backends:
            counts = {"clear": 0, "unclear": 0, "silent": 0, "n/a": 0}
            for cid, kind, fn, expect, new in CASES:
                if kind == "cli" and label != "SQLite":
                    continue
                if new and not hasattr(cs.Study, "correct"):
                    counts["n/a"] += 1
                    continue
                try:
                    if kind == "cli":
                        d = tmp_root / f"c{next(counter)}"
                        d.mkdir()
                        verdict, detail = classify_cli(fn, d, expect)
                    else:
                        verdict, detail = classify_storage(fn, fresh(), expect)
                except Exception as exc:  # noqa: BLE001 - the case's set-up failed (not the bad input)
                    counts["n/a"] += 1
                    print(f"  {label:<10} {cid:<28} n/a      set-up failed: {type(exc).__name__}: {exc}", flush=True)
                    continue
                counts[verdict] += 1
                if args.verbose or verdict != "clear":
                    print(f"  {label:<10} {cid:<28} {verdict:<8} {detail}", flush=True)
            total = sum(counts.values()) - counts["n/a"]
            print(f"{label}: {total} bad inputs: {counts['clear']} clear, {counts['unclear']} unclear, "
                  f"{counts['silent']} silently accepted ({counts['n/a']} more need an API this combex lacks)",
                  flush=True)
    finally:
        if cluster is not None:
            cluster.stop()


if __name__ == "__main__":
    main()

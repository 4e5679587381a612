"""Live studies: how bad inputs are answered (clear error / unclear error / silently accepted).

Every case gives one bad input to the study API or to ``combex study ...`` on a fresh
study and classifies the answer:

* ``clear``: a :class:`~combex.exceptions.CombexError` (the CLI: exit status 2 with a
  ``combex: error:`` line, or argparse's usage error) and nothing written;
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
# ``expect``: a fragment the error message must contain (an error for another reason is
# counted as unclear).
CASES: list[tuple[str, str, Callable[[Any], Any], str]] = []


def case(cid: str, kind: str = "storage", expect: str = "") -> Callable[[Callable[[Any], Any]], Callable[[Any], Any]]:
    def deco(f: Callable[[Any], Any]) -> Callable[[Any], Any]:
        CASES.append((cid, kind, f, expect))
        return f

    return deco


def _tell(value: Any) -> Callable[[str], Any]:
    def f(url: str) -> Any:
        s, t = _asked(url)
        return s.tell(t.id, value)

    return f


for _cid, _v in [("reward-str", "1"), ("reward-bool", True), ("reward-half-bernoulli", 0.5), ("reward-none", None),
                 ("reward-list", [1]), ("reward-nan", float("nan")), ("reward-inf", float("inf")),
                 ("reward-too-high", 2.0), ("reward-negative", -1.0), ("reward-numpy-bool", np.bool_(True)),
                 ("reward-complex", 1 + 0j), ("reward-bytes", b"1")]:
    case(_cid)(_tell(_v))


def _tell_id(tid: Any) -> Callable[[str], Any]:
    def f(url: str) -> Any:
        s, _ = _asked(url)
        return s.tell(tid, 1.0)

    return f


for _cid, _v in [("ticket-str", "abc"), ("ticket-2**31", 2**31), ("ticket-10**20", 10**20), ("ticket-negative", -1),
                 ("ticket-float", 1.5), ("ticket-bool", True), ("ticket-none", None), ("ticket-unknown", 999)]:
    case(_cid)(_tell_id(_v))


@case("tell-many-not-pairs")
def _(url: str) -> Any:
    s, t = _asked(url)
    return s.tell_many([t.id, 1.0])


@case("tell-many-empty")
def _(url: str) -> Any:
    s, _ = _asked(url)
    return s.tell_many([])


@case("tell-twice")
def _(url: str) -> Any:
    s, t = _asked(url)
    s.tell(t, 1.0)
    return s.tell(t, 1.0)


def _ask(n: Any) -> Callable[[str], Any]:
    def f(url: str) -> Any:
        return _study(url).ask(n=n)

    return f


for _cid, _v in [("ask-n-0", 0), ("ask-n-negative", -1), ("ask-n-20000", 20000), ("ask-n-str", "3"),
                 ("ask-n-float", 2.5), ("ask-n-bool", True)]:
    case(_cid)(_ask(_v))


def _create(**kw: Any) -> Callable[[str], Any]:
    def f(url: str) -> Any:
        return _study(url, **kw)

    return f


for _cid, _kw in [
    ("name-empty", {"name": ""}), ("name-300-chars", {"name": "x" * 300}), ("name-int", {"name": 123}),
    ("seed-negative", {"seed": -1}), ("seed-2**70", {"seed": 2**70}), ("seed-str", {"seed": "1"}),
    ("lease-zero", {"lease_seconds": 0}), ("lease-inf", {"lease_seconds": float("inf")}),
    ("lease-str", {"lease_seconds": "60"}), ("snapshot-every-zero", {"snapshot_every": 0}),
    ("solver-unknown", {"solver": "nope"}), ("solver-regret", {"solver": "sub-ts", "solver_params": {}}),
    ("solver-param-unknown", {"solver_params": {"K": 1, "bogus": 1}}),
    ("solver-delta-2", {"solver_params": {"K": 1, "delta": 2.0}}),
    ("solver-K-too-big", {"solver_params": {"K": 5}}),
]:
    case(_cid)(_create(**_kw))


def _problem(**kw: Any) -> Callable[[str], Any]:
    def f(url: str) -> Any:
        return _study(url, problem=cs.problem_spec(**kw))

    return f


case("noise-misspelled", expect="gausian")(_problem(n_arms=3, noise="gausian"))
case("noise-dict-misspelled", expect="gausian")(_problem(n_arms=3, noise={"kind": "gausian", "sigma": 2.0}))
for _cid, _kw in [
    ("noise-int", {"n_arms": 3, "noise": 3}),
    ("noise-sigma-negative", {"n_arms": 3, "noise": {"kind": "gaussian", "sigma": -1.0}}),
    ("n-arms-zero", {"n_arms": 0}), ("n-arms-str", {"n_arms": "3"}),
    ("labels-short", {"n_arms": 3, "labels": ["a"]}), ("labels-duplicate", {"n_arms": 3, "labels": ["a", "a", "b"]}),
    ("label-300-chars", {"n_arms": 3, "labels": ["a", "b", "c" * 300]}),
    ("reward-range-reversed", {"n_arms": 3, "reward_range": (1, 0)}),
    ("reward-range-str", {"n_arms": 3, "reward_range": ("a", "b")}),
    ("reward-range-nan", {"n_arms": 3, "reward_range": (float("nan"), 1)}),
    ("arm-type-bad", {"n_arms": 3, "arm_type": "team"}),
    ("dc-unknown", {"n_arms": 3, "arm_type": "mask", "decision_class": {"name": "nope", "params": {}}}),
    ("dc-k-too-big", {"n_arms": 3, "arm_type": "mask", "decision_class": {"name": "topk", "params": {"n": 3, "k": 9}}}),
]:
    case(_cid)(_problem(**_kw))


@case("problem-dict-bogus-key")
def _(url: str) -> Any:
    spec = dict(_bern(), bogus=1)
    return _study(url, problem=spec)


@case("storage-int")
def _(url: str) -> Any:
    return cs.create_study(storage=12345, name="s", problem=_bern(), solver="lucb", solver_params={"K": 1})


@case("load-missing")
def _(url: str) -> Any:
    return cs.load_study(storage=url, name="nope")


@case("tell-finished")
def _(url: str) -> Any:
    s = _study(url, solver_params={"K": 1, "delta": 0.5})
    while True:
        try:
            t = s.ask()
        except cs.StudyFinishedError:
            break
        s.tell(t, 1.0 if t.arm == 0 else 0.0)
    return s.tell(1, 1.0)


# -- foreign databases (SQLite files only)
@case("sqlite-other-program", "cli")
def _(tmp: Path) -> Any:
    path = tmp / "app.db"
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE invoices (id INTEGER PRIMARY KEY, total REAL)")
    con.commit()
    con.close()
    return _study(str(path))


@case("sqlite-optuna", "cli")
def _(tmp: Path) -> Any:
    path = tmp / "optuna.db"
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE studies (study_id INTEGER PRIMARY KEY, study_name VARCHAR(512))")
    con.execute("CREATE TABLE trials (trial_id INTEGER PRIMARY KEY, study_id INTEGER)")
    con.execute("CREATE TABLE alembic_version (version_num VARCHAR(32))")
    con.commit()
    con.close()
    return _study(str(path))


@case("sqlite-not-a-database", "cli")
def _(tmp: Path) -> Any:
    path = tmp / "notes.txt"
    path.write_text("hello, this is not a database\n" * 50)
    return _study(str(path))


# -- CLI
def _cli(*argv: str, setup: bool = True) -> Callable[[Path], Any]:
    def f(tmp: Path) -> Any:
        db = str(tmp / "lab.db")
        if setup:
            s = _study(db)
            s.ask()
        return [a.replace("DB", db).replace("TMP", str(tmp)) for a in argv]

    return f


for _cid, _argv in [
    ("cli-result-true", ("study", "tell", "DB", "--name", "s", "--result", "1=true")),
    ("cli-result-abc-id", ("study", "tell", "DB", "--name", "s", "--result", "abc=1")),
    ("cli-result-abc-value", ("study", "tell", "DB", "--name", "s", "--result", "1=abc")),
    ("cli-result-no-equals", ("study", "tell", "DB", "--name", "s", "--result", "1")),
    ("cli-ticket-10**20", ("study", "tell", "DB", "--name", "s", "--ticket", str(10**20), "--reward-sum", "1")),
    ("cli-ticket-without-reward", ("study", "tell", "DB", "--name", "s", "--ticket", "1")),
    ("cli-tell-nothing", ("study", "tell", "DB", "--name", "s")),
    ("cli-ask-n-20000", ("study", "ask", "DB", "--name", "s", "--n", "20000")),
    ("cli-ask-n-0", ("study", "ask", "DB", "--name", "s", "--n", "0")),
    ("cli-export-missing-folder", ("study", "export", "DB", "--name", "s", "--out", "TMP/missing/x.csv")),
    ("cli-status-missing-study", ("study", "status", "DB", "--name", "nope")),
]:
    case(_cid, "cli")(_cli(*_argv))

for _cid, _argv in [
    ("cli-problem-missing-file", ("--problem", "@TMP/missing.json")),
    ("cli-problem-unknown-key", ("--problem", '{"n_arms": 3, "bogus": 1}')),
    ("cli-problem-not-json", ("--problem", "{n_arms: 3")),
    ("cli-problem-list", ("--problem", "[3]")),
    ("cli-reward-range-ab", ("--n-arms", "3", "--reward-range", "a,b")),
    ("cli-reward-range-one", ("--n-arms", "3", "--reward-range", "1")),
    ("cli-n-arms-zero", ("--n-arms", "0")),
    ("cli-labels-short", ("--n-arms", "3", "--labels", "a,b")),
    ("cli-param-no-equals", ("--n-arms", "3", "--param", "K")),
    ("cli-param-bad-value", ("--n-arms", "3", "--param", "nu=abc")),
    ("cli-seed-negative", ("--n-arms", "3", "--seed", "-1")),
    ("cli-lease-zero", ("--n-arms", "3", "--lease", "0")),
    ("cli-dc-unknown", ("--n-arms", "3", "--arm-type", "mask", "--decision-class", "nope")),
    ("cli-no-problem", ()),
]:
    case(_cid, "cli")(_cli("study", "create", "DB", "--name", "t", "--solver", "lucb", "--param", "K=1", *_argv,
                           setup=False))

case("cli-noise-misspelled", "cli", expect="gausian")(
    _cli("study", "create", "DB", "--name", "t", "--solver", "lucb", "--param", "K=1", "--n-arms", "3", "--noise",
         "gausian", setup=False))
case("cli-dashboard-port-99999", "cli")(_cli("dashboard", "DB", "--port", "99999", setup=False))


# ---------------------------------------------------------------------------- running
def _log_state(url: Any) -> Any:
    try:
        st = cs.get_storage(url)
        out = [(r.name, r.n_told, r.status, tuple((t.id, t.state) for t in st.tickets(r.name)))
               for r in st.list_studies()]
        st.close()
        return out
    except Exception:  # noqa: BLE001 - a storage the case broke
        return None


def classify_storage(fn: Callable[[Any], Any], url: str, expect: str = "") -> tuple[str, str]:
    try:
        fn(url)
    except CombexError as exc:
        if expect not in str(exc):
            return "unclear", f"an error for another reason: {str(exc)[:150]}"
        return "clear", f"{type(exc).__name__}: {str(exc)[:150]}"
    except Exception as exc:  # noqa: BLE001
        return "unclear", f"{type(exc).__name__}: {str(exc).splitlines()[0][:150] if str(exc) else ''}"
    return "silent", "accepted"


def classify_cli(fn: Callable[[Path], Any], tmp: Path, expect: str = "") -> tuple[str, str]:
    from combex.cli import main

    try:
        argv = fn(tmp)
    except CombexError as exc:
        return "clear", f"{type(exc).__name__}: {str(exc)[:150]}"
    except Exception as exc:  # noqa: BLE001
        return "unclear", f"{type(exc).__name__}: {str(exc).splitlines()[0][:150] if str(exc) else ''}"
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
            counts = {"clear": 0, "unclear": 0, "silent": 0}
            for cid, kind, fn, expect in CASES:
                if kind == "cli" and label != "SQLite":
                    continue
                if kind == "cli":
                    d = tmp_root / f"c{next(counter)}"
                    d.mkdir()
                    verdict, detail = classify_cli(fn, d, expect)
                else:
                    verdict, detail = classify_storage(fn, fresh(), expect)
                counts[verdict] += 1
                if args.verbose or verdict != "clear":
                    print(f"  {label:<10} {cid:<28} {verdict:<8} {detail}", flush=True)
            total = sum(counts.values())
            print(f"{label}: {total} bad inputs: {counts['clear']} clear, {counts['unclear']} unclear, "
                  f"{counts['silent']} silently accepted", flush=True)
    finally:
        if cluster is not None:
            cluster.stop()


if __name__ == "__main__":
    main()

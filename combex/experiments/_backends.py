"""Where the runs of a sweep execute: in-process, local processes, or a Dask cluster.

Every backend maps a module-level function over a list of picklable items, in chunks,
and returns the results *in input order*; each run is a pure function of its item (its
seeds are derived from the root seed and the run's replicate index, never from the
order of execution), so the results do not depend on the backend or the number of jobs.

Workers limit BLAS / OpenMP to one thread: the matrices of a bandit run are tiny, and a
multi-threaded BLAS on them is tens of times slower (and oversubscribes the machine when
several processes run).
"""

from __future__ import annotations

import ctypes
import difflib
import os
import signal
import sys
import threading
import time
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from contextlib import contextmanager
from typing import Any, Callable, Iterator, Sequence

from .._validation import check_int
from ..exceptions import InvalidParameterError

__all__ = ["BACKENDS", "execute", "limit_blas_threads", "progress_bar"]

BACKENDS = ("serial", "processes", "dask")

_THREAD_VARS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "BLIS_NUM_THREADS",
                "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS")


def limit_blas_threads() -> None:
    """Limit BLAS / OpenMP pools of this process to one thread (idempotent).

    Sets the environment variables (effective for libraries loaded later) and, when
    ``threadpoolctl`` is installed, limits the pools already loaded.
    """
    for var in _THREAD_VARS:
        os.environ[var] = "1"
    try:
        from threadpoolctl import threadpool_limits  # guarded: without it the variables above apply
    except ImportError:  # pragma: no cover - threadpoolctl ships with scikit-learn/test extra
        return
    threadpool_limits(limits=1)


@contextmanager
def _blas_one_thread() -> Iterator[None]:
    """Limit BLAS to one thread within the block (in-process backend)."""
    try:
        from threadpoolctl import threadpool_limits  # guarded: without it the block runs unlimited
    except ImportError:  # pragma: no cover
        yield
        return
    with threadpool_limits(limits=1):
        yield


def progress_bar(total: int, desc: str, enabled: bool | None) -> Any:
    """A tqdm bar on stderr (``enabled=None``: only when stderr is a terminal); a no-op
    object when disabled or when tqdm is not installed."""
    if enabled is None:
        enabled = sys.stderr.isatty()
    if enabled:
        try:
            from tqdm.auto import tqdm  # tqdm is optional (the plots / sweep extras)

            return tqdm(total=total, desc=desc, unit="run", file=sys.stderr, dynamic_ncols=True)
        except ImportError:  # pragma: no cover - tqdm is in every extra that runs sweeps
            pass
    return _NoBar()


class _NoBar:
    def update(self, n: int = 1) -> None:
        pass

    def close(self) -> None:
        pass

    def set_postfix_str(self, s: str) -> None:
        pass


def _die_with_parent(parent_pid: int) -> None:
    """Make this worker process exit when ``parent_pid`` dies (SIGKILL, SIGTERM...).

    On Linux, ``prctl(PR_SET_PDEATHSIG, SIGKILL)``; elsewhere a daemon thread polling the
    parent pid once a second. Either way, a worker whose parent is already gone exits now.
    """
    armed = False
    if sys.platform.startswith("linux"):
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            armed = libc.prctl(1, int(signal.SIGKILL), 0, 0, 0) == 0  # 1 = PR_SET_PDEATHSIG
        except (OSError, AttributeError):  # pragma: no cover - no libc prctl
            armed = False
    if os.getppid() != parent_pid:  # the parent died before prctl took effect
        os._exit(1)
    if not armed:  # pragma: no cover - non-Linux

        def watch() -> None:
            while True:
                time.sleep(1.0)
                if os.getppid() != parent_pid:
                    os._exit(1)

        threading.Thread(target=watch, name="combex-parent-watchdog", daemon=True).start()


def _worker_init(parent_pid: int) -> None:
    """Process-pool initializer: one BLAS thread, exit with the parent, and leave Ctrl-C to
    the parent (which stops the pool; a worker interrupted mid-run would print a traceback)."""
    limit_blas_threads()
    _die_with_parent(parent_pid)
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _apply_chunk(fn: Callable[[Any], Any], chunk: Sequence[Any]) -> list[Any]:
    return [fn(item) for item in chunk]


def _apply_chunk_one_thread(fn: Callable[[Any], Any], chunk: Sequence[Any]) -> list[Any]:
    limit_blas_threads()
    return [fn(item) for item in chunk]


def _chunks(n: int, jobs: int, chunksize: int | None) -> list[range]:
    if chunksize is None:
        # small enough to balance the load and move the progress bar, large enough to
        # amortize the inter-process round trip of short runs
        chunksize = max(1, min(32, n // (8 * jobs) or 1))
    return [range(i, min(i + chunksize, n)) for i in range(0, n, chunksize)]


def execute(
    fn: Callable[[Any], Any],
    items: Sequence[Any],
    *,
    backend: str | None = None,
    jobs: int = 1,
    scheduler: Any = None,
    chunksize: int | None = None,
    progress: bool | None = False,
    desc: str = "runs",
    on_result: Callable[[int, Any], None] | None = None,
) -> list[Any]:
    """Map ``fn`` over ``items``; return the results in input order.

    Parameters
    ----------
    fn : callable
        A module-level (picklable) function of one item.
    items : sequence
        Picklable items.
    backend : {"serial", "processes", "dask"} or None
        ``None``: ``"dask"`` when ``scheduler`` is given, ``"processes"`` when
        ``jobs > 1``, else ``"serial"``.
    jobs : int
        Worker processes (``"processes"``), or workers of the LocalCluster started when
        ``backend="dask"`` and no ``scheduler`` is given.
    scheduler : str or distributed.Client, optional
        Address of an existing Dask scheduler (``"tcp://host:8786"``) or a connected
        client (``backend="dask"`` only).
    chunksize : int, optional
        Items per task (default: about ``len(items) / (8 jobs)``, at most 32).
    progress : bool or None
        Show a tqdm bar (None: when stderr is a terminal).
    on_result : callable, optional
        ``on_result(index, result)`` in the calling process as each result arrives (in
        completion order), e.g. to append it to the output file.
    """
    jobs = check_int(jobs, "jobs", owner="execute", low=1)
    if backend is None:
        backend = "dask" if scheduler is not None else ("processes" if jobs > 1 else "serial")
    if backend not in BACKENDS:
        close = difflib.get_close_matches(str(backend), BACKENDS, n=1)
        hint = f" Did you mean {close[0]!r}?" if close else ""
        raise InvalidParameterError(
            f"The 'backend' parameter must be one of {', '.join(map(repr, BACKENDS))}. "
            f"Got {backend!r} instead.{hint}"
        )
    if scheduler is not None and backend != "dask":
        raise InvalidParameterError(
            f"The 'scheduler' parameter needs backend='dask'. Got backend={backend!r} instead."
        )
    items = list(items)
    n = len(items)
    out: list[Any] = [None] * n
    if n == 0:
        return out
    bar = progress_bar(n, desc, progress)

    def deliver(rng_: range, results: list[Any]) -> None:
        for i, r in zip(rng_, results):
            out[i] = r
            if on_result is not None:
                on_result(i, r)
        bar.update(len(rng_))

    try:
        if backend == "serial" or (backend == "processes" and jobs == 1):
            with _blas_one_thread():
                for i, item in enumerate(items):
                    deliver(range(i, i + 1), [fn(item)])
        elif backend == "processes":
            _run_processes(fn, items, jobs, _chunks(n, jobs, chunksize), deliver)
        else:
            _run_dask(fn, items, jobs, scheduler, chunksize, deliver)
    finally:
        bar.close()
    return out


def _run_processes(fn: Callable[[Any], Any], items: list[Any], jobs: int, chunks: list[range],
                   deliver: Callable[[range, list[Any]], None]) -> None:
    workers = min(jobs, len(chunks))
    pool = ProcessPoolExecutor(max_workers=workers, initializer=_worker_init, initargs=(os.getpid(),))
    pending: dict[Any, range] = {}
    try:
        pending = {pool.submit(_apply_chunk, fn, [items[i] for i in ch]): ch for ch in chunks}
        while pending:
            done, _ = wait(pending, return_when=FIRST_COMPLETED)
            for fut in done:
                deliver(pending.pop(fut), fut.result())
    except BaseException:
        # Ctrl-C or an error: stop now (the runs in progress are lost, the finished ones
        # were delivered), instead of waiting for the running chunks to finish.
        _stop_pool(pool, pending)
        raise
    pool.shutdown(wait=True)


def _stop_pool(pool: ProcessPoolExecutor, pending: dict[Any, range]) -> None:
    """Cancel the queued chunks and terminate the workers now. The futures are cancelled
    by the pool's own manager thread (``cancel_futures``): cancelling them here as well
    races with it (``InvalidStateError`` printed from that thread)."""
    procs = list((getattr(pool, "_processes", None) or {}).values())
    pool.shutdown(wait=False, cancel_futures=True)
    for proc in procs:
        if proc.is_alive():
            proc.terminate()
    for proc in procs:
        proc.join(timeout=5)
    pool.shutdown(wait=True)


def _run_dask(fn: Callable[[Any], Any], items: list[Any], jobs: int, scheduler: Any, chunksize: int | None,
              deliver: Callable[[range, list[Any]], None]) -> None:
    try:
        from distributed import Client, LocalCluster, as_completed  # dask is optional (the dask extra)
    except ImportError:  # pragma: no cover - depends on the install
        raise ImportError(
            "The Dask backend needs dask.distributed: pip install 'combex[dask]'."
        ) from None
    own_client = own_cluster = None
    if scheduler is None:
        own_cluster = LocalCluster(n_workers=jobs, threads_per_worker=1, processes=True,
                                   dashboard_address=None)
        client = own_client = Client(own_cluster)
    elif isinstance(scheduler, str):
        client = own_client = Client(scheduler)
    else:
        client = scheduler
    try:
        n_workers = max(1, len(client.scheduler_info().get("workers", {})) or jobs)
        chunks = _chunks(len(items), n_workers, chunksize)
        futures = [client.submit(_apply_chunk_one_thread, fn, [items[i] for i in ch], pure=False)
                   for ch in chunks]
        index = {f.key: ch for f, ch in zip(futures, chunks)}
        try:
            for fut in as_completed(futures):
                deliver(index[fut.key], fut.result())
        except BaseException:
            client.cancel(futures)
            raise
    finally:
        if own_client is not None:
            own_client.close()
        if own_cluster is not None:
            own_cluster.close()

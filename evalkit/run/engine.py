"""Engines that score chunks elsewhere: :class:`DaskEngine` sends them to a ``dask.distributed`` cluster.

``evalkit score DATA -o OUT --engine dask --scheduler tcp://HOST:8786`` (an existing cluster) or
``--scheduler local:N`` (a ``LocalCluster`` of N worker processes, one thread each, for this machine).

How a run stays correct on a cluster
------------------------------------
* Chunks are scored by the same function as locally (:func:`evalkit.run.stream.score_chunk`, which calls
  :func:`evalkit.run.runner.score`); the driver writes the returned parts in input order, so the final bytes equal
  the local run's.
* Each worker process loads spaCy, the encoders and the grounding model once: their loaders are cached per
  process, and a worker process lives for the whole run.
* At most ``window`` chunks are in flight (default: two per worker thread), so the driver's memory holds a
  bounded number of chunks whatever the input size.
* A worker that dies takes only its unfinished chunks with it: the scheduler re-runs them elsewhere, and every
  finished chunk is already on the driver's disk.
* Judged metrics: one cluster-wide ``distributed.Semaphore`` lets one chunk at a time call the judge, so the
  number of HTTP calls in flight stays the judge's ``concurrency`` across the cluster; the workers share the
  judge's on-disk SQLite cache (``judge.cache`` must be a path every worker can read and write, e.g. on this
  machine or a shared filesystem), so a re-run makes zero HTTP calls.

``dask`` is imported here only, when an engine is created; nothing else in evalkit needs it.
"""
from __future__ import annotations

from collections import deque
from typing import Any, Callable, Iterable, Iterator

from evalkit.run.stream import ChunkResult, LocalEngine

INSTALL_HINT = "the dask engine needs dask[distributed]: pip install 'evalkit[dask]'"
JUDGE_SEMAPHORE = "evalkit-judge"


def _scored_on_worker(fn: Callable[..., ChunkResult], args: tuple) -> ChunkResult:
    """Runs on a worker: score one chunk, holding the cluster-wide judge lease when the chunk calls the judge."""
    job = args[-1]
    if not getattr(job, "judged", False):
        return fn(*args)
    from distributed import Semaphore

    with Semaphore(max_leases=1, name=JUDGE_SEMAPHORE):
        return fn(*args)


class DaskEngine:
    """Score chunks on a dask.distributed cluster; results come back in input order.

    Parameters
    ----------
    scheduler : ``tcp://HOST:PORT`` of a running scheduler, or ``local:N`` for a LocalCluster of N processes.
    window : chunks in flight at once (default: 2 per worker thread, at least 2).
    timeout : seconds to wait for the scheduler.
    """

    name = "dask"

    def __init__(self, scheduler: str, *, window: int | None = None, timeout: float = 30.0):
        if not scheduler:
            raise ValueError("--engine dask needs --scheduler tcp://HOST:PORT or local:N")
        self.scheduler, self.window, self.timeout = scheduler, window, timeout
        self.client: Any = None
        self._cluster: Any = None

    def __enter__(self) -> "DaskEngine":
        try:
            from distributed import Client, LocalCluster
        except ImportError as e:
            raise RuntimeError(INSTALL_HINT) from e
        if self.scheduler.startswith("local:"):
            n = _local_workers(self.scheduler)
            self._cluster = LocalCluster(n_workers=n, threads_per_worker=1, processes=True,
                                         dashboard_address=":0")  # any free port: never clashes
            self.client = Client(self._cluster, timeout=self.timeout)
        else:
            self.client = Client(self.scheduler, timeout=self.timeout)
        return self

    def __exit__(self, *exc) -> bool:
        if self.client is not None:
            self.client.close()
        if self._cluster is not None:
            self._cluster.close()
        self.client = self._cluster = None
        return False

    def _window(self) -> int:
        if self.window:
            return self.window
        threads = sum(self.client.nthreads().values()) or 1
        return max(2, 2 * threads)

    def map_ordered(self, fn: Callable[..., ChunkResult], tasks: Iterable[tuple]) -> Iterator[ChunkResult]:
        """``fn(*args)`` for every task, on the cluster, yielded in the tasks' order."""
        if self.client is None:
            with self:
                yield from self.map_ordered(fn, tasks)
            return
        pending: deque = deque()
        window = self._window()
        for args in tasks:
            pending.append(self.client.submit(_scored_on_worker, fn, args, pure=False, retries=2))
            while len(pending) >= window:
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()


def _local_workers(scheduler: str) -> int:
    text = scheduler.split(":", 1)[1]
    if not text.isdigit() or int(text) < 1:
        raise ValueError(f"--scheduler {scheduler!r}: expected local:N with N >= 1 worker processes")
    return int(text)


def make_engine(engine: Any = None, scheduler: str | None = None) -> Any:
    """An engine from its name: None or 'local' (this process), 'dask' (with ``scheduler``), or an engine object."""
    if engine is None or engine == "local":
        if scheduler:
            raise ValueError("--scheduler applies to --engine dask only")
        return LocalEngine()
    if engine == "dask":
        return DaskEngine(scheduler or "")
    if hasattr(engine, "map_ordered"):
        return engine
    raise ValueError(f"unknown engine {engine!r}; expected 'local' or 'dask'")

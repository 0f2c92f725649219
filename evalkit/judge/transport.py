"""A deadline for a whole HTTP call: connect, send, wait and read together, not each read alone.

httpx's timeouts bound each network operation: a server that trickles one byte every 2 s never trips a 5 s read
timeout and holds a call for as long as it likes. :func:`install_deadline` wraps the client's network backend so
that every connect, read and write of a call made inside :func:`deadline` waits at most the time left until the
call's deadline, and fails with the matching httpx timeout once it has passed (retried like any timeout).

The deadline is per thread (a sync httpx call runs in the calling thread), so concurrent calls on one client keep
their own deadlines; a connection reused from the pool is bounded too, since the bound is applied per operation.

Examples
--------
>>> import httpx
>>> client = httpx.Client()
>>> install_deadline(client)
True
>>> with deadline(5.0):
...     remaining() <= 5.0
True
>>> remaining() is None  # outside a call: no deadline
True
"""
from __future__ import annotations

import threading
import time
from contextlib import contextmanager
from typing import Any, Iterator

import httpcore

_local = threading.local()


@contextmanager
def deadline(seconds: float) -> Iterator[None]:
    """Bound every network operation made by this thread inside the block to end ``seconds`` from now."""
    before = getattr(_local, "deadline", None)
    _local.deadline = (time.monotonic() + seconds, seconds)
    try:
        yield
    finally:
        _local.deadline = before


def remaining() -> float | None:
    """Seconds left to this thread's deadline (<= 0 once passed); None outside :func:`deadline`."""
    d = getattr(_local, "deadline", None)
    return None if d is None else d[0] - time.monotonic()


def _expired(kind: type[Exception]) -> Exception:
    seconds = _local.deadline[1]
    return kind(f"no complete reply within {seconds:g}s (judge.timeout bounds the whole call: connect, wait and read)")


def _bounded(timeout: float | None, kind: type[Exception]) -> float | None:
    """``timeout`` shortened to the time left; raises ``kind`` when none is left."""
    left = remaining()
    if left is None:
        return timeout
    if left <= 0:
        raise _expired(kind)
    return left if timeout is None else min(timeout, left)


def _call(kind: type[Exception], fn, *args: Any, timeout: float | None, **kw: Any) -> Any:
    try:
        return fn(*args, timeout=_bounded(timeout, kind), **kw)
    except httpcore.TimeoutException:
        left = remaining()
        if left is not None and left <= 0:  # cut short by the deadline: say so, not just "timed out"
            raise _expired(kind) from None
        raise


class _DeadlineStream(httpcore.NetworkStream):
    def __init__(self, inner: httpcore.NetworkStream):
        self._inner = inner

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return _call(httpcore.ReadTimeout, self._inner.read, max_bytes, timeout=timeout)

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        _call(httpcore.WriteTimeout, self._inner.write, buffer, timeout=timeout)

    def close(self) -> None:
        self._inner.close()

    def start_tls(self, ssl_context, server_hostname: str | None = None,
                  timeout: float | None = None) -> httpcore.NetworkStream:
        return _DeadlineStream(_call(httpcore.ConnectTimeout, self._inner.start_tls, ssl_context, server_hostname,
                                     timeout=timeout))

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


class _DeadlineBackend(httpcore.NetworkBackend):
    def __init__(self, inner: httpcore.NetworkBackend):
        self._inner = inner

    def connect_tcp(self, host: str, port: int, timeout: float | None = None, local_address: str | None = None,
                    socket_options=None) -> httpcore.NetworkStream:
        return _DeadlineStream(_call(httpcore.ConnectTimeout, self._inner.connect_tcp, host, port, timeout=timeout,
                                     local_address=local_address, socket_options=socket_options))

    def connect_unix_socket(self, path: str, timeout: float | None = None,
                            socket_options=None) -> httpcore.NetworkStream:
        return _DeadlineStream(_call(httpcore.ConnectTimeout, self._inner.connect_unix_socket, path, timeout=timeout,
                                     socket_options=socket_options))

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)


def install_deadline(client: Any) -> bool:
    """Make ``client`` (an ``httpx.Client``) honour :func:`deadline`; False when its transport has no
    httpcore pool to wrap (a custom transport), in which case only httpx's per-operation timeouts apply."""
    installed = False
    for transport in (getattr(client, "_transport", None), *getattr(client, "_mounts", {}).values()):
        pool = getattr(transport, "_pool", None)
        backend = getattr(pool, "_network_backend", None)
        if backend is None:
            continue
        if not isinstance(backend, _DeadlineBackend):
            pool._network_backend = _DeadlineBackend(backend)
        installed = installed or transport is client._transport
    return installed

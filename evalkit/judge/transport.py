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

import logging
import os
import threading
import time
from contextlib import contextmanager
from typing import Any, Callable, Iterator

import httpcore

from evalkit.base.config import redact_secrets

log = logging.getLogger("evalkit")

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


# ---------------------------------------------------------------------------------------------------------
# the judge's HTTP: errors, the transport
class JudgeError(RuntimeError):
    """A judge call failed for good (after retries, or after the JSON repair attempt). Its message never holds a
    credential: a URL's password and credential-like query values are hidden (:func:`redact_secrets`), since the
    message is printed, logged and stored with a row's error."""

    def __init__(self, message: Any = "", *args: Any):
        super().__init__(redact_secrets(message) if isinstance(message, str) else message, *args)


def reply_malformed(message: str) -> JudgeError:
    """The error for a judge that answered, twice, but not with the reply the request asked for (the shape its
    check reads): ``malformed`` tells a caller it may ask the question another way (in smaller pieces)."""
    e = JudgeError(message)
    e.malformed = True
    return e


class JudgeUnavailable(JudgeError):
    """The endpoint cannot be used at all (unreachable, key refused, model unknown): the run stops."""


class JudgeRejected(JudgeError):
    """The server refused this request (a 4xx other than 429): sending it again would fail again."""

    def __init__(self, message: str, status: int):
        super().__init__(message)
        self.status = status


class FormatRejected(JudgeRejected):
    """The server rejected a request whose response format ``auto`` may still change: the next mode is tried."""


# what "auto" tries, in order; a 400/422 to one moves to the next

class JudgeTransport:
    """HTTP to one OpenAI-compatible endpoint: the client (the API key from the environment, never stored), at
    most ``concurrency`` calls in flight, a deadline for each whole call, retries of 429/5xx and timeouts with
    backoff and ``Retry-After``, and the preflight. ``count(metric, **increments)`` receives the per-metric
    counters (http_calls, retries) of whoever owns the transport."""

    def __init__(self, config: Any, count: Callable[..., None]):
        import httpx

        self.config, self._count = config, count
        key = os.environ.get(config.api_key_env, "")
        headers = {"Content-Type": "application/json"}
        if key:
            headers["Authorization"] = f"Bearer {key}"
        self.http = httpx.Client(base_url=config.base_url.rstrip("/"), headers=headers,
                                 timeout=httpx.Timeout(config.timeout))
        # judge.timeout bounds a whole call (connect, wait, read), not each read
        self.whole_call_deadline = install_deadline(self.http)
        self._slots = threading.BoundedSemaphore(config.concurrency)  # shared by every metric using this client

    def post(self, payload: dict[str, Any], metric: str) -> dict[str, Any]:
        """One chat-completions call, retried; the reply's JSON body. Rejections raise :class:`JudgeRejected`."""
        import httpx

        cfg = self.config
        last = ""
        for attempt in range(cfg.max_retries + 1):
            if attempt:
                self._count(metric, retries=1)
            r = None
            try:
                self._count(metric, http_calls=1)
                with self._slots, deadline(cfg.timeout):  # the clock starts once a slot is free
                    r = self.http.post("/chat/completions", json=payload)
            except httpx.ConnectError as e:  # nothing listens there: retrying only delays the error
                raise JudgeUnavailable(f"cannot reach the judge at {self.config.base_url}: {e}") from None
            except (httpx.TimeoutException, httpx.TransportError) as e:
                last = f"{type(e).__name__}: {e}"
            else:
                if r.status_code == 200:
                    try:
                        return r.json()
                    except ValueError:
                        raise JudgeError(f"judge endpoint returned non-JSON HTTP body: {r.text[:200]!r}") from None
                last = f"HTTP {r.status_code}: {r.text[:200]}"
                if r.status_code != 429 and r.status_code < 500:  # 400, 401, 403, 404: the same request fails again
                    raise JudgeRejected(f"judge request rejected ({last})", r.status_code)
                if r.status_code == 500 and "response_format" in r.text:  # a validation error, not a hiccup
                    raise JudgeRejected(f"judge request rejected ({last})", r.status_code)
            if attempt < cfg.max_retries:
                self._sleep_before_retry(r, attempt, last, metric)
        raise JudgeError(f"judge call failed after {cfg.max_retries + 1} attempts; last error: {last}")

    def _sleep_before_retry(self, response, attempt: int, last: str, metric: str) -> None:
        cfg = self.config
        retry_after = response.headers.get("retry-after") if response is not None else None
        if retry_after and retry_after.replace(".", "", 1).isdigit():
            delay = min(float(retry_after), cfg.max_backoff)
        else:
            delay = min(cfg.backoff * 2 ** attempt, cfg.max_backoff)
        log.warning("judge %s: %s; retry %d of %d in %.1fs", metric or "-", last[:120], attempt + 1, cfg.max_retries,
                    delay)
        time.sleep(delay)

    def preflight(self) -> str:
        """One cheap request before scoring: ``GET /models`` (checks the model is served), falling back to a
        one-token chat call. 429 and 5xx are retried with the backoff of any call (``max_retries``, ``backoff``,
        ``Retry-After``); a server that does not answer within ``min(timeout, 10)`` seconds is not waited for
        again. Returns how it checked; raises :class:`JudgeUnavailable` with one line that tells a dead endpoint,
        a refused key, an unknown model and a failing server apart."""
        import httpx

        url, model, wait = self.config.base_url, self.config.model, min(self.config.timeout, 10.0)
        try:
            r = self._preflight_request("GET", "/models", wait)
            if r.status_code == 200:  # reachable; the model is checked when the server lists its models
                ids = _model_ids(r)
                if ids and model not in ids:
                    raise JudgeUnavailable(f"model {model!r} is not served by the judge at {url} (it serves: "
                                           f"{', '.join(ids[:10])}); set EVALKIT_JUDGE_MODEL or judge.model")
                return "models" if ids else "models (none listed)"
            if r.status_code in (401, 403):
                raise JudgeUnavailable(self._refused(r))
            # a failing /models (some gateways answer 5xx for a route they do not serve) is not the verdict: the
            # one-token chat call below is, as it is for a 404
            r = self._preflight_request("POST", "/chat/completions", wait, json={
                "model": model, "messages": [{"role": "user", "content": "ping"}], "max_tokens": 1, "temperature": 0})
        except httpx.ConnectError as e:
            raise JudgeUnavailable(f"cannot reach the judge at {url}: {e} (is the server running? check "
                                   f"EVALKIT_JUDGE_BASE_URL)") from None
        except httpx.TimeoutException:
            raise JudgeUnavailable(f"the judge at {url} did not answer within {wait:g}s") from None
        except httpx.TransportError as e:
            raise JudgeUnavailable(f"the judge at {url} broke off the connection ({type(e).__name__}: {e})") from None
        if r.status_code in (401, 403):
            raise JudgeUnavailable(self._refused(r))
        if _retryable(r.status_code):
            raise JudgeUnavailable(self._failing(r, "a one-token chat request"))
        if r.status_code >= 400:
            raise JudgeUnavailable(f"the judge at {url} rejected a one-token request for model {model!r} "
                                   f"(HTTP {r.status_code}: {r.text[:160]}); check the base_url (it ends in /v1) "
                                   f"and the model name")
        return "chat"

    def _preflight_request(self, method: str, path: str, wait: float, **kw: Any):
        """One preflight request, retried on 429/5xx and broken connections like any call; the last response is
        returned."""
        import httpx

        for attempt in range(self.config.max_retries + 1):
            try:
                with deadline(wait):
                    r = self.http.request(method, path, timeout=wait, **kw)
            except (httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError) as e:
                # a kept-alive connection the server had closed (or a reply broken off): a fresh connection may
                # well succeed, as in any call; nothing listening (ConnectError) and a hang are not retried
                if attempt == self.config.max_retries:
                    raise
                self._sleep_before_retry(None, attempt, f"{type(e).__name__}: {e}", "preflight")
                continue
            if not _retryable(r.status_code) or attempt == self.config.max_retries:
                return r
            self._sleep_before_retry(r, attempt, f"HTTP {r.status_code}: {r.text[:200]}", "preflight")
        raise AssertionError("unreachable")  # pragma: no cover

    def _failing(self, r, what: str) -> str:
        tries = self.config.max_retries + 1
        return (f"the judge at {self.config.base_url} answered {what} with HTTP {r.status_code} {tries} time"
                f"{'s' if tries > 1 else ''} in a row ({r.text[:160]}); the server is overloaded or failing: check "
                f"its log, or retry later (judge.max_retries, judge.backoff)")

    def _refused(self, r) -> str:
        key = self.config.api_key_env
        state = "is set" if os.environ.get(key) else "is not set"
        return (f"the judge at {self.config.base_url} refused the request (HTTP {r.status_code}): check the API key "
                f"in {key} ({state})")

    def close(self) -> None:
        self.http.close()


def _retryable(status: int) -> bool:
    """429 and 5xx: the same request may succeed later."""
    return status == 429 or status >= 500


def _model_ids(r) -> list[str]:
    """The model ids of an OpenAI-style ``/models`` reply (empty when the body says nothing usable)."""
    try:
        data = r.json().get("data") or []
        return [str(m["id"]) for m in data if isinstance(m, dict) and "id" in m]
    except (ValueError, AttributeError, TypeError):
        return []

"""The judge: a prompt in, parsed JSON (and usage) out, through any OpenAI-compatible chat-completions endpoint.

Configured by ``base_url``, ``model`` and an API key read from the environment (never written to disk):
``EVALKIT_JUDGE_BASE_URL``, ``EVALKIT_JUDGE_MODEL``, ``EVALKIT_JUDGE_API_KEY``, or ``judge:`` in the config.
Temperature 0 by default; every call is cached (:mod:`evalkit.judge.cache`; the key names the endpoint, so
the same model name on another server does not replay this one's answers, unless ``cache_scope: model``).
Before scoring, :meth:`OpenAIJudge.preflight` makes one cheap request and tells a dead endpoint, a wrong key
and an unknown model apart (:class:`JudgeUnavailable`). ``timeout`` bounds a whole call (connect, wait and
read together: a server that trickles its reply byte by byte times out too). 429, 5xx and timeouts are retried
with exponential backoff and a warning line each (429 and 5xx in the preflight too); a refused connection,
401, 403 and 404 are not retried; after ``circuit_breaker`` failed calls in a row the judge stops calling and
every remaining row says why. A reply
that is not the expected JSON gets one repair attempt, then :class:`JudgeError`. Calls, cache hits,
retries, tokens and the share of first replies that were valid JSON of the expected shape are counted per
metric; at most ``concurrency`` HTTP calls are in flight per client, whichever metric (or ragas) makes them.

Structured outputs (``response_format``): ``json_schema`` sends the reply's JSON schema (OpenAI's
``{"type": "json_schema", "json_schema": {"name", "schema", "strict": true}}``; OpenAI and vLLM accept it),
``json_object_schema`` sends it the way llama-cpp-python takes it (``{"type": "json_object", "schema": ...}``),
``json_object`` asks for any JSON object, ``none`` relies on the prompt. ``auto`` (the default) tries them in
that order: when the server rejects a request (HTTP 400/422, or a 500 whose body names ``response_format``, as
llama-cpp-python 0.3.36 answers) and the next mode succeeds, the client keeps the next mode for the rest of its
life and warns once. The mode an answer was obtained with is part of its cache key
and of :meth:`OpenAIJudge.signature`.

Repeats (``repeats: k``): a judged metric asks every question k times through :meth:`OpenAIJudge.for_repeat`;
repeat r sends ``seed + r`` and is cached under its index, so a re-run makes zero calls.
"""
from __future__ import annotations

import json
import logging
import os
import re
import threading
import time
from collections import Counter, defaultdict
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Mapping, Protocol

from ..config import JudgeConfig  # judge settings are configuration data: they live (and are validated) there
from .cache import JudgeCache, request_key
from .costs import call_cost, price_for
from .prompts import Prompt
from .transport import deadline, install_deadline

SYSTEM = "You are a careful evaluator. Reply with a single JSON object and nothing else."
log = logging.getLogger("evalkit")


class JudgeError(RuntimeError):
    """A judge call failed for good (after retries, or after the JSON repair attempt)."""


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
FALLBACK = {"json_schema": "json_object_schema", "json_object_schema": "json_object", "json_object": "none"}
FALLBACK_STATUS = (400, 422, 500)  # 500 only as raised for a body naming response_format (see _post_with_retries)
MODES = ("json_schema", "json_object_schema", "json_object", "none")


class JudgeNotConfigured(RuntimeError):
    """No judge is configured; the message says how to configure one."""


NOT_CONFIGURED = ("no LLM judge configured: set EVALKIT_JUDGE_BASE_URL and EVALKIT_JUDGE_MODEL (and "
                  "EVALKIT_JUDGE_API_KEY if the endpoint needs one), or a `judge:` section with base_url and model "
                  "in the config")


@dataclass(frozen=True)
class JudgeReply:
    data: dict[str, Any]
    usage: Mapping[str, int]
    cached: bool


@dataclass(frozen=True)
class JudgeRequest:
    """One question for the judge: the user message, the name and JSON schema of the reply (sent as a structured
    output request), ``check`` (None when a parsed reply has the expected shape, else what is wrong) and
    ``expect`` (how the repair request describes the expected reply)."""

    text: str
    name: str
    schema: Mapping[str, Any]
    check: Callable[[Any], str | None]
    expect: str = field(default="")

    @classmethod
    def from_prompt(cls, prompt: Prompt, variables: Mapping[str, Any]) -> "JudgeRequest":
        return cls(prompt.render(**variables), prompt.name, prompt.json_schema(), prompt.check,
                   f"with keys {dict(prompt.returns)}")


class Judge(Protocol):
    """What a judged metric needs: JSON for a prompt, and a signature for the run's metadata."""

    def complete(self, prompt: Prompt, variables: Mapping[str, Any], *, metric: str = "") -> JudgeReply: ...

    def signature(self) -> str: ...


class OpenAIJudge:
    """An OpenAI-compatible chat-completions judge (OpenAI, vLLM, Ollama, llama.cpp server, ...).

    Examples
    --------
    >>> from evalkit.testing import ScriptedJudgeServer
    >>> from evalkit.judge.prompts import load_prompts
    >>> with ScriptedJudgeServer() as srv:
    ...     j = OpenAIJudge(JudgeConfig(base_url=srv.url, model="scripted", cache_path=None))
    ...     reply = j.complete(load_prompts()["answer_correct"], {"question": "Q?", "reference": "604", "answer": "604"})
    >>> reply.data["verdict"], srv.requests
    ('CORRECT', 1)
    """

    backend = "openai-chat"

    def __init__(self, config: JudgeConfig, cache: JudgeCache | None = None):
        if not config.configured:
            raise JudgeNotConfigured(NOT_CONFIGURED)
        import httpx

        self.config = config
        self.cache = cache if cache is not None else JudgeCache(config.cache_path)
        key = os.environ.get(config.api_key_env, "")
        headers = {"Content-Type": "application/json"}
        if key:
            headers["Authorization"] = f"Bearer {key}"
        self._http = httpx.Client(base_url=config.base_url.rstrip("/"), headers=headers,
                                  timeout=httpx.Timeout(config.timeout))
        # judge.timeout bounds a whole call (connect, wait, read), not each read: see evalkit.judge.transport
        self.whole_call_deadline = install_deadline(self._http)
        self._lock = threading.Lock()
        self._slots = threading.BoundedSemaphore(config.concurrency)  # shared by every metric using this client
        self._failures_in_a_row, self._last_failure = 0, ""
        self._mode = "json_schema" if config.response_format == "auto" else config.response_format
        self.stats: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
        self.prompts_used: dict[str, str] = {}
        self.modes_used: Counter = Counter()  # response_format of every answer returned (cached ones too)
        self._flights: dict[str, threading.Event] = {}  # questions being asked now, so a duplicate waits for them

    # -- bookkeeping ---------------------------------------------------------
    def _count(self, metric: str, **inc: float) -> None:
        with self._lock:
            for k, v in inc.items():
                self.stats[metric or "-"][k] += v

    def usage(self) -> dict[str, dict[str, float]]:
        """Per metric: http_calls, cache_hits, retries, failures, repairs, prompt_tokens, completion_tokens,
        first_replies (answers to a first request), valid_json (of those, parsed and of the expected shape) and
        ``valid_json_rate = valid_json / first_replies`` (absent before any reply); ``cost`` (currency units of
        ``judge.prices``) when the prices name this model."""
        with self._lock:
            out = {m: dict(v) for m, v in self.stats.items()}
        price = price_for(self.config.prices, self.config.model)
        for u in out.values():
            if u.get("first_replies"):
                u["valid_json_rate"] = u.get("valid_json", 0.0) / u["first_replies"]
            if price is not None:
                u["cost"] = call_cost(u.get("prompt_tokens", 0.0), u.get("completion_tokens", 0.0), price)
        return out

    @property
    def response_format(self) -> str:
        """The mode new requests use now (after any fallback this client made)."""
        with self._lock:
            return self._mode

    def signature(self) -> str:
        """``openai-chat:<model>@t<temperature>,rf=<modes used>``, plus ``,k=<repeats>,seed=<seed>`` with repeats or a
        seed. ``rf=`` names the configured mode until an answer was returned, then every mode that returned one
        (joined by ``/``); no ``|`` or ``+``, which separate the fields of the run's signature line."""
        cfg = self.config
        with self._lock:
            modes = "/".join(sorted(self.modes_used)) or cfg.response_format
        out = f"{self.backend}:{cfg.model}@t{cfg.temperature:g},rf={modes}"
        if cfg.repeats > 1 or cfg.seed is not None:
            out += f",k={cfg.repeats},seed={cfg.seed or 0}"
        return out

    def for_repeat(self, repeat: int) -> "RepeatJudge":
        """This client asking as repeat ``repeat`` (seed ``seed + repeat``, cached under that index)."""
        return RepeatJudge(self, repeat)

    # -- HTTP ------------------------------------------------------------------
    def _post(self, payload: dict[str, Any], metric: str, may_fall_back: bool = False) -> dict[str, Any]:
        """One chat-completions call with retries; the circuit breaker counts calls that failed for good (a
        structured-output request the server rejects, when another mode is left to try, is not a failure)."""
        self._check_circuit()
        try:
            body = self._post_with_retries(payload, metric)
        except JudgeRejected as e:
            if may_fall_back and e.status in FALLBACK_STATUS:
                raise FormatRejected(str(e), e.status) from None
            self._count(metric, failures=1)
            with self._lock:
                self._failures_in_a_row += 1
                self._last_failure = str(e)
            raise
        except JudgeError as e:
            self._count(metric, failures=1)
            with self._lock:
                self._failures_in_a_row += 1
                self._last_failure = str(e)
            raise
        with self._lock:
            self._failures_in_a_row = 0
        return body

    def _check_circuit(self) -> None:
        with self._lock:
            n, last = self._failures_in_a_row, self._last_failure
        if n >= self.config.circuit_breaker:
            raise JudgeUnavailable(f"the judge failed {n} calls in a row, so evalkit stopped calling it "
                                   f"(judge.circuit_breaker); last error: {last}")

    def _post_with_retries(self, payload: dict[str, Any], metric: str) -> dict[str, Any]:
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
                    r = self._http.post("/chat/completions", json=payload)
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
                    r = self._http.request(method, path, timeout=wait, **kw)
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

    @staticmethod
    def _parse(content: str) -> Any:
        text = content.strip()
        fence = re.search(r"```(?:json)?\s*(.*?)```", text, re.S)
        if fence:
            text = fence.group(1).strip()
        try:
            return json.loads(text)
        except json.JSONDecodeError:
            start, end = text.find("{"), text.rfind("}")
            if start >= 0 and end > start:
                return json.loads(text[start:end + 1])
            raise

    def _content(self, body: dict[str, Any], metric: str) -> str:
        try:
            content = body["choices"][0]["message"]["content"]
        except (KeyError, IndexError, TypeError):
            raise JudgeError(f"judge reply has no choices[0].message.content: {json.dumps(body)[:200]}") from None
        usage = body.get("usage") or {}
        self._count(metric, prompt_tokens=usage.get("prompt_tokens", 0),
                    completion_tokens=usage.get("completion_tokens", 0))
        return content or ""

    # -- public --------------------------------------------------------------
    def complete(self, prompt: Prompt, variables: Mapping[str, Any], *, metric: str = "",
                 repeat: int | None = None) -> JudgeReply:
        """Render ``prompt`` with ``variables``, ask the judge, return the validated JSON object."""
        with self._lock:
            self.prompts_used[prompt.name] = prompt.sha256
        return self.ask(JudgeRequest.from_prompt(prompt, variables), metric=metric, repeat=repeat)

    def ask(self, request: JudgeRequest, *, metric: str = "", repeat: int | None = None) -> JudgeReply:
        """Ask ``request`` (cached; with the response format this client uses, falling back under ``auto``).

        ``repeat`` (None: not a repeated call) sends ``seed + repeat`` and keys the cache on the index."""
        messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": request.text}]
        chain = self._fallback_chain(self.response_format)
        hit = self._cached(messages, request, repeat, chain, metric)
        if hit is not None:
            return hit
        flight = self._key(messages, self._params(chain[0], request, repeat), repeat)
        with self._in_flight(flight):
            # looked up again: another thread may have asked the same question meanwhile (and this one waited)
            hit = self._cached(messages, request, repeat, chain, metric)
            if hit is not None:
                return hit
            for mode in chain:  # the last mode's rejection is an error like any other
                params = self._params(mode, request, repeat)
                try:
                    data, usage = self._answer(messages, params, request, metric, may_fall_back=mode != chain[-1])
                    break
                except FormatRejected:
                    continue
            self._fell_back(mode)
            self._used(mode)
            self.cache.put(self._key(messages, params, repeat), {"data": data, "usage": usage})
        return JudgeReply(data, usage, False)

    def _cached(self, messages: list[dict], request: JudgeRequest, repeat: int | None, chain: list[str],
                metric: str) -> JudgeReply | None:
        for tried in chain:  # under auto, an answer cached after a fallback is replayed
            hit = self.cache.get(self._key(messages, self._params(tried, request, repeat), repeat))
            if hit is not None:
                self._count(metric, cache_hits=1)
                self._used(tried)
                return JudgeReply(hit["data"], hit["usage"], True)
        return None

    @contextmanager
    def _in_flight(self, key: str) -> Iterator[None]:
        """While one thread asks ``key``, another thread asking the same waits here for it to finish (and then
        finds its answer in the cache instead of calling again)."""
        with self._lock:
            done = self._flights.get(key)
            if done is None:
                self._flights[key] = threading.Event()
        if done is not None:
            done.wait()
            yield
            return
        try:
            yield
        finally:
            with self._lock:
                self._flights.pop(key).set()

    def _fallback_chain(self, mode: str) -> list[str]:
        chain = [mode]
        while self.config.response_format == "auto" and chain[-1] in FALLBACK:
            chain.append(FALLBACK[chain[-1]])
        return chain

    def _params(self, mode: str, request: JudgeRequest, repeat: int | None) -> dict[str, Any]:
        """Generation parameters: temperature, max_tokens, the response format of ``mode``, and the seed."""
        cfg = self.config
        params: dict[str, Any] = {"temperature": cfg.temperature, "max_tokens": cfg.max_tokens}
        if mode == "json_schema":
            params["response_format"] = {"type": "json_schema", "json_schema": {
                "name": request.name, "schema": dict(request.schema), "strict": True}}
        elif mode == "json_object_schema":
            params["response_format"] = {"type": "json_object", "schema": dict(request.schema)}
        elif mode == "json_object":
            params["response_format"] = {"type": "json_object"}
        if repeat is not None or cfg.seed is not None:
            params["seed"] = (cfg.seed or 0) + (repeat or 0)
        return params

    def _key(self, messages: list[dict], params: dict[str, Any], repeat: int | None) -> str:
        cfg = self.config
        # the endpoint is part of the identity of an answer: the same model name on another server is another judge
        scope = "" if cfg.cache_scope == "model" else cfg.base_url.rstrip("/")
        return request_key(self.backend, cfg.model, messages, params, endpoint=scope, repeat=repeat)

    def _used(self, mode: str) -> None:
        with self._lock:
            self.modes_used[mode] += 1

    def _fell_back(self, mode: str) -> None:
        """Remember a fallback the server forced (warned once per client: later calls start at ``mode``)."""
        order = MODES
        with self._lock:  # only ever forward along the chain, whichever thread gets here first
            before = self._mode
            self._mode = max(before, mode, key=order.index)
        if before != self._mode:
            log.warning("judge at %s rejected response_format %s (HTTP %s); using %s from now on (set "
                        "judge.response_format to choose)", self.config.base_url, before,
                        "/".join(map(str, FALLBACK_STATUS)), self._mode)

    def _answer(self, messages: list[dict], params: dict[str, Any], request: JudgeRequest, metric: str,
                may_fall_back: bool) -> tuple[dict[str, Any], dict[str, int]]:
        """Post, parse and check the reply; one repair request when it is not the expected JSON."""
        model = self.config.model
        body = self._post({"model": model, "messages": messages, **params}, metric, may_fall_back)
        content = self._content(body, metric)
        data, problem = self._checked(content, request)
        self._count(metric, first_replies=1, valid_json=0 if problem else 1)
        if problem:  # one repair attempt
            self._count(metric, repairs=1)
            repair = messages + [{"role": "assistant", "content": content},
                                 {"role": "user", "content": f"That reply was not valid: {problem}. Reply again with "
                                  f"only the JSON object, {request.expect}."}]
            body = self._post({"model": model, "messages": repair, **params}, metric)
            content2 = self._content(body, metric)
            data, problem = self._checked(content2, request)
            if problem:
                self._count(metric, failures=1)
                raise JudgeError(f"judge reply for prompt {request.name!r} is not the expected JSON after one repair "
                                 f"attempt: {problem}; reply began {content2[:120]!r}")
        usage = {k: int(v) for k, v in (body.get("usage") or {}).items() if isinstance(v, (int, float))}
        return data, usage

    def _checked(self, content: str, request: JudgeRequest) -> tuple[Any, str | None]:
        try:
            data = self._parse(content)
        except (json.JSONDecodeError, ValueError) as e:
            return None, f"not JSON ({e})"
        return data, request.check(data)

    def close(self) -> None:
        self._http.close()


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


def make_judge(config: Mapping[str, Any] | JudgeConfig | None = None) -> OpenAIJudge:
    """The default judge from the environment and an optional ``judge:`` config mapping."""
    cfg = config if isinstance(config, JudgeConfig) else JudgeConfig.resolve(config)
    return OpenAIJudge(cfg)


class RepeatJudge:
    """An :class:`OpenAIJudge` seen as repeat ``repeat``: the same client, cache and counters; each call sends
    ``seed + repeat`` and is cached under the repeat index."""

    def __init__(self, judge: OpenAIJudge, repeat: int):
        self.judge, self.repeat, self.config = judge, repeat, judge.config

    def complete(self, prompt: Prompt, variables: Mapping[str, Any], *, metric: str = "") -> JudgeReply:
        return self.judge.complete(prompt, variables, metric=metric, repeat=self.repeat)

    def ask(self, request: JudgeRequest, *, metric: str = "") -> JudgeReply:
        return self.judge.ask(request, metric=metric, repeat=self.repeat)

    def signature(self) -> str:
        return self.judge.signature()

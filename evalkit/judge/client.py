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

Three parts: :class:`evalkit.judge.transport.JudgeTransport` (HTTP, deadline, retries, preflight),
:class:`evalkit.judge.formats.FormatNegotiator` (how JSON is asked for, ``response_format`` and its fallbacks under
``auto``; the mode an answer was obtained with is part of its cache key and of :meth:`OpenAIJudge.signature`),
and :class:`OpenAIJudge` here (the circuit breaker, the cache, one repair request, counters).

Repeats (``repeats: k``): a judged metric asks every question k times through :meth:`OpenAIJudge.for_repeat`;
repeat r sends ``seed + r`` and is cached under its index, so a re-run makes zero calls.
"""
from __future__ import annotations

import json
import logging
import threading
from collections import Counter, defaultdict
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Mapping, Protocol

from evalkit.base.config import JudgeConfig, redact_secrets  # judge settings are configuration data: they live (and are validated) there
from evalkit.judge.cache import JudgeCache, request_key
from evalkit.judge.costs import call_cost, price_for
from evalkit.judge.formats import FALLBACK_STATUS, FormatNegotiator, parse_reply, response_format
from evalkit.judge.prompts import Prompt
# the errors are the transport's (it raises them); importing them from here keeps working
from evalkit.judge.transport import FormatRejected, JudgeError, JudgeRejected, JudgeTransport, JudgeUnavailable, reply_malformed

SYSTEM = "You are a careful evaluator. Reply with a single JSON object and nothing else."
log = logging.getLogger("evalkit")


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

    def complete(self, prompt: Prompt, variables: Mapping[str, Any], *, metric: str = "",
                 pin: Callable[[JudgeRequest], JudgeRequest] | None = None) -> JudgeReply: ...

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
        self.config = config
        self.cache = cache if cache is not None else JudgeCache(config.cache_path)
        self._lock = threading.Lock()
        self.transport = JudgeTransport(config, self._count)  # HTTP, retries, deadline, preflight
        self.formats = FormatNegotiator(config.response_format, config.base_url)  # how JSON is asked for
        self._failures_in_a_row, self._last_failure = 0, ""
        self.stats: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
        self.prompts_used: dict[str, str] = {}
        self._flights: dict[str, threading.Event] = {}  # questions being asked now, so a duplicate waits for them

    @property
    def _http(self):  # the transport's client (tests inject faults through it)
        return self.transport.http

    @property
    def whole_call_deadline(self) -> bool:
        return self.transport.whole_call_deadline

    @property
    def modes_used(self) -> Counter:
        return self.formats.modes_used

    def preflight(self) -> str:
        """One cheap request before scoring (:meth:`JudgeTransport.preflight`)."""
        return self.transport.preflight()

    # -- bookkeeping ---------------------------------------------------------
    def _count(self, metric: str, **inc: float) -> None:
        with self._lock:
            for k, v in inc.items():
                self.stats[metric or "-"][k] += v

    def record(self, metric: str, **counts: float) -> None:
        """Add to this run's counters for ``metric`` what a metric observed of the judge (e.g. ``asked_per_passage``:
        rows whose verdicts were asked one passage at a time); :meth:`usage` reports them with the rest."""
        self._count(metric, **counts)

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
        return self.formats.current

    def signature(self) -> str:
        """``openai-chat:<model>@t<temperature>,rf=<modes used>``, plus ``,k=<repeats>,seed=<seed>`` with repeats or a
        seed. ``rf=`` names the configured mode until an answer was returned, then every mode that returned one
        (joined by ``/``); no ``|`` or ``+``, which separate the fields of the run's signature line."""
        cfg = self.config
        out = f"{self.backend}:{cfg.model}@t{cfg.temperature:g},rf={self.formats.used_text()}"
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
            body = self.transport.post(payload, metric)
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
                 repeat: int | None = None, pin: Callable[[JudgeRequest], JudgeRequest] | None = None) -> JudgeReply:
        """Render ``prompt`` with ``variables``, ask the judge, return the validated JSON object. ``pin`` narrows
        the request to this row (a schema that fixes a list's length, a check that counts it)."""
        with self._lock:
            self.prompts_used[prompt.name] = prompt.sha256
        request = JudgeRequest.from_prompt(prompt, variables)
        return self.ask(pin(request) if pin is not None else request, metric=metric, repeat=repeat)

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
            # the prompt's name travels with the reply: a dry run reads the replies' observed length per prompt
            self.cache.put(self._key(messages, params, repeat), {"data": data, "usage": usage, "prompt": request.name})
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
        return self.formats.chain(mode)

    def _params(self, mode: str, request: JudgeRequest, repeat: int | None) -> dict[str, Any]:
        """Generation parameters: temperature, max_tokens, the response format of ``mode``, and the seed."""
        cfg = self.config
        params: dict[str, Any] = {"temperature": cfg.temperature, "max_tokens": cfg.max_tokens}
        fmt = response_format(mode, request.name, request.schema)
        if fmt is not None:
            params["response_format"] = fmt
        if repeat is not None or cfg.seed is not None:
            params["seed"] = (cfg.seed or 0) + (repeat or 0)
        return params

    def _key(self, messages: list[dict], params: dict[str, Any], repeat: int | None) -> str:
        cfg = self.config
        # the endpoint is part of the identity of an answer: the same model name on another server is another judge
        # (its password is not: a changed password is the same judge, and the key is stored in the cache)
        scope = "" if cfg.cache_scope == "model" else redact_secrets(cfg.base_url.rstrip("/"))
        return request_key(self.backend, cfg.model, messages, params, endpoint=scope, repeat=repeat)

    def _used(self, mode: str) -> None:
        self.formats.used(mode)

    def _fell_back(self, mode: str) -> None:
        self.formats.fell_back(mode)

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
                raise reply_malformed(f"judge reply for prompt {request.name!r} is not the expected JSON after one repair "
                                 f"attempt: {problem}; reply began {content2[:120]!r}")
        usage = {k: int(v) for k, v in (body.get("usage") or {}).items() if isinstance(v, (int, float))}
        return data, usage

    def _checked(self, content: str, request: JudgeRequest) -> tuple[Any, str | None]:
        try:
            data = parse_reply(content)
        except (json.JSONDecodeError, ValueError) as e:
            return None, f"not JSON ({e})"
        return data, request.check(data)

    def close(self) -> None:
        self.transport.close()


def make_judge(config: Mapping[str, Any] | JudgeConfig | None = None) -> OpenAIJudge:
    """The default judge from the environment and an optional ``judge:`` config mapping."""
    cfg = config if isinstance(config, JudgeConfig) else JudgeConfig.resolve(config)
    return OpenAIJudge(cfg)


class RepeatJudge:
    """An :class:`OpenAIJudge` seen as repeat ``repeat``: the same client, cache and counters; each call sends
    ``seed + repeat`` and is cached under the repeat index."""

    def __init__(self, judge: OpenAIJudge, repeat: int):
        self.judge, self.repeat, self.config = judge, repeat, judge.config

    def complete(self, prompt: Prompt, variables: Mapping[str, Any], *, metric: str = "",
                 pin: Callable[[JudgeRequest], JudgeRequest] | None = None) -> JudgeReply:
        return self.judge.complete(prompt, variables, metric=metric, repeat=self.repeat, pin=pin)

    def ask(self, request: JudgeRequest, *, metric: str = "") -> JudgeReply:
        return self.judge.ask(request, metric=metric, repeat=self.repeat)

    def record(self, metric: str, **counts: float) -> None:
        self.judge.record(metric, **counts)

    def signature(self) -> str:
        return self.judge.signature()

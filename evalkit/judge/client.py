"""The judge: a prompt in, parsed JSON (and usage) out, through any OpenAI-compatible chat-completions endpoint.

Configured by ``base_url``, ``model`` and an API key read from the environment (never written to disk):
``EVALKIT_JUDGE_BASE_URL``, ``EVALKIT_JUDGE_MODEL``, ``EVALKIT_JUDGE_API_KEY``, or ``judge:`` in the config.
Temperature 0 by default; every call is cached (:mod:`evalkit.judge.cache`; the key names the endpoint, so
the same model name on another server does not replay this one's answers, unless ``cache_scope: model``).
Before scoring, :meth:`OpenAIJudge.preflight` makes one cheap request and tells a dead endpoint, a wrong key
and an unknown model apart (:class:`JudgeUnavailable`). 429, 5xx and timeouts are retried with exponential
backoff and a warning line each; a refused connection, 401, 403 and 404 are not retried; after
``circuit_breaker`` failed calls in a row the judge stops calling and every remaining row says why. A reply
that is not the expected JSON gets one repair attempt, then :class:`JudgeError`. Calls, cache hits,
retries and tokens are counted per metric.
"""
from __future__ import annotations

import json
import logging
import os
import re
import threading
import time
from collections import defaultdict
from dataclasses import dataclass
from typing import Any, Mapping, Protocol

from ..config import JudgeConfig  # judge settings are configuration data: they live (and are validated) there
from .cache import JudgeCache, request_key
from .prompts import Prompt

SYSTEM = "You are a careful evaluator. Reply with a single JSON object and nothing else."
log = logging.getLogger("evalkit")


class JudgeError(RuntimeError):
    """A judge call failed for good (after retries, or after the JSON repair attempt)."""


class JudgeUnavailable(JudgeError):
    """The endpoint cannot be used at all (unreachable, key refused, model unknown): the run stops."""


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
        self._lock = threading.Lock()
        self._failures_in_a_row, self._last_failure = 0, ""
        self.stats: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
        self.prompts_used: dict[str, str] = {}

    # -- bookkeeping ---------------------------------------------------------
    def _count(self, metric: str, **inc: float) -> None:
        with self._lock:
            for k, v in inc.items():
                self.stats[metric or "-"][k] += v

    def usage(self) -> dict[str, dict[str, float]]:
        """Per metric: http_calls, cache_hits, retries, failures, repairs, prompt_tokens, completion_tokens."""
        with self._lock:
            return {m: dict(v) for m, v in self.stats.items()}

    def signature(self) -> str:
        return f"{self.backend}:{self.config.model}@t{self.config.temperature:g}"

    # -- HTTP ------------------------------------------------------------------
    def _post(self, payload: dict[str, Any], metric: str) -> dict[str, Any]:
        """One chat-completions call with retries; the circuit breaker counts calls that failed for good."""
        self._check_circuit()
        try:
            body = self._post_with_retries(payload, metric)
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
                    raise JudgeError(f"judge request rejected ({last})")
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
        one-token chat call. Returns how it checked; raises :class:`JudgeUnavailable` with one line that tells a
        dead endpoint, a refused key and an unknown model apart."""
        import httpx

        url, model, wait = self.config.base_url, self.config.model, min(self.config.timeout, 10.0)
        try:
            r = self._http.get("/models", timeout=wait)
            if r.status_code == 200:  # reachable; the model is checked when the server lists its models
                ids = _model_ids(r)
                if ids and model not in ids:
                    raise JudgeUnavailable(f"model {model!r} is not served by the judge at {url} (it serves: "
                                           f"{', '.join(ids[:10])}); set EVALKIT_JUDGE_MODEL or judge.model")
                return "models" if ids else "models (none listed)"
            if r.status_code in (401, 403):
                raise JudgeUnavailable(self._refused(r))
            r = self._http.post("/chat/completions", timeout=wait, json={
                "model": model, "messages": [{"role": "user", "content": "ping"}], "max_tokens": 1, "temperature": 0})
        except httpx.ConnectError as e:
            raise JudgeUnavailable(f"cannot reach the judge at {url}: {e} (is the server running? check "
                                   f"EVALKIT_JUDGE_BASE_URL)") from None
        except httpx.TimeoutException:
            raise JudgeUnavailable(f"the judge at {url} did not answer within {wait:g}s") from None
        if r.status_code in (401, 403):
            raise JudgeUnavailable(self._refused(r))
        if r.status_code >= 400 and r.status_code != 429:
            raise JudgeUnavailable(f"the judge at {url} rejected a one-token request for model {model!r} "
                                   f"(HTTP {r.status_code}: {r.text[:160]}); check the base_url (it ends in /v1) "
                                   f"and the model name")
        return "chat"

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
    def complete(self, prompt: Prompt, variables: Mapping[str, Any], *, metric: str = "") -> JudgeReply:
        """Render ``prompt`` with ``variables``, ask the judge, return the validated JSON object."""
        cfg = self.config
        messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": prompt.render(**variables)}]
        params: dict[str, Any] = {"temperature": cfg.temperature, "max_tokens": cfg.max_tokens}
        if cfg.json_mode:
            params["response_format"] = {"type": "json_object"}
        # the endpoint is part of the identity of an answer: the same model name on another server is another judge
        scope = "" if cfg.cache_scope == "model" else cfg.base_url.rstrip("/")
        key = request_key(self.backend, cfg.model, messages, params, endpoint=scope)
        with self._lock:
            self.prompts_used[prompt.name] = prompt.sha256
        hit = self.cache.get(key)
        if hit is not None:
            self._count(metric, cache_hits=1)
            return JudgeReply(hit["data"], hit["usage"], True)
        payload = {"model": cfg.model, "messages": messages, **params}
        body = self._post(payload, metric)
        content = self._content(body, metric)
        problem = None
        try:
            data = self._parse(content)
            problem = prompt.check(data)
        except (json.JSONDecodeError, ValueError) as e:
            problem = f"not JSON ({e})"
        if problem:  # one repair attempt
            self._count(metric, repairs=1)
            repair = messages + [{"role": "assistant", "content": content},
                                 {"role": "user", "content": f"That reply was not valid: {problem}. Reply again with "
                                  f"only the JSON object, with keys {dict(prompt.returns)}."}]
            body = self._post({"model": cfg.model, "messages": repair, **params}, metric)
            content2 = self._content(body, metric)
            try:
                data = self._parse(content2)
                problem = prompt.check(data)
            except (json.JSONDecodeError, ValueError) as e:
                problem = f"not JSON ({e})"
            if problem:
                self._count(metric, failures=1)
                raise JudgeError(f"judge reply for prompt {prompt.name!r} is not the expected JSON after one repair "
                                 f"attempt: {problem}; reply began {content2[:120]!r}")
        usage = {k: int(v) for k, v in (body.get("usage") or {}).items() if isinstance(v, (int, float))}
        self.cache.put(key, {"data": data, "usage": usage})
        return JudgeReply(data, usage, False)

    def close(self) -> None:
        self._http.close()


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

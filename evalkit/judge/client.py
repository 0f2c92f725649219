"""The judge: a prompt in, parsed JSON (and usage) out, through any OpenAI-compatible chat-completions endpoint.

Configured by ``base_url``, ``model`` and an API key read from the environment (never written to disk):
``EVALKIT_JUDGE_BASE_URL``, ``EVALKIT_JUDGE_MODEL``, ``EVALKIT_JUDGE_API_KEY``, or ``judge:`` in the config.
Temperature 0 by default; every call is cached (:mod:`evalkit.judge.cache`); 429, 5xx and timeouts are
retried with exponential backoff; a reply that is not the expected JSON gets one repair attempt, then
:class:`JudgeError`. Calls, cache hits, retries and tokens are counted per metric.
"""
from __future__ import annotations

import json
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


class JudgeError(RuntimeError):
    """A judge call failed for good (after retries, or after the JSON repair attempt)."""


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
        import httpx

        cfg = self.config
        last = ""
        for attempt in range(cfg.max_retries + 1):
            if attempt:
                self._count(metric, retries=1)
            try:
                self._count(metric, http_calls=1)
                r = self._http.post("/chat/completions", json=payload)
            except (httpx.TimeoutException, httpx.TransportError) as e:
                last = f"{type(e).__name__}: {e}"
            else:
                if r.status_code == 200:
                    try:
                        return r.json()
                    except ValueError:
                        raise JudgeError(f"judge endpoint returned non-JSON HTTP body: {r.text[:200]!r}") from None
                last = f"HTTP {r.status_code}: {r.text[:200]}"
                if r.status_code != 429 and r.status_code < 500:
                    raise JudgeError(f"judge request rejected ({last})")
                retry_after = r.headers.get("retry-after")
                if retry_after and retry_after.replace(".", "", 1).isdigit() and attempt < cfg.max_retries:
                    time.sleep(min(float(retry_after), cfg.max_backoff))
                    continue
            if attempt < cfg.max_retries:
                time.sleep(min(cfg.backoff * 2 ** attempt, cfg.max_backoff))
        self._count(metric, failures=1)
        raise JudgeError(f"judge call failed after {cfg.max_retries + 1} attempts; last error: {last}")

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
        key = request_key(self.backend, cfg.model, messages, params)
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


def make_judge(config: Mapping[str, Any] | JudgeConfig | None = None) -> OpenAIJudge:
    """The default judge from the environment and an optional ``judge:`` config mapping."""
    cfg = config if isinstance(config, JudgeConfig) else JudgeConfig.resolve(config)
    return OpenAIJudge(cfg)

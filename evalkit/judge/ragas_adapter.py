"""Run ragas' own metric implementations (ragas 0.4 ``metrics.collections``) on evalkit data, for users
who want ragas numbers. Needs the ``ragas`` extra (``ragas==0.4.3`` with ``langchain-community<0.4``).

The LLM is the configured judge endpoint (same ``base_url``/``model``/API-key variable as
:class:`~evalkit.judge.JudgeConfig`), reached through ragas' ``llm_factory`` on an ``openai.AsyncOpenAI``
client. Values are ragas' own (0..1). These calls go through ragas and openai, so evalkit's judge cache
and counters do not see them.
"""
from __future__ import annotations

import asyncio
import math
import os
from typing import Any, Mapping, Sequence

from ..metrics.base import Score
from .client import NOT_CONFIGURED, JudgeConfig, JudgeNotConfigured

RAGAS_INSTALL = "install the ragas extra: pip install 'evalkit[ragas]' (ragas==0.4.3, langchain-community<0.4)"


def available() -> bool:
    import importlib.util

    return importlib.util.find_spec("ragas") is not None and importlib.util.find_spec("openai") is not None


def _llm(cfg: JudgeConfig):
    os.environ.setdefault("RAGAS_DO_NOT_TRACK", "true")
    try:
        from openai import AsyncOpenAI
        from ragas.llms import llm_factory
    except ImportError as e:
        raise RuntimeError(f"ragas is not importable ({e}); {RAGAS_INSTALL}") from None
    client = AsyncOpenAI(base_url=cfg.base_url, api_key=os.environ.get(cfg.api_key_env) or "unused",
                         timeout=cfg.timeout, max_retries=cfg.max_retries)
    return llm_factory(cfg.model, client=client, temperature=cfg.temperature, max_tokens=cfg.max_tokens)


def _metric(name: str, llm):
    from ragas.metrics.collections import ContextPrecision, ContextRecall, Faithfulness

    return {"faithfulness": Faithfulness, "context_precision": ContextPrecision, "context_recall": ContextRecall}[name](llm=llm)


def _kwargs(name: str, row: Mapping[str, Any]) -> dict[str, Any]:
    if name == "faithfulness":
        return {"user_input": row["question"] or "", "response": row["answer"] or "",
                "retrieved_contexts": list(row["contexts"] or [])}
    return {"user_input": row["question"] or "", "reference": row["ground_truth"] or "",
            "retrieved_contexts": list(row["contexts"] or [])}


def ragas_scores(name: str, rows: Sequence[Mapping[str, Any]], cfg: JudgeConfig) -> list[Score | Exception]:
    """ragas' ``name`` metric on every row (concurrency bounded by ``cfg.concurrency``)."""
    if not cfg.configured:
        raise JudgeNotConfigured(NOT_CONFIGURED)
    metric = _metric(name, _llm(cfg))

    async def run() -> list[Score | Exception]:
        sem = asyncio.Semaphore(max(1, cfg.concurrency))

        async def one(row):
            async with sem:
                try:
                    r = await metric.ascore(**_kwargs(name, row))
                except Exception as e:  # recorded per row by the runner
                    return e
                v = r.value
                if v is None or (isinstance(v, float) and math.isnan(v)):
                    return Score(None, {"reason": "ragas returned NaN (e.g. no statements)", "ragas_reason": r.reason})
                return Score(float(v), {"ragas_reason": r.reason} if r.reason else {})

        return await asyncio.gather(*(one(r) for r in rows))

    return asyncio.run(run())


def _make(name: str, needs: tuple[str, ...]):
    def fn(**kw) -> Score:
        cfg = kw.pop("judge_config", None) or JudgeConfig.resolve()
        res = ragas_scores(name, [kw], cfg)[0]
        if isinstance(res, Exception):
            raise res
        return res

    def batch(inputs: Mapping[str, Sequence[Any]], params: Mapping[str, Any] | None = None, resources: Any = None):
        cfg = JudgeConfig.resolve(getattr(getattr(resources, "config", None), "judge", None))
        n = len(next(iter(inputs.values())))
        rows = [{k: inputs[k][i] for k in needs} for i in range(n)]
        return ragas_scores(name, rows, cfg)

    fn.__doc__ = (f"ragas' own ``{name}`` (ragas 0.4 collections), 0..1, on the configured judge endpoint.\n\n"
                  f"Empty policy: ragas' (it raises on missing inputs; the runner records the row's error; NaN "
                  f"becomes undetermined).")
    import inspect

    fn.__signature__ = inspect.Signature([inspect.Parameter(n, inspect.Parameter.KEYWORD_ONLY) for n in needs] +
                                         [inspect.Parameter("judge_config", inspect.Parameter.KEYWORD_ONLY, default=None)])
    return fn, batch

"""Run ragas' own metric implementations (ragas 0.4 ``metrics.collections``) on evalkit data, for users
who want ragas numbers. Needs the ``ragas`` extra (``ragas==0.4.3`` with ``langchain-community<0.4``).

The LLM is the configured judge endpoint (same ``base_url``/``model``/API-key variable as
:class:`~evalkit.judge.JudgeConfig`), reached through ragas' ``llm_factory`` on an ``openai.AsyncOpenAI``
client. Values are ragas' own (0..1). These calls go through ragas and openai, so evalkit's judge cache
and counters do not see them.

ragas reports usage to its authors unless ``RAGAS_DO_NOT_TRACK`` is ``true``; evalkit sets it only while
ragas runs (:func:`ragas_environment`) and restores the previous value afterwards.
"""
from __future__ import annotations

import asyncio
import inspect
import math
import os
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any, Callable, Coroutine, Iterator, Mapping, Sequence, TypeVar

from ..judge.client import NOT_CONFIGURED, JudgeConfig, JudgeNotConfigured
from .base import Score

T = TypeVar("T")
RAGAS_INSTALL = "install the ragas extra: pip install 'evalkit[ragas]' (ragas==0.4.3, langchain-community<0.4)"


def available() -> bool:
    """Whether ragas and openai are importable (the ``ragas`` extra is installed)."""
    import importlib.util

    return importlib.util.find_spec("ragas") is not None and importlib.util.find_spec("openai") is not None


@contextmanager
def ragas_environment(values: Mapping[str, str] | None = None) -> Iterator[None]:
    """Set environment variables ragas reads (by default ``RAGAS_DO_NOT_TRACK=true``) for the duration of a
    ``with`` block, unless the user set them; their previous state is restored on exit.

    Examples
    --------
    >>> before = os.environ.get("EVALKIT_DOCTEST_VAR")
    >>> with ragas_environment({"EVALKIT_DOCTEST_VAR": "1"}):
    ...     os.environ["EVALKIT_DOCTEST_VAR"]
    '1'
    >>> os.environ.get("EVALKIT_DOCTEST_VAR") == before
    True
    """
    values = {"RAGAS_DO_NOT_TRACK": "true"} if values is None else values
    added = [k for k in values if k not in os.environ]  # a user's own setting wins and is left alone
    for k in added:
        os.environ[k] = values[k]
    try:
        yield
    finally:
        for k in added:
            os.environ.pop(k, None)


def _llm(cfg: JudgeConfig):
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


def run_sync(make_coro: Callable[[], Coroutine[Any, Any, T]]) -> T:
    """Run a coroutine to completion from synchronous code, whether or not an event loop is running here.

    Without a running loop this is ``asyncio.run``. Under one (Jupyter, papermill, an async web app),
    ``asyncio.run`` refuses, and blocking that loop's thread on it would deadlock; the coroutine then runs
    in a worker thread with its own loop, and this call waits for it. ``make_coro`` builds the coroutine
    inside the loop that runs it, so clients bound to a loop are created there.

    Examples
    --------
    >>> async def two():
    ...     return 2
    >>> run_sync(two)
    2
    >>> async def nested():  # called from inside a running loop, as in a notebook cell
    ...     return run_sync(two)
    >>> asyncio.run(nested())
    2
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(make_coro())
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="evalkit-async") as pool:
        return pool.submit(lambda: asyncio.run(make_coro())).result()


def ragas_signature(cfg: JudgeConfig) -> str:
    """``ragas-<version>:openai-chat:<model>@t<temperature>``, for the run signature."""
    from importlib import metadata

    try:
        version = metadata.version("ragas")
    except metadata.PackageNotFoundError:
        version = "absent"
    return f"ragas-{version}:openai-chat:{cfg.model}@t{cfg.temperature:g}"


def ragas_scores(name: str, rows: Sequence[Mapping[str, Any]], cfg: JudgeConfig) -> list[Score | Exception]:
    """ragas' ``name`` metric on every row (concurrency bounded by ``cfg.concurrency``); a row that fails
    yields its exception. Works inside a running event loop (see :func:`run_sync`)."""
    if not cfg.configured:
        raise JudgeNotConfigured(NOT_CONFIGURED)

    async def run() -> list[Score | Exception]:
        metric = _metric(name, _llm(cfg))  # its AsyncOpenAI client belongs to this loop
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

    with ragas_environment():
        return run_sync(run)


def ragas_metric(name: str, needs: tuple[str, ...]) -> tuple[Callable[..., Score], Callable[..., list]]:
    """The row function and the batch function of ragas' metric ``name`` ("faithfulness",
    "context_precision" or "context_recall"), taking the inputs ``needs``, for the registry.

    Examples
    --------
    >>> fn, batch = ragas_metric("faithfulness", ("question", "answer", "contexts"))
    >>> list(inspect.signature(fn).parameters)
    ['question', 'answer', 'contexts', 'judge_config']
    """
    def fn(**kw) -> Score:
        cfg = kw.pop("judge_config", None) or JudgeConfig.resolve()
        res = ragas_scores(name, [kw], cfg)[0]
        if isinstance(res, Exception):
            raise res
        return res

    def batch(inputs: Mapping[str, Sequence[Any]], params: Mapping[str, Any] | None = None, resources: Any = None):
        cfg = resources.judge_config if resources is not None else JudgeConfig.resolve()
        n = len(next(iter(inputs.values())))
        rows = [{k: inputs[k][i] for k in needs} for i in range(n)]
        return ragas_scores(name, rows, cfg)

    fn.__doc__ = (f"ragas' own ``{name}`` (ragas 0.4 collections), 0..1, on the configured judge endpoint.\n\n"
                  f"Empty policy: ragas' (it raises on missing inputs; the runner records the row's error; NaN "
                  f"becomes undetermined).")
    fn.__signature__ = inspect.Signature([inspect.Parameter(n, inspect.Parameter.KEYWORD_ONLY) for n in needs] +
                                         [inspect.Parameter("judge_config", inspect.Parameter.KEYWORD_ONLY, default=None)])
    return fn, batch

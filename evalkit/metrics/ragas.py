"""Run ragas' own metric implementations (ragas 0.4 ``metrics.collections``) on evalkit data, for users
who want ragas numbers. Needs the ``ragas`` extra (``ragas==0.4.3`` with ``langchain-community<0.4``).

ragas 0.4's collection metrics ask their LLM for structured output: ``await llm.agenerate(prompt,
ResponseModel)`` on an ``InstructorBaseRagasLLM``, returning a pydantic object. evalkit gives them
:func:`judge_llm`, an object with that interface backed by evalkit's judge client
(:class:`~evalkit.judge.client.OpenAIJudge`): the prompt ragas wrote is sent with the response model's JSON
schema as a structured-output request (or JSON mode / the prompt alone, per ``judge.response_format``), and the
reply is validated into the model. So ragas' calls share the judge's cache (a re-run makes zero calls; a
killed run resumes), retries and circuit breaker, concurrency limit, usage counters (under ``ragas_<name>``),
repeats and signature. Values are ragas' own (0..1).

ragas reports usage to its authors unless ``RAGAS_DO_NOT_TRACK`` is ``true``; evalkit sets it only while
ragas runs (:func:`ragas_environment`) and restores the previous value afterwards.
"""
from __future__ import annotations

import asyncio
import inspect
import math
import os
import re
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from functools import lru_cache
from dataclasses import dataclass
from typing import Any, Callable, Coroutine, Iterator, Mapping, Sequence, TypeVar

from evalkit.judge.client import JudgeConfig, JudgeRequest
from evalkit.metrics.base import Details, Metric, Score, freeze
from evalkit.metrics.judged import RAGAS, combine_repeats, repeats_of

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


def strict_schema(schema: Mapping[str, Any]) -> dict[str, Any]:
    """``schema`` (a pydantic JSON schema) made strict in OpenAI's sense: every object lists all its properties as
    required and allows no others (pydantic leaves defaulted fields optional).

    >>> strict_schema({"type": "object", "properties": {"a": {"type": "integer", "default": 0}}})
    {'type': 'object', 'properties': {'a': {'type': 'integer', 'default': 0}}, 'required': ['a'], 'additionalProperties': False}
    """
    if isinstance(schema, list):
        return [strict_schema(s) for s in schema]
    if not isinstance(schema, Mapping):
        return schema
    out = {k: strict_schema(v) for k, v in schema.items()}
    if out.get("type") == "object" and isinstance(out.get("properties"), Mapping):
        out["required"] = list(out["properties"])
        out["additionalProperties"] = False
    return out


def _request(prompt: str, response_model: Any) -> JudgeRequest:
    from pydantic import ValidationError

    def check(data: Any) -> str | None:
        try:
            response_model.model_validate(data)
        except ValidationError as e:
            return f"does not match {response_model.__name__}: {str(e).splitlines()[1:3]}"
        return None

    name = re.sub(r"[^A-Za-z0-9_-]", "_", response_model.__name__)[:64]
    return JudgeRequest(prompt, name, strict_schema(response_model.model_json_schema()), check,
                        f"matching the JSON schema of {response_model.__name__}")


@lru_cache(maxsize=1)
def _adapter_class() -> type:
    try:
        from ragas.llms.base import InstructorBaseRagasLLM
    except ImportError as e:
        raise RuntimeError(f"ragas is not importable ({e}); {RAGAS_INSTALL}") from None

    class JudgeRagasLLM(InstructorBaseRagasLLM):
        """ragas' structured-output LLM interface, answered by evalkit's judge client."""

        def __init__(self, judge: Any, metric: str, repeat: int | None = None):
            self.judge, self.metric, self.repeat = judge, metric, repeat

        def generate(self, prompt: str, response_model: Any) -> Any:
            reply = self.judge.ask(_request(prompt, response_model), metric=self.metric, repeat=self.repeat)
            return response_model.model_validate(reply.data)

        async def agenerate(self, prompt: str, response_model: Any) -> Any:
            # the judge client is synchronous (threads, shared slots): run it off this loop's thread
            return await asyncio.to_thread(self.generate, prompt, response_model)

        def __repr__(self) -> str:
            return f"JudgeRagasLLM({self.judge.signature()}, metric={self.metric!r}, repeat={self.repeat})"

    return JudgeRagasLLM


def judge_llm(judge: Any, metric: str = "ragas", repeat: int | None = None) -> Any:
    """An LLM for ragas 0.4 collection metrics (an ``InstructorBaseRagasLLM``) that asks evalkit's ``judge``
    (an :class:`~evalkit.judge.client.OpenAIJudge`): its calls are cached, retried, limited and counted under
    ``metric``; ``repeat`` makes them repeat ``repeat`` of ``judge.repeats``.

    Examples
    --------
    >>> from evalkit.judge import JudgeConfig, OpenAIJudge
    >>> from evalkit.testing import ScriptedJudgeServer
    >>> from ragas.metrics.collections import Faithfulness
    >>> with ScriptedJudgeServer() as srv:
    ...     judge = OpenAIJudge(JudgeConfig(base_url=srv.url, model="scripted", cache_path=None))
    ...     m = Faithfulness(llm=judge_llm(judge, "ragas_faithfulness"))
    ...     r = run_sync(lambda: m.ascore(user_input="Fee?", response="The fee is 604 dollars.",
    ...                                   retrieved_contexts=["The fee is 604 dollars a year."]))
    >>> r.value, judge.usage()["ragas_faithfulness"]["http_calls"]
    (1.0, 2.0)
    """
    return _adapter_class()(judge, metric, repeat)


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
    """``ragas-<version>:evalkit-judge:<model>@t<temperature>``, for the run signature (ragas' calls go through
    evalkit's judge, whose own signature, with the response format, is beside it)."""
    from importlib import metadata

    try:
        version = metadata.version("ragas")
    except metadata.PackageNotFoundError:
        version = "absent"
    return f"ragas-{version}:evalkit-judge:{cfg.model}@t{cfg.temperature:g}"


@dataclass(frozen=True, eq=False)
class RagasDetails(Details):
    """What ragas said beside its value (its own reason, when it gives one), and why there is no value when it
    returned NaN."""

    _optional = frozenset({"reason", "ragas_reason"})
    reason: str | None = None
    ragas_reason: Any = None

    def _kept(self) -> frozenset[str]:
        # beside the NaN reason, ragas' own reason is saved even when ragas gave none (null)
        return frozenset({"ragas_reason"}) if self.reason is not None else frozenset()


def _one_score(result: Any) -> Score:
    v = result.value
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return Score(None, RagasDetails("ragas returned NaN (e.g. no statements)", freeze(result.reason)))
    return Score(float(v), RagasDetails(ragas_reason=freeze(result.reason) if result.reason else None))


def ragas_scores(name: str, rows: Sequence[Mapping[str, Any]], judge: Any) -> list[Score | Exception]:
    """ragas' ``name`` metric on every row through evalkit's ``judge`` (an
    :class:`~evalkit.judge.client.OpenAIJudge`); a row that fails yields its exception. With ``judge.repeats: k``
    each row is scored k times (repeat r through its own seed and cache entries) and combined by
    :func:`~evalkit.metrics.judged.combine_repeats`. Works inside a running event loop (see :func:`run_sync`)."""
    k = repeats_of(judge)
    metrics = [_metric(name, judge_llm(judge, f"ragas_{name}", r if k > 1 else None)) for r in range(k)]

    async def run() -> list[Score | Exception]:
        workers = max(1, judge.config.concurrency)
        # the adapter runs the judge's calls in threads: as many as the judge allows in flight (asyncio's default
        # pool is sized by CPUs); asyncio.run shuts this pool down with its loop
        asyncio.get_running_loop().set_default_executor(ThreadPoolExecutor(workers, "evalkit-ragas"))
        sem = asyncio.Semaphore(workers)

        async def one(row, r):
            async with sem:
                try:
                    return _one_score(await metrics[r].ascore(**_kwargs(name, row)))
                except Exception as e:  # recorded per row by the runner
                    return e

        return await asyncio.gather(*(one(row, r) for row in rows for r in range(k)))

    with ragas_environment():
        out = run_sync(run)
    return out if k == 1 else [combine_repeats(out[i * k:(i + 1) * k]) for i in range(len(rows))]


RAGAS_ROW_DOC = """ragas' own ``{name}`` for one row ({needs}; ragas 0.4 collections), on the configured judge
    endpoint through evalkit's judge client (0..1, higher is better).

    Empty policy: ragas' (it raises on missing inputs; the runner records the row's error; NaN becomes
    undetermined).

    Examples
    --------
    >>> from evalkit.base.config import JudgeConfig
    >>> from evalkit.judge.client import OpenAIJudge
    >>> from evalkit.testing import ScriptedJudgeServer  # a real HTTP judge on 127.0.0.1 answering from fixtures
    >>> from evalkit.metrics.ragas import faithfulness_row, context_recall_row
    >>> with ScriptedJudgeServer() as srv:
    ...     judge = OpenAIJudge(JudgeConfig(base_url=srv.url, model="scripted", cache_path=None))
    ...     f = faithfulness_row(question="What is the base premium?", answer="The premium is $604.",
    ...                          contexts=["The base premium is $604 per year."], judge=judge)
    ...     r = context_recall_row(question="What is the base premium?", contexts=["The base premium is $604 per year."],
    ...                            ground_truth="$604 per year.", judge=judge)
    >>> f.value, r.value
    (1.0, 1.0)
    """


def ragas_metric(name: str, needs: tuple[str, ...]) -> tuple[Callable[..., Score], Callable[..., list]]:
    """The row function and the batch function of ragas' metric ``name`` ("faithfulness",
    "context_precision" or "context_recall"), taking the inputs ``needs``, for the registry.

    The row function takes the judge (``judge=``), or makes one from ``judge_config`` (default: the environment).

    Examples
    --------
    >>> fn, batch = ragas_metric("faithfulness", ("question", "answer", "contexts"))
    >>> list(inspect.signature(fn).parameters)
    ['question', 'answer', 'contexts', 'judge', 'judge_config']
    """
    def fn(**kw) -> Score:
        judge, cfg = kw.pop("judge", None), kw.pop("judge_config", None)
        own = judge is None
        if own:
            from evalkit.judge.client import make_judge

            judge = make_judge(cfg or JudgeConfig.resolve())
        try:
            res = ragas_scores(name, [kw], judge)[0]
        finally:
            if own:
                judge.close()
        if isinstance(res, Exception):
            raise res
        return res

    def batch(inputs: Mapping[str, Sequence[Any]], params: Mapping[str, Any] | None = None, resources: Any = None):
        if resources is None:
            return [fn(**{k: inputs[k][i] for k in needs}) for i in range(len(next(iter(inputs.values()))))]
        resources.judge_config  # noqa: B018 -- asking for it puts ragas' version in the run signature
        n = len(next(iter(inputs.values())))
        return ragas_scores(name, [{k: inputs[k][i] for k in needs} for i in range(n)], resources.judge)

    fn.__doc__ = RAGAS_ROW_DOC.format(name=name, needs=", ".join(needs))
    kw_only = inspect.Parameter.KEYWORD_ONLY
    fn.__signature__ = inspect.Signature([inspect.Parameter(n, kw_only) for n in needs] +
                                         [inspect.Parameter("judge", kw_only, default=None),
                                          inspect.Parameter("judge_config", kw_only, default=None)])
    return fn, batch


# the functions the declarations below name
faithfulness_row, faithfulness_rows = ragas_metric("faithfulness", ("question", "answer", "contexts"))
context_precision_row, context_precision_rows = ragas_metric("context_precision", ("question", "contexts", "ground_truth"))
context_recall_row, context_recall_rows = ragas_metric("context_recall", ("question", "contexts", "ground_truth"))


# ---------------------------------------------------------------------------------------------------------------
# The declarations: this module's metrics as the registry lists them (evalkit.metrics collects METRICS)
# ---------------------------------------------------------------------------------------------------------------
_RAGAS_EMPTY = "ragas raises on empty inputs (row error); NaN -> undetermined"
# the publication these metrics follow
REFERENCES = {"es2024ragas": RAGAS}
METRICS = (
    Metric("ragas_faithfulness", faithfulness_row, needs=("question", "answer", "contexts"), better="higher", range=(0.0, 1.0),
           batch=faithfulness_rows, resources=("judge", "ragas"), details=RagasDetails,
           family="ragas",
           formula="ragas' own Faithfulness on the configured judge endpoint", empty_policy=_RAGAS_EMPTY,
           cites=("es2024ragas",)),
    Metric("ragas_context_precision", context_precision_row, needs=("question", "contexts", "ground_truth"), better="higher",
           range=(0.0, 1.0), batch=context_precision_rows, resources=("judge", "ragas"), details=RagasDetails,
           family="ragas",
           formula="ragas' own ContextPrecision with reference, on the configured judge endpoint",
           empty_policy=_RAGAS_EMPTY,
           cites=("es2024ragas",)),
    Metric("ragas_context_recall", context_recall_row, needs=("question", "contexts", "ground_truth"), better="higher",
           range=(0.0, 1.0), batch=context_recall_rows, resources=("judge", "ragas"), details=RagasDetails,
           family="ragas",
           formula="ragas' own ContextRecall on the configured judge endpoint", empty_policy=_RAGAS_EMPTY,
           cites=("es2024ragas",)),
)

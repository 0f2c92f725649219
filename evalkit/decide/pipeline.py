"""``evaluate()``: score, then the verdict. The two steps of the road in one call, for users and reports.

Scoring (:func:`evalkit.run.runner.score`) and the verdict (:func:`evalkit.decide.verdict.apply_verdicts`) are separate
steps; this module sits after both, so neither imports the other. ``evalkit verdict`` re-applies the
second step to saved results.

Examples
--------
>>> import pandas as pd
>>> df = pd.DataFrame({"question": ["What is the premium?"], "answer": ["The premium is $604."],
...                    "contexts": [["The premium is $604 per year."]]})
>>> checks = ["unsupported_facts", "reference_conflict", "answers_question", "question_coverage"]
>>> out = evaluate(df, checks, progress=False)
>>> out.loc[0, "verdict"], list(out.columns[-3:])
('PASS', ['verdict', 'verdict_rule', 'error'])
>>> evaluate(df.assign(answer=["The premium is $640."]), checks, progress=False).loc[0, "verdict_rule"]
'unsupported_facts 0.500 > 0'

These are the default (evalkit) profile's four checks; ``reference_conflict`` is 0 without a ``ground_truth``
column (nothing to conflict with). The $640 answer has two facts, the amount (unsupported) and its clause.
"""
from __future__ import annotations

import logging
from collections import Counter
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import pandas as pd

from evalkit.base.config import VERDICT_PROFILES, EvalConfig
from evalkit.metrics import verdict_roles
from evalkit.run.runner import as_config, score
from evalkit.decide.verdict import (apply_verdicts, decision_counts, decision_note, missing_for_verdict, profile_metrics,
                                    row_decisions)

log = logging.getLogger("evalkit")


def evaluate(data: pd.DataFrame | str | Path, metrics: Sequence[str] | None = None,
             config: EvalConfig | Mapping[str, Any] | str | Path | None = None, *,
             on_error: str = "record", progress: bool | None = None, engine: Any = None,
             scheduler: str | None = None, chunk_size: int | None = None, parts_dir: str | Path | None = None,
             resume: bool = True, columns: Mapping[str, str] | None = None,
             strict_columns: bool = False, dry_run: bool = False) -> pd.DataFrame:
    """Score every row of ``data`` (:func:`evalkit.run.runner.score`, whose parameters these are), then add
    ``verdict`` and ``verdict_rule`` when the triad (hallucination, relevance, completeness) was scored.

    ``dry_run=True`` scores nothing and calls no judge: it returns :func:`estimate`'s
    :class:`evalkit.judge.dryrun.DryRun` (the judge calls, cache hits, tokens and cost the run would make).

    With any of ``engine`` ('local', 'dask' with ``scheduler`` ``tcp://HOST:PORT`` or ``local:N``, or an engine
    object), ``chunk_size`` or ``parts_dir``, rows are scored in chunks by :func:`evalkit.run.stream.score_chunks`
    (checkpointed in ``parts_dir`` and resumed when ``resume``; ``data`` may then also be a directory or glob of
    Parquet/JSONL files, read with ``columns``); the scores are the same as in one piece.

    Returns the scored rows (same order, none dropped) with the verdict columns before ``error``;
    ``attrs["evalkit"]`` holds the run's metrics, config and signature.
    """
    config = as_config(config)
    if dry_run:
        return estimate(data, metrics, config, strict_columns=strict_columns)
    if engine is None and chunk_size is None and parts_dir is None:
        out = score(data, metrics, config, on_error=on_error, progress=progress, strict_columns=strict_columns)
    else:
        from evalkit.run.engine import make_engine
        from evalkit.run.stream import DEFAULT_CHUNK, score_chunks

        with make_engine(engine, scheduler) as runner_engine:
            out = score_chunks(data, metrics, config, parts_dir=parts_dir, chunk_size=chunk_size or DEFAULT_CHUNK,
                               resume=resume, columns=columns, on_error=on_error, engine=runner_engine,
                               progress=progress, strict_columns=strict_columns)
    if not _verdict_applies(out.attrs["evalkit"]["metrics"], config):
        return out
    attrs = out.attrs["evalkit"]
    out, notes = _with_verdicts(out, config)
    for note in notes:
        log.warning("%s", note)
    out.attrs["evalkit"] = attrs
    return out


def _verdict_applies(scored: Sequence[str], config: EvalConfig) -> bool:
    """Whether the named profile's metrics were all scored. When they were not but another named profile's were
    (the seed's triad, asked for by name as before the default changed), one warning says why the results carry
    no verdict and how to get one; a run that asked for other metrics wanted no verdict and gets no warning."""
    needed = profile_metrics(config.thresholds)
    missing = missing_for_verdict(scored, config.thresholds)
    others = [name for name in VERDICT_PROFILES if name != config.thresholds.named]
    if missing and any(all(m in scored for m, _ in verdict_roles(name)) for name in others):
        which = "none of them was" if len(missing) == len(needed) else f"{', '.join(missing)} not"
        log.warning("no verdict: the %s profile reads %s and %s scored (add %s to the metrics, or choose the seed "
                    "profile: --profile seed)", config.thresholds.named, ", ".join(needed), which, ",".join(missing))
    return not missing


def _with_verdicts(out: pd.DataFrame, config: EvalConfig) -> tuple[pd.DataFrame, list[str]]:
    """``verdict`` and ``verdict_rule`` added before ``error``; the notes of :func:`apply_verdicts`."""
    out, notes = apply_verdicts(out, config.thresholds, lexicons=config.lexicons)
    return out[[c for c in out.columns if c != "error"] + ["error"]], notes


def evaluate_to_file(data: pd.DataFrame | str | Path, output: str | Path, metrics: Sequence[str] | None = None,
                     config: EvalConfig | Mapping[str, Any] | str | Path | None = None, *,
                     parts_dir: str | Path | None = None, keep: Callable[[str], bool] | None = None,
                     formula_guard: bool = True, **options: Any):
    """:func:`evaluate` in chunks straight into ``output`` (.parquet, .csv, .jsonl), in flat memory.

    Chunks are scored into ``parts_dir`` (resumed when ``resume``, see :func:`evalkit.run.stream.score_chunks`, whose
    other ``options`` these are: ``chunk_size``, ``engine``, ``scheduler``, ``columns``, ``on_error``,
    ``progress``, ``strict_columns``), then streamed into ``output`` part by part with the verdict added to each
    (:func:`evalkit.run.stream.write_output`); the parts are removed once the output is written (and when the run
    fails before any chunk finished; a finished chunk is kept for the re-run to resume from). The whole run holds
    ``output``'s lock: a second process writing the same output (or its parts) is refused with
    :class:`evalkit.base.safeio.OutputError` naming the first one's pid. A CSV output guards cells a spreadsheet would
    run as formulas unless ``formula_guard`` is False (:func:`evalkit.base.data.guard_formula`).

    Returns :class:`evalkit.run.stream.Written`: the path, row count, the run's metadata (with this invocation's
    judge usage) and, as a frame, every row's values of the columns ``keep(name)`` accepts (e.g.
    :func:`evalkit.decide.aggregate.summary_reads`), with the run's metadata in ``attrs["evalkit"]``.
    """
    from evalkit.run.engine import make_engine
    from evalkit.base.safeio import output_lock
    from evalkit.run.stream import DEFAULT_CHUNK, remove_parts, remove_unfinished, score_parts, write_output

    config = as_config(config)
    scheduler, engine = options.pop("scheduler", None), options.pop("engine", None)
    options["chunk_size"] = options.get("chunk_size") or DEFAULT_CHUNK
    notes: dict[str, None] = {}  # every part gives the same profile notes: said once
    counts: Counter[str] = Counter()  # ... but its own empty and non-English rows: summed over the parts

    def verdicts(frame: pd.DataFrame) -> pd.DataFrame:  # once per part (write_output keeps what it added)
        frame, said = _with_verdicts(frame, config)
        part = decision_counts(row_decisions(frame, config.lexicons))
        own = decision_note(counts=part)
        notes.update(dict.fromkeys(n for n in said if n != own))
        counts.update(part)
        return frame

    # one writer per output, for the whole run: two runs to one output would mix their parts
    with output_lock(output):
        try:
            with make_engine(engine, scheduler) as runner_engine:
                cp, usage = score_parts(data, metrics, config, parts_dir=parts_dir, engine=runner_engine, **options)
            scored = cp.chunks[0]["meta"].get("metrics", []) if cp.chunks else []
            written = write_output(cp, output, keep=keep, formula_guard=formula_guard,
                                   transform=verdicts if _verdict_applies(scored, config) else None)
        except BaseException:
            if parts_dir is not None:  # under the lock: never another run's parts; finished chunks are kept
                remove_unfinished(parts_dir)
            raise
        if parts_dir is not None:
            remove_parts(parts_dir)
    if (total := decision_note(counts=counts)) is not None:
        notes[total] = None
    for note in notes:
        log.warning("%s", note)
    if written.meta.get("judge") is not None:  # after the file is written: usage is not part of its bytes
        from evalkit.judge.costs import usage_total

        written.meta["judge"]["usage"], written.meta["judge"]["total"] = usage, usage_total(usage)
    written.kept.attrs["evalkit"] = written.meta
    return written


def estimate(data: pd.DataFrame | str | Path, metrics: Sequence[str] | None = None,
             config: EvalConfig | Mapping[str, Any] | str | Path | None = None, *, strict_columns: bool = False):
    """What scoring ``data`` would ask the judge, without asking: every judged metric's prompts rendered for every
    row through :class:`evalkit.judge.dryrun.DryRunJudge` (which counts calls, cache hits and approximate
    tokens, and prices them with ``judge.prices``). Metrics that call no judge are not run. No HTTP request is
    made, not even the preflight; the judge cache is read, never written.

    Returns :class:`evalkit.judge.dryrun.DryRun` (``print()`` it; ``to_dict()`` for JSON).
    """
    from evalkit.judge.dryrun import DryRun, make_dry_judge
    from evalkit.run.resources import Resources, wants_judge
    from evalkit.run.runner import plan, score_all

    df, chosen, config = plan(data, metrics, config, strict_columns=strict_columns)
    judged = [m for m in chosen if wants_judge(m, config)]
    resources = Resources(config, judge_factory=make_dry_judge)
    score_all(judged, df, config, resources, "record", False)
    judges = list(resources.judges().values())
    per_metric = {k: v for j in judges for k, v in j.estimate().items()}
    notes = list(dict.fromkeys(j.tokens_note() for j in judges))
    return DryRun(len(df), dict(sorted(per_metric.items())), **({"tokens": " | ".join(notes)} if notes else {}),
                  skipped=tuple(m.name for m in chosen if m not in judged))


async def aevaluate(data: pd.DataFrame | str | Path, metrics: Sequence[str] | None = None,
                    config: EvalConfig | Mapping[str, Any] | str | Path | None = None, **options: Any):
    """:func:`evaluate` awaited on the caller's event loop: ``out = await evalkit.aevaluate(df, metrics, cfg)``.

    Works inside a running loop (a Jupyter cell, an async web handler) with no "event loop is already running"
    error: the run goes to a worker thread (:func:`asyncio.to_thread`) while the loop keeps serving other tasks.
    It is the same run as :func:`evaluate` (same judge client, cache, retries, concurrency limit, scores), so there
    is one implementation of the judge's transport rules, not a second asynchronous one that could drift from it.
    Cancelling the awaiting task does not stop the thread: the run finishes (and its calls are cached) first.

    Examples
    --------
    >>> import asyncio
    >>> import pandas as pd
    >>> df = pd.DataFrame({"question": ["What is the premium?"], "answer": ["The premium is $604."]})
    >>> out = asyncio.run(aevaluate(df, ["completeness"], progress=False))
    >>> float(out.loc[0, "completeness"])
    1.0
    """
    import asyncio

    from evalkit.metrics.custom import activate_from

    out = await asyncio.to_thread(evaluate, data, metrics, config, **options)
    # a config's custom metrics belong to the thread that ran it: the caller, who reads the results, gets them too
    activate_from(out)
    return out

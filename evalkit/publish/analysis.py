"""Scoring and statistics for an experiment, shared by ``evalkit report``, the CLI and the notebooks.

:func:`plan_sections` decides, from the scored data and the experiment, which report sections apply
and, for each one that does not, the one-line note that says what to add. :func:`analyze`
computes every number the report shows (``metrics.json``) under the protocol the experiment asks
for; the report page and the notebooks read those numbers instead of recomputing them.

Examples
--------
>>> import pandas as pd
>>> from evalkit.publish.experiment import Experiment
>>> res = pd.DataFrame({"id": ["a", "b"], "relevance": [0.2, 0.8], "error": [None, None]})
>>> plan = plan_sections(res, Experiment(name="x", data="d.csv"))
>>> plan["comparison"].applies, plan["comparison"].note
(False, "no 'system' column: add one naming which system gave each answer to compare systems")
"""
from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Mapping

import pandas as pd

from evalkit.decide.aggregate import json_ready, scored_metrics, summary
from evalkit.decide.calibrate import CalibrationError, binary_labels, calibrate_frame
from evalkit.decide.compare import CompareError, compare_systems, default_pair_on
from evalkit.publish.experiment import Experiment
from evalkit.decide.judge_variance import judge_variance, repeated_metrics
from evalkit.metrics import REGISTRY
from evalkit.decide.verdict import ROLES, TRIAD, profile_disagreement, profile_held_by

JUDGED_FAMILIES = ("judged", "ragas", "custom")  # custom: a config's own judged metrics
# which notebook needs which section; a notebook whose section does not apply is skipped with its note
# (a notebook named for a metric, 01_relevance, needs that metric's section: notebook_section)
NOTEBOOK_SECTIONS = {"04_reference_metrics": "reference", "05_judged_metrics": "judge", "06_calibration": "calibration",
                     "07_compare_systems": "comparison", "09_summary_scorers": "summaries"}
# calibration's score when the experiment names none: the metric of the verdict's first rule
DEFAULT_CALIBRATION_SCORE = TRIAD[0]
# what a person adds to the data for a metric that reads these columns
_COLUMN_HINTS = {"contexts": "a 'contexts' column (retrieved passages)"}


def notebook_section(notebook: str) -> str | None:
    """The report section a notebook needs (None: it always runs). A notebook named for a metric needs that
    metric's section.

    >>> notebook_section("01_relevance"), notebook_section("07_compare_systems"), notebook_section("00_quickstart")
    ('relevance', 'comparison', None)
    """
    topic = notebook.split("_", 1)[-1]
    return topic if topic in REGISTRY else NOTEBOOK_SECTIONS.get(notebook)


@dataclass(frozen=True)
class Section:
    """One report section: does it apply to this data, and if not, what would make it apply."""

    name: str
    applies: bool
    note: str = ""


def _systems(results: pd.DataFrame) -> list[str]:
    return sorted(results["system"].dropna().unique().tolist()) if "system" in results.columns else []


def _metric_section(results: pd.DataFrame, metric: str) -> Section:
    """A metric's own section: it applies when the metric was scored; else the note names the columns it reads."""
    if metric in results.columns:
        return Section(metric, True)
    needs = REGISTRY[metric].needs
    hinted = [_COLUMN_HINTS[c] for c in needs if c in _COLUMN_HINTS]
    hint = " and ".join(hinted) if hinted else " and ".join(f"'{c}'" for c in needs)
    return Section(metric, False, f"{metric} was not scored: the data needs {hint}")


def _calibration_section(results: pd.DataFrame, cal: Mapping[str, Any]) -> Section:
    if not cal.get("label"):
        return Section("calibration", False, "not requested: add `calibration: {score: hallucination, label: "
                                             "YOUR_LABEL}` to the experiment, with a binary human label column")
    label, score = cal["label"], cal.get("score", DEFAULT_CALIBRATION_SCORE)
    if label not in results.columns:
        return Section("calibration", False, f"the data has no label column {label!r}: add a binary human label "
                                             f"(True/False or 0/1) and name it in calibration.label")
    if score not in results.columns:
        return Section("calibration", False, f"the score {score!r} was not scored: add it to metrics, or choose "
                                             f"another calibration.score")
    try:
        y = {v for v in binary_labels(results[label].tolist(), positive=cal.get("positive"), column=label) if v is not None}
    except CalibrationError as e:
        return Section("calibration", False, str(e))
    if len(y) < 2:
        return Section("calibration", False, f"the label {label!r} has a single class: calibration needs both")
    return Section("calibration", True)


def _comparison_section(results: pd.DataFrame, cmp: Mapping[str, Any]) -> Section:
    systems = _systems(results)
    if "system" not in results.columns:
        return Section("comparison", False, "no 'system' column: add one naming which system gave each answer "
                                            "to compare systems")
    if len(systems) < 2:
        return Section("comparison", False, f"one system only ({', '.join(systems) or 'none'}): add a second "
                                            f"system's answers to the same questions to compare")
    missing = [s for s in cmp.get("systems") or [] if s not in systems]
    if missing:
        return Section("comparison", False, f"compare.systems names {missing}, not in the data (systems: {systems})")
    return Section("comparison", True)


def plan_sections(results: pd.DataFrame, exp: Experiment) -> dict[str, Section]:
    """Which report sections apply to these results, with a note for each one that does not."""
    judged = [m for m in scored_metrics(results) if REGISTRY[m].family in JUDGED_FAMILIES]
    has_summaries = any(m in results.columns for m in REGISTRY.in_family("summary"))
    secs = [
        Section("by_system", "system" in results.columns,
                "" if "system" in results.columns else "no 'system' column: scores are shown for the whole dataset"),
        Section("question_type", "question_type" in results.columns,
                "" if "question_type" in results.columns else "no 'question_type' column: add one to see scores "
                                                              "by kind of question"),
        *(_metric_section(results, m) for m in REGISTRY.in_family("triad")),
        Section("verdicts", "verdict" in results.columns,
                "" if "verdict" in results.columns else "no verdict: it needs relevance, completeness and "
                                                        "hallucination (a 'contexts' column)"),
        _reference_section(results),
        Section("judge", bool(judged), "" if judged else "no judged metrics: configure a judge (a `judge:` section "
                                                         "with base_url and model, or EVALKIT_JUDGE_BASE_URL and "
                                                         "EVALKIT_JUDGE_MODEL) and add judged metrics"),
        Section("summaries", has_summaries,
                "" if has_summaries else
                "no summary scorers: for summaries of articles, add twin_lock or judge_lock to metrics"),
        _judge_variance_section(results, judged),
        _calibration_section(results, exp.calibration),
        _comparison_section(results, exp.compare),
    ]
    return {s.name: s for s in secs}


def _reference_section(results: pd.DataFrame) -> Section:
    """The reference metrics' section: it applies when a metric that compares with the expected answer ran."""
    scored = [m for m in REGISTRY.in_family("reference") if "ground_truth" in REGISTRY[m].needs and m in results.columns]
    return Section("reference", bool(scored), "" if scored else "no reference answers: add a 'ground_truth' column "
                                                                "for the reference-based metrics")


def _judge_variance_section(results: pd.DataFrame, judged: list[str]) -> Section:
    repeated = repeated_metrics(results)
    if repeated:
        return Section("judge_variance", True, "")
    return Section("judge_variance", False, "each judged answer was asked once: set `judge.repeats: 3` (with a "
                   "temperature above 0) to measure how much of the spread is the judge's own noise" if judged
                   else "no judged metrics, so no judge noise to measure")


def compare_pair(results: pd.DataFrame, cmp: Mapping[str, Any]) -> tuple[str, str]:
    """The two systems the report compares: ``compare.systems`` or the first two in sorted order."""
    systems = list(cmp.get("systems") or _systems(results))
    return systems[0], systems[1]


def calibration_numbers(results: pd.DataFrame, cal: Mapping[str, Any], seed: int = 0) -> dict[str, Any]:
    """The calibration section: :func:`evalkit.decide.calibrate.calibrate_frame` under the experiment's protocol."""
    tc = calibrate_frame(results, cal.get("score", DEFAULT_CALIBRATION_SCORE), cal["label"], positive=cal.get("positive"),
                         direction=cal.get("direction"), criterion=cal.get("criterion", "youden"),
                         split=cal.get("split"), by=[c for c in cal.get("by") or [] if c in results.columns],
                         groups=cal.get("groups"), n_resamples=int(cal.get("n_resamples", 1000)), seed=seed,
                         guarantee=cal.get("guarantee"), delta=float(cal.get("delta", 0.1)))
    return {**tc.to_dict(), "summary": tc.summary_lines()}


def estimate_numbers(results: pd.DataFrame, cal: Mapping[str, Any], seed: int = 0) -> dict[str, Any]:
    """The rate of the calibration's human label per system (and over all rows), by PPI++ from the labelled rows
    and the calibration score on every row (:func:`evalkit.decide.calibrate.estimate.estimate`); when every row is
    labelled, PPI's interval is the labels' own."""
    from evalkit.decide.calibrate.estimate import METHOD, estimate

    label, score = cal["label"], cal.get("score", DEFAULT_CALIBRATION_SCORE)
    by = "system" if "system" in results.columns and results["system"].nunique() > 1 else None
    found = estimate(results[results[score].notna()], label, [score], positive=cal.get("positive"), by=by, seed=seed)
    return {"target": label, "positive": cal.get("positive"), "using": [score], "method": METHOD,
            "estimates": [e.to_dict() for e in found]}


SUMMARY_RESAMPLES = 1000  # a report's means (``calibration.n_resamples`` overrides)
COMPARE_RESAMPLES = 2000  # a report's paired differences (``compare.n_resamples`` overrides)


def summary_settings(exp: Experiment) -> dict[str, int]:
    """The bootstrap of a report's means: resamples and seed, one setting for every output that shows them."""
    return {"n_resamples": int(exp.calibration.get("n_resamples", SUMMARY_RESAMPLES)), "seed": int(exp.seed)}


def comparison_numbers(results: pd.DataFrame, cmp: Mapping[str, Any], seed: int = 0) -> dict[str, Any]:
    """The comparison section: paired differences of every scored metric (and by ``cmp['by']``)."""
    a, b = compare_pair(results, cmp)
    # a metric with no determined value (e.g. fact checks without rules) has nothing to compare
    metrics = [m for m in scored_metrics(results) if REGISTRY[m].kind in ("score", "bool") and results[m].notna().any()]
    binary = [c for c in cmp.get("binary") or [] if c in results.columns]
    pair_on = cmp.get("pair_on") or default_pair_on(results)
    kw = dict(n_resamples=int(cmp.get("n_resamples", COMPARE_RESAMPLES)), seed=seed, binary=binary,
              positive=cmp.get("positive"), pair_on=pair_on, min_pairs=int(cmp.get("min_pairs", 10)))
    # the settings travel with the numbers: the paper prints these, it does not recompute them
    out = {"system_a": a, "system_b": b, "pair_on": pair_on, "systems": _systems(results),
           "n_resamples": kw["n_resamples"], "seed": seed, "min_pairs": kw["min_pairs"], "binary": binary,
           "table": compare_systems(results, metrics, a, b, **kw).to_dict(orient="records")}
    by = cmp.get("by")
    if by and by in results.columns:
        out["by"] = by
        out["by_table"] = compare_systems(results, metrics, a, b, by=by, **kw).to_dict(orient="records")
    return out


def threshold_boundary(results: pd.DataFrame, thresholds=None, *, label: str | None = None,
                       positive: Any = None) -> list[dict[str, Any]]:
    """Rows that sit exactly on each verdict threshold, and what the rule does with them.

    The seed's rules are strict (``hallucination > 0.5``): a row exactly on the threshold is not flagged,
    so an answer with one supported and one unsupported anchor (hallucination 1/2 = 0.5) passes. A
    calibrated profile flags its threshold inclusively (``>= t``) and catches them. One entry per rule whose
    metric the results hold: ``metric``, ``rule`` (as printed), ``value``, ``n_on`` (rows equal to the
    value, to 1e-9), ``flagged`` (does the rule flag them), ``n_on_positive`` (of those, rows with the
    ``label`` column in its positive class; None without a label) and ``text``, a sentence for the reader.

    Examples
    --------
    >>> res = pd.DataFrame({"hallucination": [0.5, 0.5, 0.25, 1.0, None]})
    >>> from evalkit.base.config import VerdictThresholds
    >>> b = threshold_boundary(res, VerdictThresholds(named="seed"))[0]
    >>> b["rule"], b["n_on"], b["flagged"]
    ('hallucination > 0.5', 2, False)
    """
    import numpy as np

    from evalkit.decide.calibrate.labels import parse_positive
    from evalkit.decide.verdict import rules_for

    if thresholds is None:  # the defaults, under the named profile whose metrics the results hold
        thresholds = profile_held_by(results.columns)

    y = None
    if label and label in results.columns:
        try:
            y = pd.Series(binary_labels(results[label].tolist(), positive=positive, column=label), index=results.index)
        except CalibrationError:
            y = None
    pos = parse_positive(positive)
    bad = f"{label} is True" if pos is None else f"{label} {pos.op} {pos.value:g}" if pos.op else f"{label} = {pos.value}"
    notes = {name: dict(role.on_threshold) for name, role in ROLES}
    out = []
    for rule in rules_for(thresholds):
        if rule.metric not in results.columns or _at_the_best_score(rule):
            continue
        v = pd.to_numeric(results[rule.metric], errors="coerce").to_numpy(dtype=float)
        on = np.isclose(v, rule.value, rtol=0.0, atol=1e-9) & ~np.isnan(v)
        n_on, flagged = int(on.sum()), rule.flags(rule.value)
        n_pos = None if y is None else int(y[on].eq(True).sum())
        ids = _ids_of(results, on)
        rows = (f"{n_on} row{'' if n_on == 1 else 's'}{_named(ids, n_on)} score{'s' if n_on == 1 else ''} exactly "
                f"{rule.value:g}")
        if flagged:
            text = f"{rule} includes its threshold: {rows} and {'is' if n_on == 1 else 'are'} flagged ({rule.outcome})."
        else:
            text = (f"{rule} is strict: {rows} and {'is' if n_on == 1 else 'are'} not flagged by it"
                    + (f" ({notes[rule.metric][rule.value]})" if rule.value in notes.get(rule.metric, {}) else "")
                    + f"; a calibrated profile flags its threshold inclusively ({'>=' if rule.flag == 'above' else '<='}).")
        if n_pos is not None and n_on:
            text += f" {n_pos} of {'it' if n_on == 1 else 'them'} {'is' if n_pos == 1 else 'are'} labelled bad ({bad})."
        out.append({"metric": rule.metric, "rule": str(rule), "value": float(rule.value), "n_on": n_on,
                    "flagged": flagged, "n_on_positive": n_pos, "ids": ids, "text": text})
    return out


def appendix_columns(results: pd.DataFrame, profile: str | None) -> list[str]:
    """The columns of the report's appendix: the row's id, system, kind and answer, then the metrics of the
    profile that decided its verdict (a newcomer read the seed profile's scores beside the evalkit profile's
    verdicts and could not tell why a row failed), the verdict and its rule; no column that is empty throughout.

    >>> res = pd.DataFrame({"id": ["q1"], "answer": ["230 V."], "relevance": [0.0], "unsupported_facts": [0.0],
    ...                     "verdict": ["PASS"], "error": [None]})
    >>> appendix_columns(res, "evalkit"), appendix_columns(res, "seed")
    (['id', 'answer', 'unsupported_facts', 'verdict'], ['id', 'answer', 'relevance', 'verdict'])
    """
    from evalkit.metrics import verdict_roles

    decided = [name for name, _ in verdict_roles(profile)] if profile in ("seed", "evalkit") else list(TRIAD)
    cols = ["id", "system", "question_type", "answer", *decided, "verdict", "verdict_rule", "error"]
    return [c for c in cols if c in results.columns and results[c].notna().any()]


_IDS_NAMED = 5  # the rows on a threshold named in its sentence; the rest are counted


def _ids_of(results: pd.DataFrame, on) -> list[str]:
    """The ids of the rows ``on`` marks (a newcomer read "1 row scores exactly 0.5" and could not find it); [] when
    the results have no id column."""
    return [str(x) for x in results.loc[on, "id"].tolist()] if "id" in results.columns else []


def _named(ids: list[str], n: int) -> str:
    """" (q03-b)", " (q01, q02, q03, q04, q05 and 2 more)": the rows by id, for the sentence; '' without ids."""
    if not ids:
        return ""
    more = f" and {n - _IDS_NAMED} more" if n > _IDS_NAMED else ""
    return f" ({', '.join(ids[:_IDS_NAMED])}{more})"


def _at_the_best_score(rule) -> bool:
    """A strict rule whose threshold is its metric's best score (the evalkit profile's ``unsupported_facts > 0``,
    ``question_coverage < 1``): the rows on it are the best answers, not borderline ones, so they are not counted
    as sitting on a boundary (and an inclusive rule there would flag every row)."""
    m = REGISTRY.get(rule.metric)
    lo, hi = (m.range if m is not None and m.range else (None, None))
    return not rule.inclusive and ((rule.flag == "above" and rule.value == lo) or (rule.flag == "below" and rule.value == hi))


def _boundary_label(results: pd.DataFrame, exp: Experiment) -> tuple[str | None, Any]:
    """The human label the boundary counts read: the calibration's, else a ``hallucinated`` column."""
    if exp.calibration.get("label") in results.columns:
        return exp.calibration["label"], exp.calibration.get("positive")
    return ("hallucinated", None) if "hallucinated" in results.columns else (None, None)


def _verdict_counts(results: pd.DataFrame) -> dict[str, int]:
    keys = ["system", "verdict"] if "system" in results.columns else ["verdict"]
    vc = results.groupby(keys, dropna=False).size()
    return {" / ".join(map(str, k)) if isinstance(k, tuple) else str(k): int(v) for k, v in vc.items()}


def analyze(results: pd.DataFrame, exp: Experiment, plan: Mapping[str, Section] | None = None) -> dict[str, Any]:
    """Every number of a report (``metrics.json``): deterministic for the same inputs and seed.

    A section that does not apply holds no numbers; ``sections`` says why. A statistic that cannot be
    computed on this data (e.g. a criterion no threshold reaches) is recorded as that section's
    ``error`` instead of failing the report.
    """
    plan = plan or plan_sections(results, exp)
    out: dict[str, Any] = {"experiment": exp.name, "rows": int(len(results)), "systems": _systems(results),
                           "errors": int(results["error"].notna().sum()) if "error" in results.columns else 0,
                           "sections": {k: asdict(v) for k, v in plan.items()}}
    boot = summary_settings(exp)
    out["bootstrap"] = boot  # how "overall" and "by_system" were resampled: the paper prints them as they are
    out["overall"] = summary(results, by=None, **boot).drop(columns=["kind"]).to_dict(orient="records")
    if plan["by_system"].applies:
        out["by_system"] = summary(results, by="system", **boot).drop(columns=["kind"]).to_dict(orient="records")
    if plan["verdicts"].applies:
        out["verdicts"] = _verdict_counts(results)
        out["verdict_profile"] = profile_disagreement(results, exp.config().thresholds)
        label, positive = _boundary_label(results, exp)  # rows exactly on a threshold, and which way they go
        # the run's cut values, under the named profile whose metrics the results hold (the run's own when it can)
        thresholds = profile_held_by(results.columns, exp.config().thresholds)
        out["verdict_boundary"] = threshold_boundary(results, thresholds, label=label, positive=positive)
    if plan["judge_variance"].applies:  # repeated judge runs: intervals over rows and repeats, agreement
        out["judge_variance"] = judge_variance(results, **boot).to_dict(orient="records")
    for name, fn, sec in (("calibration", calibration_numbers, exp.calibration),
                          ("comparison", comparison_numbers, exp.compare)):
        if plan[name].applies:
            try:
                out[name] = fn(results, sec, exp.seed)
            except (CalibrationError, CompareError) as e:
                out[name] = {"error": str(e)}
    if plan["calibration"].applies:  # the label's rate per system, valid from labels on a random sample of rows
        try:
            out["estimate"] = estimate_numbers(results, exp.calibration, exp.seed)
        except CalibrationError as e:  # EstimateError: too few labels, labels chosen near a threshold
            out["estimate"] = {"error": str(e)}
    return json_ready(out)

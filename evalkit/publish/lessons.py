"""What the numbers mean, in words generated from them: the closing cells of the notebooks.

Each function takes numbers a notebook already computed (``metrics.json`` sections, calibration results,
comparison tables) and returns Markdown; nothing here computes a statistic. The words follow the numbers: a
lesson never says an interval is narrow without its width, or that a threshold transfers without the held-out
result.

Examples
--------
>>> small_sample_note(positives=4, negatives=6, part="held-out part")[:60]
'**Small sample:** the held-out part has 4 positives and 6 ne'
>>> small_sample_note(positives=40, negatives=60) == ""
True
"""
from __future__ import annotations

from typing import Any, Mapping, Sequence

from evalkit.decide.calibrate.tables import SMALL_CLASS as SMALL  # fewer of a class than this: intervals say little
from evalkit.text.markdown import quote  # noqa: F401  (the notebooks' name for it)


def small_sample_note(positives: int, negatives: int, part: str = "data") -> str:
    """A warning when either class has fewer than ``SMALL`` rows, saying what the interval then means."""
    if min(positives, negatives) >= SMALL:
        return ""
    return (f"**Small sample:** the {part} has {positives} positives and {negatives} negatives (fewer than "
            f"{SMALL} of {'each' if max(positives, negatives) < SMALL else 'one class'}). An interval from so few "
            f"rows is wide, and with a handful of them a percentile bootstrap can even collapse to a point (every "
            f"resample ranks them alike): read it as *not yet measured*, not as certainty. Label more rows "
            f"(`evalkit.label_next`) before publishing it.")


def boundary_note(scores: Sequence[float], threshold: float, direction: str, score: str = "score") -> str:
    """How many rows sit exactly on the threshold, and which side the rule puts them on."""
    on = sum(1 for s in scores if s == threshold)
    inclusive, strict = (">=", ">") if direction == "higher" else ("<=", "<")
    return (f"`{score} {inclusive} {threshold:.4g}` flags a row whose score equals the threshold; "
            f"`{score} {strict} {threshold:.4g}` would not. In these data **{on}** row{'s' if on != 1 else ''} "
            f"score exactly {threshold:.4g}, so the two rules differ by {on} flagged answer{'s' if on != 1 else ''}."
            f" A calibrated profile writes the inclusive rule, so the verdict flags exactly the rows counted here.")


def interval_text(iv: Mapping[str, Any] | None, missing: str = "n/a") -> str:
    """An interval of metrics.json (``{estimate, low, high}``) as ``0.642 [0.416, 0.851]``; ``missing`` (the reason,
    in words) where there is no estimate, so a table never shows NaN.

    >>> interval_text({"estimate": 0.75, "low": 0.5, "high": 1.0}), interval_text({"estimate": None}, "one class")
    ('0.750 [0.500, 1.000]', 'one class')
    """
    if not iv or iv.get("estimate") is None:
        return missing
    if iv.get("low") is None:
        return f"{iv['estimate']:.3f}"
    return f"{iv['estimate']:.3f} [{iv['low']:.3f}, {iv['high']:.3f}]"



def calibration_meaning(cal: Mapping[str, Any]) -> str:
    """'What this means' for a calibration (``metrics.json``'s ``calibration`` section)."""
    auc = cal["roc_auc"]["estimate"]
    low = cal["roc_auc"]["low"]
    skill = ("separates the two classes well" if auc >= 0.85 else "separates them moderately" if auc >= 0.7
             else "separates them weakly" if auc >= 0.6 else "is close to chance")
    at = cal.get("at_threshold") or {}
    thr_ci = cal.get("threshold_ci") or {}
    lines = [f"- **Skill.** ROC AUC {interval_text(cal['roc_auc'])}: `{cal['score']}` {skill} on `{cal['label']}`"
             + (f"; even the interval's low end ({low:.3f}) is above chance." if low is not None and low > 0.5
                else "; the interval reaches chance (0.5), so skill is not established." if low is not None else ".")]
    if cal.get("threshold") is not None:
        width = (thr_ci.get("high") - thr_ci.get("low")) if thr_ci.get("low") is not None else None
        lines.append(f"- **Threshold.** {cal['criterion']} chooses {cal['threshold']:.4g}"
                     + (f"; resampling the rows moves it within [{thr_ci['low']:.4g}, {thr_ci['high']:.4g}] "
                        f"(width {width:.3g})" if width is not None else "") + ".")
        lines.append(f"- **At that threshold** precision is {interval_text(at.get('precision'))} and recall "
                     f"{interval_text(at.get('recall'))}: of the answers it flags, that share is truly `{cal['label']}`; of "
                     f"the truly `{cal['label']}` answers, that share is flagged.")
    lines.append(f"- **Protocol.** {cal['protocol']}; reported on {cal['reported_on']}."
                 + (" These numbers are optimistic: the threshold was fitted to the same rows' noise."
                    if "same rows" in cal["protocol"] else ""))
    n_pos = int(cal.get("n_pos", 0))
    note = small_sample_note(n_pos, int(cal.get("n_used", cal.get("n", 0))) - n_pos)
    return "\n".join(lines) + (f"\n\n{note}" if note else "")


def _better(r: Mapping[str, Any]) -> str | None:
    """'a' or 'b': the system on the metric's better side (the registry's ``better``), None without one (a count
    such as dont_know, a column the registry does not know)."""
    from evalkit.metrics import REGISTRY

    meta = REGISTRY.get(r["metric"])
    side = meta.better if meta is not None else None
    if side not in ("higher", "lower") or not r.get("diff"):
        return None
    return "b" if (r["diff"] > 0) == (side == "higher") else "a"


def comparison_meaning(table: Sequence[Mapping[str, Any]], a: str, b: str) -> str:
    """'What this means' for a paired comparison (``metrics.json``'s ``comparison.table``): every metric that
    differs (all of them, not a sample), which system each favours by the metric's own better side, and the
    ones the data cannot decide, each with the reason."""
    names = {"a": quote(a, 80), "b": quote(b, 80)}
    a, b = names["a"], names["b"]
    found = [r for r in table if r.get("p_holm") is not None and r["p_holm"] < 0.05 and not r.get("small")]
    lines = [f"- **{len(found)} of {len(table)} metrics** differ between {b} and {a} after Holm's correction "
             f"(adjusted p < 0.05, enough pairs)" + (":" if found else ".")]
    for r in sorted(found, key=lambda r: r["p_holm"]):
        side = _better(r)
        lines.append(f"  - `{r['metric']}`: {b} − {a} = {r['diff']:+.3f} [{r['low']:+.3f}, {r['high']:+.3f}] over "
                     f"{r['n_pairs']} pairs (Holm p {r['p_holm']:.3g})"
                     + (f": better for {names[side]}." if side else ": no better side (a count, not a quality)."))
    favours = {k: sum(_better(r) == k for r in found) for k in ("a", "b")}
    if found and any(favours.values()):
        lead = max(favours, key=favours.get)
        other = "b" if lead == "a" else "a"
        lines.append(f"- **Which is better.** {names[lead]} on {favours[lead]} of these metrics, {names[other]} on "
                     f"{favours[other]} (each by its own better side" + (": a mixed picture, read them one by one)."
                                                                          if favours[other] else ")."))
    # the complement of the line above, by the same rule: no finding after Holm's correction
    unsure = [r["metric"] for r in table if r.get("p_holm") is not None and r["p_holm"] >= 0.05 and not r.get("small")]
    if unsure:
        lines.append(f"- **Not established:** {', '.join(f'`{m}`' for m in unsure)} (Holm-adjusted p ≥ 0.05): the "
                     "data cannot say which system is better on them.")
    small = [r for r in table if r.get("small")]
    if small:
        lines.append("- **Too few pairs** for " + ", ".join(f"`{r['metric']}` ({r['n_pairs']} pairs)" for r in small)
                     + ": not findings either way.")
    return "\n".join(lines)


def next_steps(notebook: str) -> str:
    """The 'Next' cell: where a reader goes from this notebook (Markdown)."""
    steps = {
        "00": "Read `01_relevance` to `03_hallucination` for how each triad score is computed on your rows, then "
              "`06_calibration` to choose thresholds from your own labels.",
        "01": "Relevance rewards restating the question; `02_completeness` checks whether the question's "
              "keywords are answered, and `03_hallucination` whether the answer is grounded.",
        "02": "Completeness counts keywords, not facts: `03_hallucination` checks the answer's numbers, dates "
              "and claims against the contexts.",
        "03": "A threshold of 0.5 is the seed's guess: `06_calibration` chooses one from your labels, with its "
              "interval, and writes a profile the verdict applies.",
        "04": "Reference metrics need `ground_truth`; for the judge's view of the same answers see "
              "`05_judged_metrics`, and for thresholds `06_calibration`.",
        "05": "Judged scores carry the judge's noise: set `judge.repeats` and read the report's judge-variance "
              "section; calibrate them like any score in `06_calibration`.",
        "06": "Write the profile (`evalkit calibrate RESULTS --score S --label L --split seeded -o profile.yaml`) "
              "and apply it (`evalkit verdict RESULTS --thresholds profile.yaml -o OUT`); label more rows where "
              "the interval is wide (`evalkit.label_next`, `evalkit.labeler`, then `--labels labels.csv`).",
        "07": "Publish the comparison with `evalkit compare ... --format latex` or the whole run with "
              "`evalkit paper`; a difference that is not established needs more pairs, not more metrics.",
        "08": "`evalkit paper REPORT_DIR -o paper/` turns this run into tables, figures and a methods paragraph.",
        "09": "Summary scorers cap their scores on hard failures; calibrate their sub-scores against your labels "
              "in `06_calibration`.",
    }
    return "**Next.** " + steps.get(notebook[:2], "See the README for the other notebooks.")


def _mean_text(r: Mapping[str, Any]) -> str:
    if r.get("low") is None:
        return f"{r['mean']:.3f}"
    return f"{r['mean']:.3f} [{r['low']:.3f}, {r['high']:.3f}]"


def numbers_of(results: Any, *, n_resamples: int = 1000, seed: int = 0) -> dict[str, Any]:
    """The ``overall`` and ``by_system`` numbers (as ``metrics.json`` holds them) of results a notebook scored
    itself, e.g. a demonstration run of the judged metrics: its "What this means" then reads the numbers of the
    tables it shows, not the report's."""
    from evalkit.decide.aggregate import json_ready, summary

    out = {"overall": summary(results, by=None, n_resamples=n_resamples, seed=seed).to_dict(orient="records")}
    if "system" in results.columns and results["system"].nunique() > 1:
        out["by_system"] = summary(results, by="system", n_resamples=n_resamples, seed=seed).to_dict(orient="records")
    return json_ready(out)


def _established(c: Mapping[str, Any]) -> str:
    """Whether a paired difference is a finding, with the reason when it is not."""
    if c.get("small"):
        return f"not established: only {c['n_pairs']} pairs, too few for a finding"
    if c["low"] > 0 or c["high"] < 0:
        return "established (the interval excludes 0)"
    return "not established: the interval includes 0"


def metric_meaning(numbers: Mapping[str, Any], metrics: Sequence[str], results: Any = None) -> str:
    """'What this means' for some metrics, from the run's numbers: each one's mean with its interval (per
    system where there are several), the paired difference and whether its interval excludes 0 where the run
    compared systems, and the answers its verdict rule decided."""
    from evalkit.metrics import REGISTRY

    by_system = numbers.get("by_system") or []
    overall = {r["metric"]: r for r in numbers.get("overall") or []}
    cmp = {r["metric"]: r for r in (numbers.get("comparison") or {}).get("table") or []}
    lines = []
    for m in metrics:
        r = overall.get(m)
        if r is None or r.get("mean") is None:
            continue
        meta = REGISTRY.get(m)
        reads = f" ({meta.reads_as})" if meta is not None else ""
        parts = [f"- **`{m}`**{reads}: mean {_mean_text(r)} over {r['n_determined']} rows"
                 + (f" ({r['n_undetermined']} undetermined)" if r.get("n_undetermined") else "") + "."]
        per = [s for s in by_system if s["metric"] == m and s.get("mean") is not None]
        if len(per) >= 2:
            parts.append(" By system: " + "; ".join(f"{quote(s['system'], 80)} {_mean_text(s)}" for s in per) + ".")
            c = cmp.get(m)
            if c is not None and c.get("low") is not None:
                parts.append(f" Paired difference {c['diff']:+.3f} [{c['low']:+.3f}, {c['high']:+.3f}]: "
                             f"{_established(c)}.")
        lines.append("".join(parts))
    verdicts = numbers.get("verdicts") or {}
    if verdicts and results is not None and "verdict_rule" in getattr(results, "columns", []):
        fired = results["verdict_rule"].astype(str)
        for m in metrics:
            k = int(fired.str.startswith(f"{m} ").sum())
            if k:
                lines.append(f"- The verdict's `{m}` rule decided {k} of {len(results)} answers.")
    return "\n".join(lines) or "No metric of this notebook has values on these data."

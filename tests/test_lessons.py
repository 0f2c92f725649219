"""'What this means' (evalkit/publish/lessons.py): every sentence follows from the numbers it is given, and a contradiction
with them fails here. The tables below are written by hand; the expected sentences are read off them."""
from __future__ import annotations

import re

import pandas as pd

from evalkit.publish.lessons import comparison_meaning, metric_meaning, numbers_of


def _row(metric, diff, low, high, p_holm, n_pairs=42, small=False):
    return {"metric": metric, "diff": diff, "low": low, "high": high, "p_holm": p_holm, "n_pairs": n_pairs,
            "small": small}


TABLE = [  # B - A; hallucination is lower-is-better, the rest higher-is-better; dont_know has no better side
    _row("hallucination", 0.375, 0.259, 0.501, 0.019),   # B hallucinates more: better for A
    _row("completeness", -0.130, -0.221, -0.040, 0.036),  # B less complete: better for A
    _row("support", 0.05, 0.01, 0.09, 0.04),              # B better supported: better for B
    _row("relevance", -0.049, -0.105, 0.010, 0.194),      # not established
    _row("dont_know", 0.095, 0.024, 0.190, 0.030),        # differs, no better side
    _row("fact_checks", -0.614, -0.751, -0.475, 0.019, n_pairs=9, small=True),
    _row("exact_match", -0.190, -0.310, -0.071, 0.019), _row("number_match", -0.647, -0.770, -0.518, 0.019),
    _row("keyword_coverage", -0.386, -0.476, -0.301, 0.019)]


def test_comparison_meaning_lists_every_finding_and_says_which_system_is_better():
    text = comparison_meaning(TABLE, "base", "tuned")
    found = [r for r in TABLE if r["p_holm"] < 0.05 and not r["small"]]  # the rule the first line states
    assert text.startswith(f"- **{len(found)} of {len(TABLE)} metrics** differ between tuned and base")
    listed = re.findall(r"^  - `(\w+)`", text, flags=re.M)
    assert sorted(listed) == sorted(r["metric"] for r in found)  # all of them, not the first five
    assert "`hallucination`: tuned − base = +0.375 [+0.259, +0.501] over 42 pairs (Holm p 0.019): better for base." in text
    assert "`support`: tuned − base = +0.050 [+0.010, +0.090] over 42 pairs (Holm p 0.04): better for tuned." in text
    assert "`dont_know`" in text and "no better side" in text
    # by hand: A is better on hallucination, completeness, exact_match, number_match, keyword_coverage (5); B on 1
    assert "- **Which is better.** base on 5 of these metrics, tuned on 1" in text
    assert "**Not established:** `relevance`" in text
    assert "- **Too few pairs** for `fact_checks` (9 pairs)" in text


def test_metric_meaning_gives_the_reason_a_difference_is_not_established():
    numbers = {"overall": [{"metric": "relevance", "mean": 0.3, "low": 0.2, "high": 0.4, "n_determined": 84}],
               "by_system": [{"system": "a", "metric": "relevance", "mean": 0.35, "low": 0.3, "high": 0.4},
                             {"system": "b", "metric": "relevance", "mean": 0.25, "low": 0.2, "high": 0.3}],
               "comparison": {"table": [_row("relevance", -3.485, -5.064, -1.220, 0.2, n_pairs=6, small=True)]}}
    assert "Paired difference -3.485 [-5.064, -1.220]: not established: only 6 pairs, too few for a finding." in \
        metric_meaning(numbers, ["relevance"])
    numbers["comparison"]["table"] = [_row("relevance", -0.1, -0.2, 0.05, 0.2)]
    assert ": not established: the interval includes 0." in metric_meaning(numbers, ["relevance"])
    numbers["comparison"]["table"] = [_row("relevance", -0.1, -0.2, -0.05, 0.01)]
    assert ": established (the interval excludes 0)." in metric_meaning(numbers, ["relevance"])


def test_a_notebooks_own_run_is_what_its_meaning_reads():
    """05 opened alone scores the judged metrics itself: its 'What this means' reads those numbers (it said "No
    metric of this notebook has values on these data." under its own tables)."""
    judged = pd.DataFrame({"system": ["a", "a", "b", "b"], "faithfulness": [80.0, 60.0, 40.0, 20.0]})
    numbers = numbers_of(judged, n_resamples=0)
    text = metric_meaning(numbers, ["faithfulness"])
    assert "mean 50.000 over 4 rows" in text and "a 70.000; b 30.000" in text.replace("`", "")
    assert "No metric of this notebook" not in text

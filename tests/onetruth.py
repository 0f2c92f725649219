"""The one-truth check: a paper built from a report prints the report's own numbers."""
from __future__ import annotations

import json


def _tex_number(v) -> str:
    """A number as the paper's tables print it (3 decimals, TeX's minus, '<0.001' for small p)."""
    return "n/a" if v is None else f"{v:.3f}".replace("-", "$-$")


def assert_one_truth(report, paper) -> None:
    """Every number the paper's tables share with the report's metrics.json is the same, and the methods' pair
    count and resamples are those of the comparison table. The expected strings are formatted here from
    metrics.json, not by the code that writes the paper."""
    numbers = json.loads((report / "metrics.json").read_text())
    compare = (paper / "tables" / "compare.tex").read_text()
    rows = {line.split(" & ")[0]: line for line in compare.splitlines() if " & " in line}
    cmp = numbers["comparison"]
    for r in cmp["table"]:
        line = rows[r["metric"].replace("_", r"\_")]
        assert f"{_tex_number(r['diff'])} [{_tex_number(r['low'])}, {_tex_number(r['high'])}]" in line, line
        p = r["p_holm"]
        assert (f"& {_tex_number(p)} " if p >= 0.001 else "& $<$0.001 ") in line, (r["metric"], p, line)
        assert line.rstrip().endswith(f"& {_tex_number(p)} \\\\" if p >= 0.001 else "& $<$0.001 \\\\"), line  # Holm last
    summary = (paper / "tables" / "summary.tex").read_text()
    lines = {line.split(" & ")[0]: line for line in summary.splitlines() if " & " in line}
    head = lines["metric"].split(" & ")
    for r in numbers["by_system"]:
        if r["mean"] is not None and r["low"] is not None:  # the system's column of the metric's row
            cell = lines[r["metric"].replace("_", r"\_")].split(" & ")[head.index(r["system"])]
            assert cell == f"{_tex_number(r['mean'])} [{_tex_number(r['low'])}, {_tex_number(r['high'])}]", (r, cell)
    tex = (paper / "methods.tex").read_text().replace("\n", " ")
    pairs = sorted({r["n_pairs"] for r in cmp["table"]})
    said = f"({pairs[0]} pairs)" if len(pairs) == 1 else f"({pairs[0]} to {pairs[-1]} pairs;"
    assert said in tex, said
    assert f"paired bootstrap interval ({cmp['n_resamples']} resamples, seed {cmp['seed']})" in tex
    boot = numbers["bootstrap"]
    assert f"({boot['n_resamples']} resamples, seed {boot['seed']}); a metric's mean" in tex

"""evalkit.publish.tables: one LaTeX/Markdown writer for every table; every LaTeX output is compiled with pdflatex.

Expected cells are written out by hand: the means, differences and McNemar counts below are computed in the
comments from the data each test builds.
"""
from __future__ import annotations

import math

import pandas as pd
import pytest

from evalkit.cli import main
from evalkit.publish.tables import (Cell, Interval, Table, calibration_table, frame_table, latex_escape,
                            markdown_escape, summary_table, to_latex, to_markdown)

from .texcheck import compile_body, first_page_png, ink_share

WEIRD = "sys_%&#${}~^\\"  # every character LaTeX treats specially
WEIRD_METRIC = "m_%&#${}~^\\"


def _rows(tex: str) -> list[str]:
    """The body rows of a tabular (between \\midrule and \\bottomrule)."""
    body = tex.split("\\midrule\n", 1)[1].split("\\bottomrule", 1)[0]
    return [line for line in body.splitlines() if line]


def _header_rows(tex: str) -> list[str]:
    return [line for line in tex.split("\\toprule\n", 1)[1].split("\\midrule", 1)[0].splitlines() if line]


@pytest.mark.parametrize("raw, tex", [("_", r"\_"), ("%", r"\%"), ("&", r"\&"), ("#", r"\#"), ("$", r"$\$$"),
                                      ("{", r"\{"), ("}", r"\}"), ("~", r"\~{}"), ("^", r"\^{}"),
                                      ("\\", r"$\backslash$"), ("<", "$<$"), ("|", "$|$"), ("≥", r"$\geq$"),
                                      ("é", "é"), ("a\nb", "a b")])
def test_latex_escape_each_special_character(raw, tex):
    assert latex_escape(raw) == tex


def test_markdown_escape():
    assert markdown_escape("a_b|c*d`e\\f<g>") == "a\\_b\\|c\\*d\\`e\\\\f\\<g\\>"
    assert markdown_escape("two\nlines") == "two lines"


def _hand_table(digits=3):
    return Table(("system", "score", "passed", "n"),
                 (("rag_a", Interval(0.6423, 0.4161, 0.8512), True, 12), ("b", None, False, 3)),
                 caption="Scores & passes", label="scores", digits=digits)


def test_latex_rules_by_hand(tmp_path):
    tex = to_latex(_hand_table())
    assert _header_rows(tex) == [r"system & score & passed & n \\"]  # one header row
    assert _rows(tex) == [r"rag\_a & 0.642 [0.416, 0.851] & yes & 12 \\",  # booleans as words
                          r"b & --\textsuperscript{a} & no & 3 \\"]  # missing: en dash with a footnote mark
    assert r"\caption{Scores \& passes}" in tex and r"\label{tab:scores}" in tex
    assert r"\textsuperscript{a}~no value." in tex and "Numbers are rounded to 3 decimals" in tex
    assert r"\begin{tabular}{lrrr}" in tex and "\\toprule" in tex and "\\bottomrule" in tex
    compile_body(tmp_path, tex)


def test_markdown_same_rules_by_hand():
    md = to_markdown(_hand_table()).splitlines()
    assert md[0] == "| system | score | passed | n |"
    assert md[1] == "| :--- | ---: | ---: | ---: |"
    assert md[2] == "| rag\\_a | 0.642 [0.416, 0.851] | yes | 12 |"
    assert md[3] == "| b | –<sup>a</sup> | no | 3 |"
    assert "Table: Scores & passes {#tab:scores}" in md
    assert md[-1].endswith("<sup>a</sup> no value.")


def test_precision_is_stated_and_applied():
    tex = to_latex(_hand_table(digits=1))
    assert _rows(tex)[0] == r"rag\_a & 0.6 [0.4, 0.9] & yes & 12 \\"
    assert "Numbers are rounded to 1 decimal;" in tex


def test_small_p_values_and_cell_notes():
    t = Table(("metric", "p"), (("a", 0.0004), ("b", Cell(0.25, "only 3 pairs"))), caption="c", label="l",
              p_columns=("p",))
    assert _rows(to_latex(t)) == [r"a & $<$0.001 \\", r"b & 0.250\textsuperscript{a} \\"]
    assert "| a | \\<0.001 |" in to_markdown(t)
    assert r"\textsuperscript{a}~only 3 pairs." in to_latex(t)


def test_summary_table_escapes_metric_names_and_explains_missing(tmp_path):
    # a hand-made tidy summary: the first metric counts things (micro), the second does not
    tidy = pd.DataFrame([
        {"system": WEIRD, "metric": WEIRD_METRIC, "n": 4, "n_undetermined": 1, "n_error": 0, "mean": 0.5,
         "low": 0.25, "high": 0.75, "micro": 0.4, "micro_low": 0.2, "micro_high": 0.6},
        {"system": WEIRD, "metric": "plain", "n": 4, "n_undetermined": 0, "n_error": 2, "mean": 0.125,
         "low": None, "high": None, "micro": None, "micro_low": None, "micro_high": None}])
    tex = to_latex(summary_table(tidy, by="system"))
    esc = r"m\_\%\&\#$\$$\{\}\~{}\^{}$\backslash$"
    assert _header_rows(tex) == [r"metric & system & mean [95\% CI] & micro [95\% CI] & n (undet., err.) \\"]
    assert _rows(tex) == [
        rf"{esc} & sys\_\%\&\#$\$$\{{\}}\~{{}}\^{{}}$\backslash$ & 0.500 [0.250, 0.750] & 0.400 [0.200, 0.600] & 4 (1, 0) \\",
        r"plain & sys\_\%\&\#$\$$\{\}\~{}\^{}$\backslash$ & 0.125 & --\textsuperscript{a} & 4 (0, 2) \\"]
    assert r"\textsuperscript{a}~the metric counts nothing: no corpus value." in tex
    compile_body(tmp_path, tex)


def _compare_data(tmp_path, n=12):
    # a: 0.0, 0.1, ..., 1.1 (mean 0.55); b = a + 0.25 on every pair (mean 0.80, difference exactly 0.25, so
    # every resample's mean difference is 0.25: interval [0.250, 0.250]); ok: a always right, b right on the
    # odd items only -> 6 discordant pairs, all "only a"; McNemar two-sided exact p = 2 * 0.5**6 = 0.03125
    q = [f"Q{i}?" for i in range(n)]
    a = [i / 10 for i in range(n)]
    df = pd.DataFrame({"question": q + q, "system": ["base"] * n + [WEIRD] * n,
                       WEIRD_METRIC: a + [v + 0.25 for v in a],
                       "ok": [True] * n + [i % 2 == 1 for i in range(n)]})
    p = tmp_path / "t.csv"
    df.to_csv(p, index=False)
    return str(p)


def test_compare_latex_by_hand_and_compiles(tmp_path, capsys):
    t = _compare_data(tmp_path)
    assert main(["compare", t, "--a", "base", "--b", WEIRD, "--metrics", WEIRD_METRIC, "--binary", "ok",
                 "--format", "latex", "--resamples", "200"]) == 0
    tex = capsys.readouterr().out
    assert _header_rows(tex) == [r"metric & pairs & mean A & mean B & B $-$ A [95\% CI] & p (bootstrap) & p (Holm) "
                                 r"& only A & only B & p (McNemar) \\"]
    rows = _rows(tex)
    assert rows[0].startswith(r"m\_\%\&\#$\$$\{\}\~{}\^{}$\backslash$ & 12 & 0.550 & 0.800 & 0.250 [0.250, 0.250] & ")
    assert rows[0].endswith(r"& --\textsuperscript{a} & --\textsuperscript{a} & --\textsuperscript{a} \\")
    # ok: a's rate 12/12 = 1.000, b's 6/12 = 0.500, difference -0.500 (a minus sign); McNemar 6 and 0
    # discordant, p 0.031
    assert rows[1].startswith(r"ok & 12 & 1.000 & 0.500 & $-$0.500 [$-$")
    assert rows[1].endswith(r"& 6 & 0 & 0.031 \\")
    assert "NaN" not in tex and "False" not in tex and "None" not in tex
    assert r"\textsuperscript{a}~McNemar's test applies to binary columns only." in tex
    compile_body(tmp_path / "tex", tex)


def test_compare_markdown_same_rules(tmp_path, capsys):
    t = _compare_data(tmp_path)
    assert main(["compare", t, "--a", "base", "--b", WEIRD, "--metrics", WEIRD_METRIC, "--binary", "ok",
                 "--format", "markdown", "--resamples", "200"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("| metric | pairs | mean A | mean B | B − A [95% CI] |")
    ok = next(line for line in lines if line.startswith("| ok |"))
    assert ok.startswith("| ok | 12 | 1.000 | 0.500 | -0.500 [-") and ok.endswith("| 6 | 0 | 0.031 |")


def test_compare_few_pairs_footnote(tmp_path, capsys):
    t = _compare_data(tmp_path, n=3)
    assert main(["compare", t, "--a", "base", "--b", WEIRD, "--metrics", WEIRD_METRIC, "--format", "latex",
                 "--resamples", "50"]) == 0
    tex = capsys.readouterr().out
    assert _rows(tex)[0].split(" & ")[1] == r"3\textsuperscript{a}"
    assert r"\textsuperscript{a}~only 3 pairs ($<$ 10): p-values are not findings." in tex
    compile_body(tmp_path / "tex", tex)


def test_summary_cli_latex_and_markdown(tmp_path, capsys):
    # relevance of the weird system: (0.2 + 0.4) / 2 = 0.300; of base: 0.6 twice, interval [0.600, 0.600]
    p = tmp_path / "r.csv"
    pd.DataFrame({"system": [WEIRD, WEIRD, "base", "base"], "relevance": [0.2, 0.4, 0.6, 0.6]}).to_csv(p, index=False)
    assert main(["summary", str(p), "--format", "latex", "--resamples", "100"]) == 0
    tex = capsys.readouterr().out
    rows = _rows(tex)
    # the metric column wraps (a long label), so its cells are ragged right and rows end in \tabularnewline
    assert rows[0] == r"\raggedright relevance (0..1, higher is better) & base & 0.600 [0.600, 0.600] & 2 (0, 0) " \
                      r"\tabularnewline"
    assert rows[1].startswith(r"\raggedright relevance (0..1, higher is better) & sys\_\%\&\#$\$$\{\}\~{}\^{}"
                              r"$\backslash$ & 0.300 [")
    assert r"\caption{" in tex and r"\label{tab:summary}" in tex
    compile_body(tmp_path / "tex", tex)
    assert main(["summary", str(p), "--format", "markdown", "--resamples", "0"]) == 0
    md = capsys.readouterr().out
    assert "| relevance (0..1, higher is better) | sys\\_%&#${}~^\\\\ | 0.300 | 2 (0, 0) |" in md
    assert "Intervals were not computed (0 bootstrap resamples)." in md


def test_calibration_table_compiles(tmp_path):
    cal = {"score": "hallucination", "label": "is_bad", "criterion": "youden", "protocol": "seeded split (seed 0)",
           "reported_on": "20 held-out rows", "roc_auc": {"estimate": 0.875, "low": 0.7, "high": 1.0},
           "pr_auc": {"estimate": 0.8, "low": None, "high": None}, "threshold": 0.5,
           "threshold_ci": {"low": 0.25, "high": 0.5}, "at_threshold": None}
    tex = to_latex(calibration_table(cal))
    assert _rows(tex) == [r"ROC AUC & 0.875 [0.700, 1.000] \\", r"PR AUC & 0.800 \\",
                          r"threshold & 0.500 [0.250, 0.500] \\", r"precision & --\textsuperscript{a} \\",
                          r"recall & --\textsuperscript{a} \\", r"F1 & --\textsuperscript{a} \\"]
    compile_body(tmp_path, tex)


def test_frame_table_types_numpy_and_missing(tmp_path):
    # a notebook's or the judge-variance frame: floats, NaN, booleans, integers, names with underscores
    df = pd.DataFrame({"metric_name": ["x_1", "y%"], "v": [0.5, math.nan], "flag": [True, False], "k": [1, 2]})
    tex = to_latex(frame_table(df, caption="judge_share: variance", label="f"))
    assert _header_rows(tex) == [r"metric\_name & v & flag & k \\"]
    assert _rows(tex) == [r"x\_1 & 0.500 & yes & 1 \\", r"y\% & --\textsuperscript{a} & no & 2 \\"]
    compile_body(tmp_path, tex)


def test_compiled_page_is_not_blank(tmp_path):
    pdf = compile_body(tmp_path, to_latex(_hand_table()))
    share = ink_share(first_page_png(pdf))
    assert 0.0005 < share < 0.5  # some ink, not a black page

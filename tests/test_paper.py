"""evalkit paper: tables, print figures, a methods paragraph, references and a main.tex that compiles.

The run below is built by hand (24 answers, 2 systems, 12 questions, seed 7, a judge), so every number the
methods text must state is known without running the code under test.
"""
from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pandas as pd
import pytest

from evalkit.cli import main

from .onetruth import assert_one_truth
from .texcheck import compile_tex, first_page_png, ink_share, need, page_fill

ROOT = Path(__file__).resolve().parents[1]
WEIRD = "sys_%&#${}~^\\"
SIGNATURE = {"evalkit": "0.1.0", "seed": 7, "data_sha256": "0123456789abcdef" * 4,
             "thresholds": {"hallucination_fail": 0.5, "relevance_fail": 0.1, "completeness_warn": 0.6},
             "threshold_profile": [], "judge": "openai-chat:gpt-test@t0", "judge_prompts_sha256": "fedcba9876543210" * 4,
             "signature": "evalkit:0.1.0|th:c0.6,h0.5,r0.1|data:0123456789ab|judge:openai-chat:gpt-test@t0|seed:7"}


def _results(n: int = 12) -> pd.DataFrame:
    q = [f"Question {i}?" for i in range(n)]
    rel_a = [0.2 + 0.05 * i for i in range(n)]
    return pd.DataFrame({
        "id": [f"q{i}" for i in range(n)] * 2, "question": q + q, "system": ["base"] * n + [WEIRD] * n,
        "relevance": rel_a + [v + 0.1 for v in rel_a],
        "hallucination": [0.25] * n + [0.5] * n,
        "exact_match": [i % 2 == 0 for i in range(n)] + [True] * n,
        "bert_score_f1": [80.0 + i for i in range(n)] + [85.0 + i for i in range(n)],
        "correct": [i % 2 == 0 for i in range(n)] + [True] * n,
        "verdict": ["PASS"] * n + ["WARN"] * n})


def _build(folder) -> str:
    """pdflatex, bibtex, pdflatex twice; every pdflatex run fails the test on a LaTeX error."""
    compile_tex(folder, "main.tex")
    p = subprocess.run([need("bibtex"), "main"], cwd=folder, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stdout
    compile_tex(folder, "main.tex", runs=2)
    return (folder / "main.log").read_text(errors="replace")


def test_paper_from_a_results_file(tmp_path, capsys):
    df = _results()
    df.attrs["evalkit"] = {"signature": SIGNATURE, "signature_string": SIGNATURE["signature"]}
    src = tmp_path / "results.parquet"
    df.to_parquet(src, index=False)
    out = tmp_path / "paper"
    assert main(["paper", str(src), "-o", str(out), "--resamples", "100"]) == 0
    assert "main.tex" in capsys.readouterr().out
    for f in ("main.tex", "methods.tex", "methods.md", "references.bib", "tables/summary.tex", "tables/compare.tex",
              "figures/metric_means.pdf", "figures/metric_means.svg", "figures/metric_means_wide.pdf",
              "figures/comparison.pdf", "figures/verdicts_wide.svg"):
        assert (out / f).exists(), f
    tex = (out / "methods.tex").read_text()
    # the numbers of the run, as built above
    assert "We evaluated 24 answers from 2 systems" in tex and "to 12 distinct questions" in tex
    assert r"\texttt{sys\_\%\&\#$\$$\{\}\~{}\^{}$\backslash$}" in tex  # the system's name, escaped
    assert r"(100 resamples, seed 7)" in tex and "(12 pairs)" in tex
    assert r"\texttt{openai-\allowbreak{}chat:\allowbreak{}gpt-\allowbreak{}test@\allowbreak{}t0}" in tex  # breaks after separators
    assert r"\texttt{fedcba987654}" in tex
    assert r"\texttt{hallucination $>$ 0.5} (FAIL)" in tex and "not tuned on these data" in tex
    assert r"adjusted across the 4 metrics with Holm's step-down procedure~\cite{holm1979}" in tex
    assert r"~\cite{zhang2020bertscore,wang2020minilm}" in tex and r"~\cite{efron1979bootstrap}" in tex
    assert "95\\% percentile bootstrap" in tex  # a bare % would start a LaTeX comment
    md = (out / "methods.md").read_text()
    assert "We evaluated 24 answers" in md and "[@holm1979]" in md and "95% percentile" in md
    bib = (out / "references.bib").read_text()
    keys = re.findall(r"^@\w+\{(\w+),", bib, flags=re.M)
    assert sorted(keys) == ["efron1979bootstrap", "holm1979", "wang2020minilm", "zhang2020bertscore"]
    assert "Annals of Statistics" in bib and "Scandinavian Journal of Statistics" in bib
    log = _build(out)
    assert "Citation" not in log or "undefined" not in log  # every \cite resolved by bibtex
    assert "Overfull \\hbox" not in log  # nothing runs past the margin: the signature and the tables wrap
    if shutil.which("pdftotext"):
        text = subprocess.run(["pdftotext", str(out / "main.pdf"), "-"], capture_output=True, text=True).stdout
        assert "95% percentile bootstrap" in text and "We evaluated 24 answers" in text
    share = ink_share(first_page_png(out / "main.pdf"))
    assert 0.005 < share < 0.5  # text on the first page, not a blank or black page


def _report_folder(tmp_path):
    d = tmp_path / "reports" / "demo"
    d.mkdir(parents=True)
    _results().to_parquet(d / "results.parquet", index=False)
    (d / "signature.json").write_text(json.dumps(SIGNATURE))
    cal = {"score": "hallucination", "label": "correct", "positive": None, "criterion": "youden",
           "protocol": "seeded split (seed 7, 50% to choose)", "reported_on": "12 held-out rows", "n": 24, "n_used": 24,
           "n_pos": 18, "threshold": 0.5, "threshold_ci": {"low": 0.25, "high": 0.5, "estimate": None},
           "roc_auc": {"estimate": 0.75, "low": 0.6, "high": 0.9}, "pr_auc": {"estimate": 0.8, "low": 0.7, "high": 0.95},
           "at_threshold": {"precision": {"estimate": 1.0, "low": 1.0, "high": 1.0},
                            "recall": {"estimate": 0.5, "low": 0.25, "high": 0.75},
                            "f1": {"estimate": 0.667, "low": 0.4, "high": 0.857}},
           "n_resamples": 300, "seed": 7}
    cmp = {"system_a": "base", "system_b": WEIRD, "pair_on": "id",
           "table": [{"metric": "correct", "p_mcnemar": 0.03125}, {"metric": "relevance", "p_mcnemar": None}]}
    (d / "metrics.json").write_text(json.dumps({"rows": 24, "calibration": cal, "comparison": cmp}))
    return d


def test_paper_from_a_report_folder(tmp_path):
    d = _report_folder(tmp_path)
    out = tmp_path / "paper"
    assert main(["paper", str(d), "-o", str(out), "--resamples", "100"]) == 0
    tex = (out / "methods.tex").read_text()
    assert r"by the youden criterion~\cite{youden1950}" in tex
    assert "seeded split (seed 7, 50\\% to choose), reported on 12 held-out rows" in tex
    assert "It is 0.500 (95\\% bootstrap interval [0.250, 0.500], 300 resamples, seed 7); ROC AUC 0.750 [0.600, 0.900]" in tex
    assert r"exact McNemar test on discordant pairs~\cite{mcnemar1947}" in tex and r"\texttt{correct}" in tex
    assert r"Human labels (\texttt{correct}) were available for 24 rows, 18 of them positive." in tex
    cal = (out / "tables" / "calibration.tex").read_text()
    assert r"ROC AUC & 0.750 [0.600, 0.900] \\" in cal and r"recall & 0.500 [0.250, 0.750] \\" in cal
    # McNemar on `correct` (base right on the even items, the other system on all): 6 discordant pairs, all
    # "only B"; two-sided exact p = 2 * 0.5**6 = 0.03125
    compare = (out / "tables" / "compare.tex").read_text()
    assert re.search(r"^correct & 12 & 0\.500 & 1\.000 & ", compare, flags=re.M)
    # McNemar's counts and p are a note under the table (a column of dashes for every other metric was not)
    assert "McNemar's exact test on correct: positive for A only on 0 pairs, for B only on 6, p = 0.031." in compare
    assert "only A" not in compare
    keys = re.findall(r"^@\w+\{(\w+),", (out / "references.bib").read_text(), flags=re.M)
    assert {"youden1950", "mcnemar1947", "holm1979", "efron1979bootstrap"} <= set(keys)
    assert "es2024ragas" not in keys and "liu2023geval" not in keys  # no judged metric was used
    _build(out)


def test_paper_refuses_a_user_folder(tmp_path, capsys):
    d = _report_folder(tmp_path)
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("keep me")
    assert main(["paper", str(d), "-o", str(mine)]) == 2
    assert "evalkit did not create" in capsys.readouterr().err
    assert (mine / "notes.txt").read_text() == "keep me"


def _pdf_width_pt(path) -> float:
    box = re.search(rb"/MediaBox\s*\[\s*0\s+0\s+([\d.]+)\s+([\d.]+)\s*\]", path.read_bytes())
    return float(box.group(1))


def test_print_figures_widths_palette_and_labels(tmp_path):
    import matplotlib.pyplot as plt
    from matplotlib.colors import to_hex

    from evalkit.publish import plots
    from evalkit.decide.aggregate import summary
    from evalkit.decide.compare import compare_systems

    df = _results()
    means = plots.metric_means(summary(df, by="system", n_resamples=50), by="system")
    paths = plots.save_for_print(means, "means", tmp_path)
    assert [p.name for p in paths] == ["means.pdf", "means.svg", "means_wide.pdf", "means_wide.svg"]
    assert _pdf_width_pt(tmp_path / "means.pdf") == pytest.approx(3.5 * 72, abs=0.5)  # 252 pt
    assert _pdf_width_pt(tmp_path / "means_wide.pdf") == pytest.approx(7 * 72, abs=0.5)  # 504 pt
    assert re.search(r'<svg[^>]*width="252pt"', (tmp_path / "means.svg").read_text())
    bars = {to_hex(p.get_facecolor()).upper() for ax in means.axes for p in ax.patches}
    assert bars <= set(plots.OKABE_ITO) and len(bars) == 2  # two systems, two Okabe-Ito colours
    assert plots.overlapping_labels(means) == []
    texts = [t for t in means.findobj(plt.Text) if t.get_text()]
    assert {t.get_fontsize() for t in texts} <= {8.0, 9.0}  # the document's footnote size; titles a point larger
    plt.close(means)
    forest = plots.comparison_forest(compare_systems(df, ["relevance", "hallucination", "bert_score_f1"], "base",
                                                     WEIRD, n_resamples=50))
    plots.save_for_print(forest, "forest", tmp_path, widths=("column",))
    assert plots.overlapping_labels(forest) == []
    plt.close(forest)


def test_paper_of_one_system_without_verdicts(tmp_path):
    # 3 answers, no system column, no signature: relevance (0.2 + 0.4) / 2 = 0.300 over 2 determined rows
    src = tmp_path / "one.parquet"
    pd.DataFrame({"question": ["a?", "b?", "c?"], "relevance": [0.2, 0.4, None],
                  "exact_match": [True, False, True]}).to_parquet(src, index=False)
    out = tmp_path / "paper"
    assert main(["paper", str(src), "-o", str(out), "--resamples", "50", "--seed", "3"]) == 0
    md = (out / "methods.md").read_text()
    assert md.startswith("We evaluated 3 answers to 3 distinct questions.")
    assert "No verdict thresholds were applied." in md and "(50 resamples, seed 3)" in md and "(evalkit" not in md
    assert not (out / "tables" / "compare.tex").exists()
    assert re.search(r"^\\raggedright relevance \(0\.\.1, higher is better\) & 0\.300 \[.*\] & 3 \(1, 0\) "
                     r"\\tabularnewline$",
                     (out / "tables" / "summary.tex").read_text(), flags=re.M)
    assert re.findall(r"^@\w+\{(\w+),", (out / "references.bib").read_text(), flags=re.M) == ["efron1979bootstrap"]
    _build(out)


def _paper_of(tmp_path, change):
    """The paper of the hand-built report folder whose metrics.json ``change(numbers)`` edited first."""
    d = _report_folder(tmp_path)
    numbers = json.loads((d / "metrics.json").read_text())
    change(numbers)
    (d / "metrics.json").write_text(json.dumps(numbers))
    out = tmp_path / "paper"
    assert main(["paper", str(d), "-o", str(out), "--resamples", "100"]) == 0
    return out


def test_paper_states_the_ppi_estimate_with_its_citations(tmp_path):
    out = _paper_of(tmp_path, lambda numbers: numbers.update(estimate={
        "target": "correct", "positive": None, "using": ["hallucination"], "method": "PPI++",
        "estimates": [{"group": "base", "labelled": 5, "rows": 12,
                       "ppi": {"estimate": 0.52, "low": 0.31, "high": 0.73, "n": 12}},
                      {"group": "new", "labelled": 7, "rows": 12,
                       "ppi": {"estimate": 0.9, "low": 0.8, "high": 1.0, "n": 12}}]}))
    tex = (out / "methods.tex").read_text()
    assert (r"The rate of \texttt{correct} was estimated by prediction-powered inference with power "
            r"tuning~\cite{angelopoulos2023ppi,angelopoulos2024ppipp} from the 12 labelled of 24 rows and "
            r"\texttt{hallucination} on every row") in tex
    assert r"\texttt{base} 0.520 [0.310, 0.730] and \texttt{new} 0.900 [0.800, 1.000]." in tex
    keys = re.findall(r"^@\w+\{(\w+),", (out / "references.bib").read_text(), flags=re.M)
    assert {"angelopoulos2023ppi", "angelopoulos2024ppipp"} <= set(keys)
    md = (out / "methods.md").read_text()
    assert "[@angelopoulos2023ppi; @angelopoulos2024ppipp]" in md
    _build(out)


def test_paper_states_a_guaranteed_threshold_with_its_assumption(tmp_path):
    out = _paper_of(tmp_path, lambda numbers: numbers["calibration"].update(guarantee={
        "measure": "false_pass", "level": 0.1, "delta": 0.1, "threshold": 0.5, "rows": 12,
        "statement": "false_pass <= 0.1 with probability >= 0.9"}))
    tex = (out / "methods.tex").read_text()
    assert (r"by Learn-then-Test risk control~\cite{angelopoulos2021ltt} on 12 rows (seeded split (seed 7, 50\% to "
            r"choose)), so that the false-pass rate is at most 0.1 with probability at least 0.9 on rows exchangeable "
            r"with them; it is 0.500, reported on 12 held-out rows.") in tex
    assert "youden" not in tex
    assert "angelopoulos2021ltt" in (out / "references.bib").read_text()
    _build(out)


def test_one_truth_report_paper_and_compare(tmp_path, sample_results, capsys):
    """A report folder as `evalkit report` writes it (analyze on the scored sample), the paper built from it, and
    `evalkit compare` on its results with the report's settings: every shared number is the same."""
    from evalkit.publish.analysis import analyze
    from evalkit.publish.experiment import load_experiment

    report = tmp_path / "report"
    report.mkdir()
    r = sample_results.copy()
    r.attrs.clear()
    r.to_parquet(report / "results.parquet")
    exp = load_experiment(ROOT / "experiments" / "default.yaml")
    (report / "metrics.json").write_text(json.dumps(analyze(r, exp)))
    (report / "signature.json").write_text(json.dumps({"signature": "evalkit:test|seed:0", "seed": 0}))
    assert main(["paper", str(report), "-o", str(tmp_path / "paper")]) == 0
    assert_one_truth(report, tmp_path / "paper")
    numbers = json.loads((report / "metrics.json").read_text())
    # the command line's comparison, with the experiment's pairing and binary column, gives the report's numbers
    assert main(["compare", str(report / "results.parquet"), "--a", "rag-a", "--b", "rag-b", "--binary", "correct",
                 "--pair-on", "id", "-o", str(tmp_path / "cmp.csv")]) == 0
    cli = pd.read_csv(tmp_path / "cmp.csv").set_index("metric")
    saved = pd.DataFrame(json.loads((report / "metrics.json").read_text())["comparison"]["table"]).set_index("metric")
    for col in ("diff", "low", "high", "p_holm", "n_pairs"):
        assert cli.loc[saved.index, col].tolist() == pytest.approx(saved[col].tolist(), abs=1e-9), col  # json keeps 10 decimals
    # a paper you would submit: at most 4 pages, none mostly blank but the last, nothing past the margin
    log = _build(tmp_path / "paper")
    fill = page_fill(tmp_path / "paper" / "main.pdf")
    assert len(fill) <= 4 and all(f >= 0.30 for f in fill[:-1]), fill
    assert "Overfull \\hbox" not in log
    main_tex = (tmp_path / "paper" / "main.tex").read_text()
    assert r"\section{Results}" + "\nTable~\\ref{tab:summary}" in main_tex  # the heading is followed by text
    summary = (tmp_path / "paper" / "tables" / "summary.tex").read_text()
    assert summary.count(r"\\") - 1 == len({r["metric"] for r in numbers["by_system"] if r["mean"] is not None})
    # the verdict's figure says its profile and how often FAIL agrees with the label, counted here by hand
    labelled = r[r["verdict"].isin(["PASS", "FAIL"]) & r["hallucinated"].notna()]
    agree = int(((labelled["verdict"] == "FAIL") == labelled["hallucinated"].astype(bool)).sum())
    assert f"on {agree} of {len(labelled)} labelled PASS or FAIL rows" in main_tex
    # a report's numbers are printed as they are: a different bootstrap is refused, not silently recomputed
    capsys.readouterr()
    assert main(["paper", str(report), "-o", str(tmp_path / "p2"), "--resamples", "100"]) == 2
    assert "re-run the report" in capsys.readouterr().err

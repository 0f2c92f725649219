"""``evalkit paper``: a run as the parts of a paper: tables, figures, a methods paragraph and its references.

From a results file (``evalkit score -o results.parquet``) or a report folder (``reports/NAME`` with
``results.parquet``, ``metrics.json`` and ``signature.json``) it writes into one folder:

* ``tables/*.tex``: the summary, the paired comparison and the calibration (:mod:`evalkit.publish.tables`);
* ``figures/*.pdf`` and ``*.svg``: metric means, the comparison and the verdicts at single-column width
  (``NAME.pdf``, 3.5 in) and double-column width (``NAME_wide.pdf``, 7 in) (:func:`evalkit.publish.plots.save_for_print`);
* ``methods.tex`` and ``methods.md``: a paragraph written from the run: data, metrics with one-sentence
  definitions and citations, judge, thresholds, intervals, tests, the signature;
* ``references.bib``: the entries the methods cite (only those the run used; the bootstrap always);
* ``main.tex``: a minimal article that includes them all (``pdflatex main; bibtex main; pdflatex main`` twice).

Every number in the text is read from the run; nothing is written by hand. Files are written atomically into
a folder evalkit owns (a marker inside), never into a user's folder.
"""
from __future__ import annotations

import dataclasses
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

import pandas as pd

from evalkit.publish.tables import calibration_table, compare_table, latex_escape, summary_table, summary_wide_table, to_latex

# --- references ------------------------------------------------------------------------------------------------

# the statistics the methods paragraph names; a metric's own publications are declared beside it (its module's
# REFERENCES, collected by evalkit.metrics.references)
BIB: dict[str, str] = {
    "efron1979bootstrap": """@article{efron1979bootstrap,
  title = {Bootstrap Methods: Another Look at the Jackknife},
  author = {Efron, Bradley},
  journal = {The Annals of Statistics},
  volume = {7},
  number = {1},
  pages = {1--26},
  year = {1979},
  doi = {10.1214/aos/1176344552}
}""",
    "holm1979": """@article{holm1979,
  title = {A Simple Sequentially Rejective Multiple Test Procedure},
  author = {Holm, Sture},
  journal = {Scandinavian Journal of Statistics},
  volume = {6},
  number = {2},
  pages = {65--70},
  year = {1979}
}""",
    "mcnemar1947": """@article{mcnemar1947,
  title = {Note on the Sampling Error of the Difference Between Correlated Proportions or Percentages},
  author = {McNemar, Quinn},
  journal = {Psychometrika},
  volume = {12},
  number = {2},
  pages = {153--157},
  year = {1947},
  doi = {10.1007/BF02295996}
}""",
    "angelopoulos2023ppi": """@article{angelopoulos2023ppi,
  title = {Prediction-Powered Inference},
  author = {Angelopoulos, Anastasios N. and Bates, Stephen and Fannjiang, Clara and Jordan, Michael I. and
            Zrnic, Tijana},
  journal = {Science},
  volume = {382},
  number = {6671},
  pages = {669--674},
  year = {2023},
  doi = {10.1126/science.adi6000}
}""",
    "angelopoulos2024ppipp": """@article{angelopoulos2024ppipp,
  title = {{PPI++}: Efficient Prediction-Powered Inference},
  author = {Angelopoulos, Anastasios N. and Duchi, John C. and Zrnic, Tijana},
  journal = {arXiv preprint arXiv:2311.01453},
  year = {2024}
}""",
    "angelopoulos2021ltt": """@article{angelopoulos2021ltt,
  title = {Learn then Test: Calibrating Predictive Algorithms to Achieve Risk Control},
  author = {Angelopoulos, Anastasios N. and Bates, Stephen and Cand{\\`e}s, Emmanuel J. and Jordan, Michael I. and
            Lei, Lihua},
  journal = {arXiv preprint arXiv:2110.01052},
  year = {2021}
}""",
    "youden1950": """@article{youden1950,
  title = {Index for Rating Diagnostic Tests},
  author = {Youden, W. J.},
  journal = {Cancer},
  volume = {3},
  number = {1},
  pages = {32--35},
  year = {1950},
  doi = {10.1002/1097-0142(1950)3:1<32::AID-CNCR2820030106>3.0.CO;2-3}
}""",
    "krippendorff2004": """@book{krippendorff2004,
  title = {Content Analysis: An Introduction to Its Methodology},
  author = {Krippendorff, Klaus},
  edition = {Second},
  publisher = {Sage Publications},
  address = {Thousand Oaks, CA},
  year = {2004}
}""",
}



# --- the run ---------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Run:
    """What a paper is written from: the scored rows, the run's signature, and the report's numbers (if any)."""

    results: pd.DataFrame
    signature: Mapping[str, Any]
    numbers: Mapping[str, Any] = field(default_factory=dict)
    source: str = ""

    @property
    def metrics(self) -> list[str]:
        from evalkit.decide.aggregate import scored_metrics

        return scored_metrics(self.results)

    @property
    def systems(self) -> list[str]:
        return sorted(map(str, self.results["system"].dropna().unique())) if "system" in self.results.columns else []


def load_run(path: str | Path) -> Run:
    """A report folder (``results.parquet``, ``metrics.json``, ``signature.json``) or a results file."""
    from evalkit.base.data import read_table

    p = Path(path)
    if p.is_dir():
        res = p / "results.parquet"
        if not res.exists():
            raise ValueError(f"{p}: no results.parquet in this folder; give a report folder (evalkit report) or a "
                             "results file (evalkit score -o results.parquet)")
        results = pd.read_parquet(res)
        sig = _json(p / "signature.json")
        numbers = _json(p / "metrics.json")
        if not sig:
            sig = dict(results.attrs.get("evalkit", {}).get("signature") or {})
        return Run(results, sig, numbers, str(p))
    if not p.exists():
        raise ValueError(f"{p}: no such file or folder")
    results = read_table(str(p))
    meta = results.attrs.get("evalkit", {}) if isinstance(results.attrs.get("evalkit"), Mapping) else {}
    sig = dict(meta.get("signature") or {})
    if meta.get("signature_string"):
        sig.setdefault("signature", meta["signature_string"])
    return Run(results, sig, {}, str(p))


def _json(path: Path) -> dict:
    if not path.exists():
        return {}
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as e:
        raise ValueError(f"{path}: not valid JSON ({e}); re-run the report") from None


# --- what the paper says ---------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Plan:
    """The numbers the paper prints, computed once: summary, comparison, calibration; and how."""

    summary: pd.DataFrame
    by: str | None
    comparison: pd.DataFrame | None
    calibration: Mapping[str, Any] | None
    n_resamples: int  # the means' bootstrap
    seed: int
    pair_on: str | None = None
    binary: tuple[str, ...] = ()
    judge_variance: pd.DataFrame | None = None
    estimate: Mapping[str, Any] | None = None  # the label's rate per system by PPI++ (metrics.json's "estimate")
    compare_resamples: int | None = None  # the paired differences' bootstrap


def plan(run: Run, *, n_resamples: int | None = None, seed: int | None = None, min_pairs: int = 10) -> Plan:
    """Summary (by system when there are several), the paired comparison of the report's two systems (or the
    first two), and the report's calibration.

    A report folder's ``metrics.json`` already holds them: the paper prints those numbers, so that the paper and
    the report cannot disagree, and refuses ``n_resamples``/``seed`` (re-run the report to change them). A
    results file (or a report older than the saved settings) is computed here with the report's own defaults:
    the same resamples, the run's seed, the same pairing.
    """
    from evalkit.publish.analysis import COMPARE_RESAMPLES, SUMMARY_RESAMPLES

    by = "system" if len(run.systems) > 1 else None
    saved = run.numbers.get("bootstrap")
    if saved and run.numbers.get("by_system" if by else "overall") is not None:
        if n_resamples is not None or seed is not None:
            raise ValueError(f"{run.source}: this report's numbers were computed with {saved['n_resamples']} "
                             f"resamples and seed {saved['seed']}, and the paper prints them as they are; to change "
                             "them, re-run the report (evalkit report EXPERIMENT --resamples N)")
        return _saved_plan(run, by)
    seed = int(run.signature.get("seed") or 0) if seed is None else seed
    n_summary = SUMMARY_RESAMPLES if n_resamples is None else n_resamples
    n_compare = COMPARE_RESAMPLES if n_resamples is None else n_resamples
    comparison, pair_on, binary = _compute_comparison(run, n_compare, seed, min_pairs)
    from evalkit.decide.aggregate import summary

    tidy = summary(run.results, by=by, n_resamples=n_summary, seed=seed)
    return Plan(tidy, by, comparison, _section(run, "calibration"), n_summary, seed, pair_on, binary,
                _judge_variance(run), _section(run, "estimate"), n_compare)


def _saved_plan(run: Run, by: str | None) -> Plan:
    """The report's numbers as metrics.json holds them, settings included."""
    from evalkit.metrics import REGISTRY

    nums = run.numbers
    boot = nums["bootstrap"]
    tidy = pd.DataFrame(nums["by_system" if by else "overall"])
    tidy["kind"] = [REGISTRY[m].kind if m in REGISTRY else "score" for m in tidy["metric"]]  # metrics.json omits it
    cmp = _section(run, "comparison")
    comparison = pd.DataFrame(cmp["table"]) if cmp and cmp.get("table") else None
    binary = tuple(cmp.get("binary") or ()) if cmp else ()
    return Plan(tidy, by, comparison, _section(run, "calibration"), int(boot["n_resamples"]), int(boot["seed"]),
                cmp.get("pair_on") if cmp else None, binary, _judge_variance(run), _section(run, "estimate"),
                int(cmp["n_resamples"]) if cmp else None)


def _compute_comparison(run: Run, n_resamples: int, seed: int, min_pairs: int):
    """(table, pair_on, binary) of the report's two systems (or the first two), or (None, None, ()) with one."""
    from evalkit.decide.compare import compare_systems, default_pair_on

    cmp = run.numbers.get("comparison") or {}
    if len(run.systems) < 2 or "error" in cmp:
        return None, None, ()
    df = run.results
    a, b = (cmp["system_a"], cmp["system_b"]) if cmp.get("system_a") else (run.systems[0], run.systems[1])
    pair_on = cmp.get("pair_on") or default_pair_on(df)
    binary = tuple(r["metric"] for r in cmp.get("table") or [] if r.get("p_mcnemar") is not None)
    metrics = [m for m in run.metrics if _comparable(df, m)]
    try:
        table = compare_systems(df, metrics, a, b, n_resamples=n_resamples, seed=seed, pair_on=pair_on,
                                binary=list(binary), min_pairs=min_pairs)
    except ValueError:  # nothing paired (e.g. systems answered different questions): no comparison to print
        return None, pair_on, binary
    return table, pair_on, binary


def _section(run: Run, name: str) -> Mapping[str, Any] | None:
    """A section of metrics.json, or None where the report has none or recorded why it could not compute it."""
    sec = run.numbers.get(name)
    return sec if sec and "error" not in sec else None


def _judge_variance(run: Run) -> pd.DataFrame | None:
    jv = run.numbers.get("judge_variance")
    return pd.DataFrame(jv) if jv else None


def _comparable(df: pd.DataFrame, metric: str) -> bool:
    from evalkit.metrics import REGISTRY

    m = REGISTRY.get(metric)
    return m is not None and m.kind in ("score", "bool") and df[metric].notna().any()


def _join(items: Sequence[str]) -> str:
    items = list(items)
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + (", and " if len(items) > 2 else " and ") + items[-1]


def _fmt(v: Any, digits: int = 3) -> str:
    return "n/a" if v is None or v != v else f"{float(v):.{digits}f}"


class _Text:
    """Sentences written once, rendered as LaTeX or Markdown: code spans, citations and plain text."""

    def __init__(self, fmt: str):
        self.fmt = fmt

    @property
    def pct(self) -> str:
        return r"\%" if self.fmt == "latex" else "%"

    def t(self, s: Any) -> str:
        from evalkit.publish.tables import markdown_escape

        return latex_escape(str(s)) if self.fmt == "latex" else markdown_escape(str(s))

    def code(self, s: Any) -> str:
        if self.fmt == "latex":  # long tokens (hashes, the signature) may break after their separators
            text = latex_escape(str(s)).replace("$|$", "$|$\\allowbreak{}")
            for sep in (":", "-", "@", ",", "=", "+", "/"):
                text = text.replace(sep, sep + "\\allowbreak{}")
            return r"\texttt{" + text + "}"
        from evalkit.text.markdown import markdown_code

        return markdown_code(str(s))  # a backtick in a system's name cannot close the span

    def cite(self, keys: Sequence[str]) -> str:
        if not keys:
            return ""
        return (r"~\cite{" + ",".join(keys) + "}") if self.fmt == "latex" else " [" + "; ".join(f"@{k}" for k in keys) + "]"


def methods(run: Run, p: Plan, fmt: str = "latex") -> tuple[str, list[str]]:
    """The methods paragraph(s) in ``fmt`` ('latex' or 'markdown') and the bibliography keys they cite.

    Every number is read from ``run`` and ``p``: rows, systems, labels, metrics (definition from the registry's
    formula), judge model and prompts' hash, thresholds and how they were chosen, bootstrap resamples and
    seed, the tests, the signature.
    """
    from evalkit.metrics import REGISTRY

    x = _Text(fmt)
    cited: list[str] = []

    def cite(*keys: str) -> str:
        for k in keys:
            if k not in cited:
                cited.append(k)
        return x.cite(keys)

    df, sig = run.results, run.signature
    paras = []
    # data
    n = len(df)
    systems = run.systems
    data = f"We evaluated {n} answer{'s' if n != 1 else ''}"
    if systems:
        data += f" from {len(systems)} system{'s' if len(systems) != 1 else ''} ({_join([x.code(s) for s in systems])})"
    if "question" in df.columns:
        nq = int(df["question"].nunique())
        data += f" to {nq} distinct question{'s' if nq != 1 else ''}"
    data += "."
    if "question_type" in df.columns:
        types = sorted(map(str, df["question_type"].dropna().unique()))
        data += f" The questions are of {len(types)} type{'s' if len(types) != 1 else ''} ({_join([x.t(t) for t in types])})."
    if sig.get("data_sha256"):
        data += f" The data file's SHA-256 begins {x.code(str(sig['data_sha256'])[:12])}."
    labels = _labels(run, p, x)
    if labels:
        data += " " + labels
    paras.append(data)
    # metrics
    # a metric with no value on any row (fact_checks without rules) was not part of the evaluation
    metrics = [m for m in run.metrics if m in REGISTRY and m in df.columns and df[m].notna().any()]
    sentences = []
    for m in metrics:
        reg = REGISTRY[m]
        keys = reg.cites
        sentences.append(f"{x.code(m)} ({x.t(reg.reads_as)}): {x.t(reg.formula.rstrip('.'))}{cite(*keys) if keys else ''}.")
    version = f" (evalkit {x.t(sig['evalkit'])})" if sig.get("evalkit") else ""
    paras.append(f"Each answer was scored with {len(metrics)} metric{'s' if len(metrics) != 1 else ''}{version}. "
                 + " ".join(sentences))
    # judge
    judge = sig.get("judge")
    if judge:
        j = f"Judged metrics used the model {x.code(judge)}"
        if sig.get("judge_prompts_sha256"):
            j += f"; the prompts' SHA-256 begins {x.code(str(sig['judge_prompts_sha256'])[:12])}"
        paras.append(j + ".")
    # thresholds
    rules = _thresholds(run, p, x, cite)  # rules in code: long unbreakable names, set loosely rather than overfull
    paras.append(f"\\begin{{sloppypar}}\n{rules}\n\\end{{sloppypar}}" if fmt == "latex" else rules)
    # intervals and tests
    stats = (f"Means carry 95{x.pct} percentile bootstrap intervals over rows{cite('efron1979bootstrap')} "
             f"({p.n_resamples} resamples, seed {p.seed}); a metric's mean is taken over the rows where it is "
             "determined, and the tables count the undetermined rows and errors.")
    if p.comparison is not None and len(p.comparison):
        c = p.comparison
        a, b = c["system_a"].iloc[0], c["system_b"].iloc[0]
        stats += (f" We compared {x.code(b)} with {x.code(a)} on the same items, paired on {x.code(p.pair_on)} "
                  f"({_pairs(c)}): the mean paired difference has a paired bootstrap interval "
                  f"({p.compare_resamples or p.n_resamples} resamples, seed {p.seed}) and a two-sided bootstrap "
                  "p-value, adjusted across the "
                  f"{len(c)} metrics with Holm's step-down procedure{cite('holm1979')}.")
        if p.binary:
            stats += (f" Binary outcomes ({_join([x.code(v) for v in p.binary])}) were also compared with the exact "
                      f"McNemar test on discordant pairs{cite('mcnemar1947')}.")
    if p.judge_variance is not None and len(p.judge_variance):
        stats += (" Judged metrics were scored repeatedly; their intervals resample rows and repeats, and the "
                  f"judge's agreement with itself is Krippendorff's alpha (interval metric){cite('krippendorff2004')}.")
    paras.append(stats)
    if p.estimate:
        paras.append(_rates(p.estimate, x, cite))
    if sig.get("signature"):
        text = (f"The run's signature, which names every input, model and setting that produced these numbers, "
                f"is {x.code(sig['signature'])}.")
        # a monospaced line has no stretch: let TeX break it loosely rather than run past the margin
        paras.append(f"\\begin{{sloppypar}}\n{text}\n\\end{{sloppypar}}" if fmt == "latex" else text)
    if "efron1979bootstrap" not in cited:
        cited.append("efron1979bootstrap")
    return "\n\n".join(paras) + "\n", cited


def _pairs(c: pd.DataFrame) -> str:
    """The pair count the table shows: one number, or the range when a metric lacks a value on some items."""
    n = c["n_pairs"].dropna().astype(int)
    if n.empty or n.min() == n.max():
        return f"{int(n.max()) if len(n) else 0} pairs"
    return f"{n.min()} to {n.max()} pairs; a metric's pairs are the items where both answers have its value"


def _rates(est: Mapping[str, Any], x: _Text, cite) -> str:
    """The label's rate per group, said with the method that made it: PPI++ from a random sample of labels and the
    score on every row, or the labels' own rate when every row is labelled."""
    rows = est["estimates"]
    shown = _join([f"{x.code(e['group'])} {_fmt(e['ppi']['estimate'])} [{_fmt(e['ppi']['low'])}, "
                   f"{_fmt(e['ppi']['high'])}]" for e in rows])
    target = x.code(est["target"]) + (f" ({x.code(est['positive'])})" if est.get("positive") is not None else "")
    if all(e["labelled"] == e["rows"] for e in rows):
        return (f"Every row was labelled, so the rate of {target} is the labels' own, with a 95{x.pct} normal "
                f"interval: {shown}.")
    return (f"The rate of {target} was estimated by prediction-powered inference with power tuning"
            f"{cite('angelopoulos2023ppi', 'angelopoulos2024ppipp')} from the {sum(e['labelled'] for e in rows)} "
            f"labelled of {sum(e['rows'] for e in rows)} rows and {_join([x.code(u) for u in est['using']])} on every row, which keeps the "
            f"95{x.pct} interval valid whatever the metric's quality (labels drawn at random): {shown}.")


def _labels(run: Run, p: Plan, x: _Text) -> str:
    cal = p.calibration
    if cal and cal.get("label"):
        pos = cal.get("positive")
        return (f"Human labels ({x.code(cal['label'])}" + (f", positive class {x.code(pos)}" if pos is not None else "")
                + f") were available for {cal.get('n_used', cal.get('n'))} rows, {cal.get('n_pos')} of them positive.")
    for col in ("hallucinated", "correct", "human_score"):
        if col in run.results.columns and run.results[col].notna().any():
            return f"A human label ({x.code(col)}) was available for {int(run.results[col].notna().sum())} rows."
    return ""


def _thresholds(run: Run, p: Plan, x: _Text, cite) -> str:
    from evalkit.base.config import VerdictThresholds
    from evalkit.decide.verdict import rules_for

    sig = run.signature
    th = sig.get("thresholds") or {}
    text = ""
    if "verdict" in run.results.columns and th:
        cuts = {f.name for f in dataclasses.fields(VerdictThresholds)} - {"profile", "named"}
        named = str(sig.get("verdict_profile") or "seed")
        rules = rules_for(VerdictThresholds(**{k: None if v is None else float(v) for k, v in th.items() if k in cuts},
                                            named=named))
        shown = [f"{x.code(str(r))} ({r.outcome})" for r in rules]
        profile = sig.get("threshold_profile") or []
        text = (f"Each answer received a verdict from the {named} profile's rules {_join(shown)}"
                + (f", with the calibrated profile's rules {_join([x.code(r) for r in profile])}" if profile else
                   ", the package's default thresholds, not tuned on these data")
                + "; a row whose inputs are missing is undetermined rather than compared with a threshold.")
    cal = p.calibration
    if cal and cal.get("threshold") is not None and cal.get("guarantee"):
        g = cal["guarantee"]
        from evalkit.decide.calibrate.guarantee import SIDE

        side = "is at least" if SIDE[g["measure"]] == ">=" else "is at most"  # words: TeX's OT1 has no >
        text += (f" A threshold for {x.code(cal.get('score'))} was chosen against the human label "
                 f"{x.code(cal.get('label'))} by Learn-then-Test risk control{cite('angelopoulos2021ltt')} on "
                 f"{g['rows']} rows ({x.t(cal.get('protocol', ''))}), so that the {x.t(g['measure'].replace('_', '-'))} "
                 f"rate {side} {g['level']:g} with probability at least {1 - g['delta']:g} on rows exchangeable with "
                 f"them; it is {_fmt(cal['threshold'])}, reported on {x.t(cal.get('reported_on', ''))}.")
    elif cal and cal.get("threshold") is not None:
        crit = str(cal.get("criterion", ""))
        roc = cal.get("roc_auc") or {}
        thr = cal.get("threshold_ci") or {}
        text += (f" A threshold for {x.code(cal.get('score'))} was chosen against the human label {x.code(cal.get('label'))} "
                 f"by the {x.t(crit)} criterion" + (cite("youden1950") if crit.startswith("youden") else "")
                 + f" under the protocol: {x.t(cal.get('protocol', ''))}, reported on {x.t(cal.get('reported_on', ''))}. "
                 f"It is {_fmt(cal['threshold'])} (95{x.pct} bootstrap interval [{_fmt(thr.get('low'))}, {_fmt(thr.get('high'))}], "
                 f"{cal.get('n_resamples')} resamples, seed {cal.get('seed')}"
                 + (", whole groups resampled" if "group" in str(cal.get("protocol", "")) else "")
                 + f"); ROC AUC {_fmt(roc.get('estimate'))} [{_fmt(roc.get('low'))}, {_fmt(roc.get('high'))}].")
    return text.strip() or "No verdict thresholds were applied."


# --- writing ---------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Bundle:
    """What :func:`write_paper` wrote, relative to its folder."""

    folder: Path
    tables: tuple[str, ...]
    figures: tuple[str, ...]
    references: tuple[str, ...]


def write_paper(path: str | Path, out: str | Path, *, n_resamples: int | None = None, seed: int | None = None,
                figures: bool = True) -> Bundle:
    """Write the paper bundle for a results file or report folder ``path`` into ``out`` (see the module)."""
    from evalkit.base.safeio import owned_dir, refuse_output_over_inputs, write_text

    run = load_run(path)
    if not run.metrics:
        raise ValueError(f"{path}: no metric columns; score it first (evalkit score DATA -o results.parquet)")
    refuse_output_over_inputs(out, [path], what="-o/--output")
    folder = owned_dir(out)
    p = plan(run, n_resamples=n_resamples, seed=seed)
    tables = []

    def table(name: str, t) -> None:
        write_text(folder / "tables" / f"{name}.tex", to_latex(t) + "\n")
        tables.append(name)

    groups = p.summary[p.by].nunique() if p.by else 0
    # a few systems: one row per metric, a column per system (a paper's table, not 2 rows per metric)
    table("summary", summary_wide_table(p.summary, p.by) if 1 < groups <= 4 else
          summary_table(p.summary, by=p.by, n_resamples=p.n_resamples))
    if p.comparison is not None and len(p.comparison):
        table("compare", compare_table(p.comparison, mcnemar_columns=False))
    if p.calibration:
        table("calibration", calibration_table(p.calibration))
    figs = _figures(run, p, folder / "figures") if figures else []
    tex, keys = methods(run, p, "latex")
    md, _ = methods(run, p, "markdown")
    write_text(folder / "methods.tex", "% generated by evalkit paper from the run; edit the run, not this file\n" + tex)
    write_text(folder / "methods.md", md)
    from evalkit.metrics import references

    entries = {**BIB, **references()}
    write_text(folder / "references.bib", "\n\n".join(entries[k] for k in keys) + "\n")
    heights = {name: _pdf_height(folder / "figures" / f"{name}.pdf") for name, _, _ in figs}
    write_text(folder / "main.tex", main_tex(run, tables, figs, heights))
    return Bundle(folder, tuple(tables), tuple(f[0] for f in figs), tuple(keys))


def _figures(run: Run, p: Plan, out: Path) -> list[tuple[str, str, bool]]:
    """(name, caption, wide) of every figure written as PDF and SVG at both widths; ``wide``: main.tex shows the
    double-column version (many metrics side by side)."""
    import matplotlib.pyplot as plt

    from evalkit.publish import plots

    made = []

    def save(name: str, fig, wide: bool = False) -> None:
        try:
            plots.save_for_print(fig, name, out)
            made.append((name, plots.caption_of(fig), wide))
        finally:
            plt.close(fig)

    if p.by or len(p.summary):
        # a row per metric: standing bars of more than a few metrics crowd a column until no name can be read
        save("metric_means", plots.metric_means(p.summary, by=p.by or "system", horizontal=True))
    if p.comparison is not None and p.comparison["diff"].notna().any():
        save("comparison", plots.comparison_forest(p.comparison))
    if "verdict" in run.results.columns and run.results["verdict"].notna().any():
        save("verdicts", plots.verdict_counts(run.results, by="system"))
    # the paper's captions say what a figure shows in two sentences; its numbers are in the tables
    return [(name, figure_caption(name, run, p), wide) for name, _, wide in made]


def figure_caption(name: str, run: Run, p: Plan) -> str:
    """A figure's caption in the paper: what it shows and where its numbers are; the verdict figure names its
    profile and, where the run has the calibration's label, how often the verdict agrees with it."""
    if name == "metric_means":
        return "Mean of each metric by system with its 95% bootstrap interval. The numbers are in TABLEREF_summary."
    if name == "comparison":
        return ("Paired difference of each metric between the two systems with its 95% bootstrap interval; a bar "
                "that avoids 0 is a difference. The numbers are in TABLEREF_compare.")
    profile = str(run.signature.get("verdict_profile") or "seed")
    agree = verdict_agreement(run.results, p.calibration)
    return (f"Answers per verdict and system under the {profile} profile's rules." + (
        f" FAIL agrees with the human label {agree['label']} on {agree['agree']} of {agree['n']} labelled PASS or "
        f"FAIL rows ({agree['share']:.0%})." if agree else " No human label measures the verdict's agreement here."))


def verdict_agreement(results: pd.DataFrame, cal: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """On the rows with the calibration's label and a PASS or FAIL verdict: on how many FAIL coincides with the
    label's positive (bad) class. None without such rows.

    >>> df = pd.DataFrame({"verdict": ["PASS", "FAIL", "FAIL", "WARN"], "bad": [False, True, False, True]})
    >>> verdict_agreement(df, {"label": "bad", "positive": None})
    {'label': 'bad', 'agree': 2, 'n': 3, 'share': 0.6666666666666666}
    """
    from evalkit.decide.calibrate import binary_labels

    label = (cal or {}).get("label")
    if not label or label not in results.columns or "verdict" not in results.columns:
        return None
    decided = results[results["verdict"].isin(["PASS", "FAIL"]) & results[label].notna()]
    if decided.empty:
        return None
    bad = binary_labels(decided[label].tolist(), positive=cal.get("positive"), column=label)
    pairs = [(v == "FAIL", b) for v, b in zip(decided["verdict"], bad) if b is not None]
    agree = sum(f == bool(b) for f, b in pairs)
    return {"label": label, "agree": agree, "n": len(pairs), "share": agree / len(pairs)} if pairs else None


# floats fill a page's top and bottom before LaTeX gives one a page of its own (the defaults left 4 of 7 pages
# mostly blank, each float alone on its page)
FLOATS = (r"\renewcommand{\topfraction}{0.9}", r"\renewcommand{\bottomfraction}{0.8}",
          r"\renewcommand{\textfraction}{0.07}", r"\renewcommand{\floatpagefraction}{0.75}",
          r"\setcounter{topnumber}{3}", r"\setcounter{bottomnumber}{2}", r"\setcounter{totalnumber}{5}")

_WHAT = {"summary": ("Table", "tab", "gives each metric's mean by system"),
         "compare": ("Table", "tab", "the paired differences between the systems with Holm-adjusted p-values"),
         "calibration": ("Table", "tab", "the calibrated threshold and its operating point"),
         "metric_means": ("Figure", "fig", "draws the means"), "comparison": ("Figure", "fig", "the differences"),
         "verdicts": ("Figure", "fig", "the verdicts per system")}


def results_paragraph(tables: Sequence[str], figures: Sequence[tuple[str, str, bool]]) -> str:
    """The sentence under "Results" that points at each table and figure (a heading followed only by floats is
    left alone at a page's foot)."""
    parts = [f"{_WHAT[n][0]}~\\ref{{{_WHAT[n][1]}:{n}}} {_WHAT[n][2]}" for n in [*tables, *(f[0] for f in figures)]
             if n in _WHAT]
    return (_join(parts) + ".") if parts else "The run has no table or figure to show."


def _caption_tex(caption: str) -> str:
    """A caption escaped for LaTeX, its table references (``TABLEREF_name``) made cross-references."""
    return re.sub(r"TABLEREF\\_(\w+)", r"Table~\\ref{tab:\1}", latex_escape(caption))


def main_tex(run: Run, tables: Sequence[str], figures: Sequence[tuple[str, str, bool]],
             heights: Mapping[str, float] | None = None) -> str:
    """A minimal article that inputs the methods, every table and figure, and the bibliography. The text is 7 in
    wide (a double-column page's width). One figure is included at its natural size (its 8 pt fonts stay 8 pt);
    several are single-column (3.5 in) figures grouped into one float of two columns, each figure with its own
    caption, so they share a page instead of leaving one mostly blank page each. ``heights`` (points, of the
    single-column PDFs) balance the two columns."""
    title = latex_escape(f"Evaluation of {Path(run.source).stem or 'the run'}")
    lines = [r"\documentclass[10pt]{article}", r"\usepackage[letterpaper,margin=0.75in]{geometry}",
             r"\usepackage{booktabs}", r"\usepackage{graphicx}", r"\usepackage{caption}", *FLOATS,
             r"\title{" + title + "}", r"\author{}", r"\date{}", r"\begin{document}", r"\maketitle", "",
             r"\section{Methods}", r"\input{methods.tex}", "", r"\section{Results}", results_paragraph(tables, figures),
             ""]
    lines += [rf"\input{{tables/{t}.tex}}" for t in tables]
    lines += _figure_float(figures, heights or {})
    # no \clearpage before the references: figures still waiting may share their page
    lines += ["", r"\bibliographystyle{plain}", r"\bibliography{references}", r"\end{document}", ""]
    return "\n".join(lines)


def _pdf_height(path: Path) -> float:
    """A one-page PDF's height in points (its MediaBox), as matplotlib writes it; 200 when it cannot be read."""
    box = re.search(rb"/MediaBox\s*\[\s*[\d.]+\s+[\d.]+\s+[\d.]+\s+([\d.]+)\s*\]", path.read_bytes()) \
        if path.exists() else None
    return float(box.group(1)) if box else 200.0


def _figure_float(figures: Sequence[tuple[str, str, bool]], heights: Mapping[str, float]) -> list[str]:
    """The figures as LaTeX: one at its natural width, or several in two balanced columns of one float."""
    if len(figures) == 1:
        name, caption, wide = figures[0]
        return [r"\begin{figure}[tbp]", r"\centering", rf"\includegraphics{{figures/{name}{'_wide' if wide else ''}.pdf}}",
                rf"\caption{{{_caption_tex(caption or name)}}}", rf"\label{{fig:{name}}}", r"\end{figure}"]
    columns: list[list[tuple[str, str]]] = [[], []]
    filled = [0.0, 0.0]
    for name, caption, _ in sorted(figures, key=lambda f: -heights.get(f[0], 0.0)):  # tallest first, then greedy
        k = int(filled[1] < filled[0])
        columns[k].append((name, caption))
        filled[k] += heights.get(name, 200.0) + 40.0  # a caption's few lines
    out = [r"\begin{figure}[tbp]", r"\centering"]
    for k, col in enumerate(columns):
        out.append(r"\begin{minipage}[t]{0.49\textwidth}\centering")
        for name, caption in col:
            out += [rf"\includegraphics[width=\linewidth]{{figures/{name}.pdf}}",
                    rf"\captionof{{figure}}{{{_caption_tex(caption or name)}}}\label{{fig:{name}}}", r"\medskip"]
        out.append(r"\end{minipage}" + (r"\hfill" if k == 0 else ""))
    return out + [r"\end{figure}"]


__all__ = ["BIB", "Run", "Plan", "Bundle", "load_run", "plan", "methods", "write_paper",
           "main_tex"]

"""Experiments -> papermill -> ``reports/NAME/``: executed notebooks, one HTML report, figures,
``results.parquet``, ``metrics.json`` and ``signature.json``.

An experiment is a YAML file (see ``experiments/default.yaml``)::

    name: default
    data: data/sample_rag.jsonl
    columns: {}                      # canonical -> source column mapping
    scoring: experiments/default.config.yaml   # EvalConfig YAML, or an inline mapping
    metrics: null                    # registry names; null = defaults that apply
    thresholds: null                 # calibrated profile (YAML) for the verdict
    judge: null
    calibration: {score: hallucination, label: hallucinated, direction: higher, criterion: youden,
                  split: null, n_resamples: 1000}
    compare: {systems: [rag-a, rag-b], binary: [correct]}
    seed: 0
    notebooks: [00_quickstart, 01_relevance, ...]

Paths are relative to the directory you run ``evalkit report`` from (the project root).
Scoring happens once, here; the notebooks read ``results.parquet`` and narrate it.
"""
from __future__ import annotations

import dataclasses
import html
import json
import re
import shutil
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

import yaml

from .config import EvalConfig
from .data import load, save

NOTEBOOK_DIR = Path("notebooks")
DEFAULT_NOTEBOOKS = ("00_quickstart", "01_relevance", "02_completeness", "03_hallucination",
                     "04_reference_metrics", "05_judged_metrics", "06_calibration", "07_compare_systems", "09_summary_scorers",
                     "08_report")
REPORT_NOTEBOOK = "08_report"


class ReportError(RuntimeError):
    """A report could not be produced; the message names the experiment key or notebook and cell."""


@dataclass(frozen=True)
class Experiment:
    """A validated experiment file."""

    name: str
    data: str
    columns: Mapping[str, str] = field(default_factory=dict)
    scoring: EvalConfig = field(default_factory=EvalConfig)
    scoring_source: str | None = None
    metrics: tuple[str, ...] | None = None
    thresholds: str | None = None
    judge: Mapping[str, Any] | None = None
    calibration: Mapping[str, Any] = field(default_factory=dict)
    compare: Mapping[str, Any] = field(default_factory=dict)
    seed: int = 0
    notebooks: tuple[str, ...] = DEFAULT_NOTEBOOKS
    description: str = ""
    source: str = ""

    def config(self) -> EvalConfig:
        """The scoring config with the experiment's seed and threshold profile applied."""
        cfg = dataclasses.replace(self.scoring, seed=self.seed)
        if self.judge:
            cfg = dataclasses.replace(cfg, judge={**cfg.judge, **self.judge})
        if self.thresholds:
            from .verdict import thresholds_from_profile

            cfg = dataclasses.replace(cfg, thresholds=thresholds_from_profile(self.thresholds, cfg.thresholds))
        return cfg


_KEYS = {f.name for f in dataclasses.fields(Experiment)} - {"source", "scoring_source"}


def load_experiment(path: str | Path) -> Experiment:
    """Read and validate an experiment YAML."""
    path = Path(path)
    if not path.exists():
        raise ReportError(f"{path}: no such experiment file")
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except yaml.YAMLError as e:
        raise ReportError(f"{path}: invalid YAML: {e}") from None
    unknown = sorted(set(raw) - _KEYS)
    if unknown:
        raise ReportError(f"{path}: unknown key(s) {unknown}; known: {sorted(_KEYS)}")
    for key in ("name", "data"):
        if not raw.get(key):
            raise ReportError(f"{path}: missing required key {key!r}")
    if not re.fullmatch(r"[A-Za-z0-9_.-]+", str(raw["name"])):
        raise ReportError(f"{path}: name {raw['name']!r} must be letters, digits, '.', '_' or '-' (it names a folder)")
    scoring = raw.get("scoring")
    scoring_source = None
    if isinstance(scoring, str):
        scoring_source = scoring
        cfg = EvalConfig.from_yaml(scoring)
    else:
        cfg = EvalConfig.from_dict(scoring, source=f"{path}: scoring")
    nbs = tuple(raw.get("notebooks") or DEFAULT_NOTEBOOKS)
    for nb in nbs:
        if not (NOTEBOOK_DIR / f"{nb}.ipynb").exists():
            raise ReportError(f"{path}: notebook {nb!r} not found in {NOTEBOOK_DIR}/")
    metrics = raw.get("metrics")
    return Experiment(name=str(raw["name"]), data=str(raw["data"]), columns=raw.get("columns") or {}, scoring=cfg,
                      scoring_source=scoring_source, metrics=tuple(metrics) if metrics else None,
                      thresholds=raw.get("thresholds"), judge=raw.get("judge"),
                      calibration=raw.get("calibration") or {}, compare=raw.get("compare") or {},
                      seed=int(raw.get("seed", 0)), notebooks=nbs, description=raw.get("description", ""),
                      source=str(path))


def aggregate_metrics(results, exp: Experiment) -> dict[str, Any]:
    """The machine-readable numbers of a report (deterministic for the same inputs and seed)."""
    from .aggregate import json_ready, summary

    out: dict[str, Any] = {"experiment": exp.name, "rows": int(len(results))}
    out["overall"] = summary(results, by=None).drop(columns=["kind"]).to_dict(orient="records")
    if "system" in results.columns:
        out["by_system"] = summary(results, by="system").drop(columns=["kind"]).to_dict(orient="records")
    if "verdict" in results.columns:
        vc = results.groupby(["system", "verdict"] if "system" in results.columns else ["verdict"]).size()
        out["verdicts"] = {" / ".join(map(str, k)) if isinstance(k, tuple) else str(k): int(v) for k, v in vc.items()}
    out["errors"] = int(results["error"].notna().sum())
    cal = exp.calibration
    if cal.get("score") in results.columns and cal.get("label") in results.columns:
        from .calibrate import calibrate

        ok = results[cal["score"]].notna() & results[cal["label"]].notna()
        split = cal.get("split")
        res = calibrate(results.loc[ok, cal["score"]].astype(float).tolist(), results.loc[ok, cal["label"]].astype(bool).tolist(),
                        direction=cal.get("direction", "higher"), criterion=cal.get("criterion", "youden"),
                        n_resamples=int(cal.get("n_resamples", 1000)), seed=exp.seed,
                        split=results.loc[ok, split].tolist() if split and split in results.columns else split)
        out["calibration"] = {"score": cal["score"], "label": cal["label"], "excluded_undetermined": int((~ok).sum()),
                              **res.to_dict()}
    cmp = exp.compare
    if cmp.get("systems") and "system" in results.columns:
        from .aggregate import scored_metrics
        from .compare import compare_systems

        a, b = cmp["systems"][:2]
        metrics = [m for m in scored_metrics(results) if results[m].dtype != object]
        table = compare_systems(results, metrics, a, b, n_resamples=int(cmp.get("n_resamples", 2000)), seed=exp.seed,
                                binary=[c for c in cmp.get("binary", []) if c in results.columns])
        out["comparison"] = table.to_dict(orient="records")
    return json_ready(out)


def _execute(nb: str, out_dir: Path, params: dict[str, Any], index: int, total: int, log) -> Path:
    import papermill as pm
    from papermill.exceptions import PapermillExecutionError

    src = NOTEBOOK_DIR / f"{nb}.ipynb"
    dst = out_dir / "notebooks" / f"{nb}.ipynb"
    t0 = time.perf_counter()
    log(f"[{index}/{total}] {nb} ...")
    try:
        pm.execute_notebook(str(src), str(dst), parameters=params, kernel_name="python3", progress_bar=False,
                            cwd=str(Path.cwd()))
    except PapermillExecutionError as e:
        raise ReportError(f"notebook {nb}.ipynb failed at cell {e.exec_count} (index {e.cell_index}): "
                          f"{e.ename}: {e.evalue}; the partial notebook is kept at {dst}") from None
    log(f"[{index}/{total}] {nb} done in {time.perf_counter() - t0:.1f}s")
    return dst


def to_html(notebook: Path, signature: str, title: str) -> str:
    """One self-contained HTML page from an executed notebook, code hidden, signature in the header.

    Outputs are rendered by nbconvert; text outputs are escaped and DataFrames are escaped by pandas,
    so an answer containing ``<script>`` shows as text and never runs.
    """
    import nbformat
    from nbconvert import HTMLExporter

    exporter = HTMLExporter(template_name="lab")
    exporter.exclude_input = True
    exporter.exclude_input_prompt = True
    exporter.exclude_output_prompt = True
    body, _ = exporter.from_notebook_node(nbformat.read(notebook, as_version=4))
    header = (f'<header class="evalkit-signature" style="font-family:monospace;font-size:12px;padding:6px 12px;'
              f'background:#f3f3f3;border-bottom:1px solid #ccc">{html.escape(title)} &middot; '
              f'<span title="reproducibility signature">{html.escape(signature)}</span></header>')
    body = re.sub(r"<title>.*?</title>", f"<title>{html.escape(title)}</title>", body, count=1, flags=re.S)
    return re.sub(r"(<body[^>]*>)", lambda m: m.group(1) + header, body, count=1)


def run_report(experiment: str | Path, *, out_root: str | Path = "reports", figures_root: str | Path = "figures",
               notebooks: Sequence[str] | None = None, overrides: Mapping[str, Any] | None = None,
               log=None) -> Path:
    """Produce ``reports/NAME/`` for an experiment; returns the HTML report's path.

    ``overrides`` are extra notebook parameters (e.g. ``{"n_resamples": 50}`` for a quick run).
    A failing notebook stops the run with the notebook, cell and error named; what was produced is kept.
    """
    from .signature import build_signature, sig_string

    log = log or (lambda msg: print(msg, file=sys.stderr, flush=True))
    exp = load_experiment(experiment)
    out = Path(out_root) / exp.name
    (out / "notebooks").mkdir(parents=True, exist_ok=True)
    figs = out / "figures"
    if figs.exists():
        shutil.rmtree(figs)
    figs.mkdir(parents=True)
    t0 = time.perf_counter()
    cfg = exp.config()
    log(f"evalkit report {exp.name}: scoring {exp.data}")
    df = load(exp.data, columns=exp.columns)
    from .runner import evaluate

    results = evaluate(df, exp.metrics, cfg)
    judge_meta = results.attrs.get("evalkit", {}).get("judge")
    results.attrs.clear()  # nothing run-specific in the parquet metadata
    save(results, out / "results.parquet")
    metrics = aggregate_metrics(results, exp)
    if overrides and "n_resamples" in overrides:
        metrics["note"] = f"quick run: n_resamples overridden to {overrides['n_resamples']}"
    (out / "metrics.json").write_text(json.dumps(metrics, indent=2, sort_keys=True, ensure_ascii=False) + "\n")
    sig = build_signature(cfg, df.attrs.get("sha256"), [m for m in results.columns if f"{m}_details" in results.columns],
                          extra={"experiment": exp.name, "experiment_file": exp.source,
                                 "scoring_file": exp.scoring_source, "threshold_profile": exp.thresholds,
                                 "notebooks": list(notebooks or exp.notebooks)}, judge=judge_meta)
    sig["signature"] = sig_string(sig)
    (out / "signature.json").write_text(json.dumps(sig, indent=2, sort_keys=True) + "\n")
    cal = dict(exp.calibration)
    params = {
        "data_path": exp.data, "results_path": str((out / "results.parquet").resolve()),
        "config_path": exp.scoring_source or "", "output_dir": str(out.resolve()), "figures_dir": str(figs.resolve()),
        "seed": exp.seed, "signature": sig["signature"], "experiment": exp.name,
        "calibration_score": cal.get("score", "hallucination"), "calibration_label": cal.get("label", "hallucinated"),
        "calibration_direction": cal.get("direction", "higher"), "criterion": cal.get("criterion", "youden"),
        "n_resamples": int(cal.get("n_resamples", 1000)),
        "systems": list(exp.compare.get("systems", [])), "thresholds": cfg.thresholds.as_dict(),
        "judge": dict(exp.judge or {}),
    }
    params.update(overrides or {})
    nbs = list(notebooks or exp.notebooks)
    executed = {}
    for i, nb in enumerate(nbs, start=1):
        executed[nb] = _execute(nb, out, params, i, len(nbs), log)
    report_nb = executed.get(REPORT_NOTEBOOK) or executed[nbs[-1]]
    html_path = out / "report.html"
    html_path.write_text(to_html(report_nb, sig["signature"], f"evalkit report: {exp.name}"), encoding="utf-8")
    fig_dst = Path(figures_root) / exp.name
    if fig_dst.exists():
        shutil.rmtree(fig_dst)
    shutil.copytree(figs, fig_dst)
    log(f"evalkit report {exp.name}: done in {time.perf_counter() - t0:.1f}s -> {html_path}")
    return html_path


def find_root(start: str | Path | None = None) -> Path:
    """The project root (the first folder upwards holding ``pyproject.toml`` and ``evalkit/``)."""
    p = Path(start or Path.cwd()).resolve()
    for cand in (p, *p.parents):
        if (cand / "pyproject.toml").exists() and (cand / "evalkit").is_dir():
            return cand
    return p


@dataclass
class NotebookRun:
    """What a notebook needs: the project root, the scored results, where figures go, and the config."""

    root: Path
    results: Any
    figures_dir: Path
    config: EvalConfig

    def save(self, fig, name: str) -> list[Path]:
        from .plots import save_figure

        return save_figure(fig, name, self.figures_dir)

    def show(self, fig, name: str | None = None) -> None:
        """Save ``fig`` as PNG and SVG (when named) and display it in the notebook, whatever the
        matplotlib backend (papermill runs under Agg, where figures are not shown by themselves)."""
        import io

        import matplotlib.pyplot as plt
        from IPython.display import Image, display

        if name:
            self.save(fig, name)
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=100, bbox_inches="tight", metadata={"Software": None})
        display(Image(data=buf.getvalue(), format="png"))
        plt.close(fig)


def notebook_run(data_path: str, results_path: str = "", config_path: str = "", output_dir: str = "",
                 figures_dir: str = "", metrics: Sequence[str] | None = None) -> NotebookRun:
    """Set a notebook up: inside a report, read the report's ``results.parquet``; opened on its own,
    score ``data_path`` here (paths relative to the project root, wherever Jupyter was started)."""
    import os

    import pandas as pd

    root = find_root()
    os.chdir(root)
    cfg = EvalConfig.from_yaml(config_path) if config_path else EvalConfig()
    if results_path:
        results = pd.read_parquet(results_path)
    else:
        from .runner import evaluate

        results = evaluate(load(data_path), list(metrics) if metrics else None, cfg)
    figs = Path(figures_dir) if figures_dir else Path(output_dir or "reports/interactive") / "figures"
    figs.mkdir(parents=True, exist_ok=True)
    return NotebookRun(root, results, figs, cfg)

"""Experiments -> papermill -> ``reports/NAME/``: executed notebooks, one HTML report, figures,
``results.parquet``, ``metrics.json`` and ``signature.json``.

The experiment schema is in :mod:`evalkit.publish.experiment` (paths relative to the experiment file); the
numbers in :mod:`evalkit.publish.analysis`. This module scores once, writes the files, runs the notebooks
that apply to the data (the others are listed with the reason they were skipped) and renders the
HTML page. The notebooks ship inside the package, so a plain ``pip install`` can make reports.
"""
from __future__ import annotations

import html
import json
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from evalkit.publish.analysis import Section, analyze, notebook_section, plan_sections
from evalkit.base.config import redact_values
from evalkit.base.data import load, require_rows, save
from evalkit.base.safeio import OWNED_MARKER, OutputError, atomic_path, output_lock, owned_dir, write_text
from evalkit.publish.experiment import (DEFAULT_NOTEBOOKS, NOTEBOOK_DIR, REPORT_NOTEBOOK, Experiment, ExperimentError,
                         load_experiment, notebook_source)

__all__ = ["ReportError", "run_report", "load_experiment", "to_html", "DEFAULT_NOTEBOOKS", "NOTEBOOK_DIR"]


class ReportError(RuntimeError):
    """A report could not be produced; the message names the experiment key or notebook and cell."""


def _execute(src: Path, dst: Path, params: dict[str, Any], cwd: Path) -> None:
    import papermill as pm
    from papermill.exceptions import PapermillExecutionError

    declared = pm.inspect_notebook(str(src))
    failed = None
    # the kernel process's own stderr (its logging, and zmq's tracebacks when a socket closes under a send while it
    # shuts down) goes to a temporary file, not the report's console; a kernel that dies has its last lines told
    with tempfile.TemporaryFile() as kernel_log, atomic_path(dst) as tmp:  # a killed run: the last whole notebook
        extra = {"kernel_manager_class": _kernel_manager(encrypted=_curve_available(), stderr=kernel_log)}
        written = tmp.with_name(tmp.name + ".ipynb")  # papermill wants the extension; a kill leaves a *.tmp.ipynb
        try:
            pm.execute_notebook(str(src), str(written),
                                parameters={k: v for k, v in params.items() if k in declared},
                                kernel_name="python3", progress_bar=False, cwd=str(cwd), **extra)
        except PapermillExecutionError as e:
            failed = e  # the partial notebook is still renamed into place, for the user to read
        except BaseException as e:
            written.unlink(missing_ok=True)
            if isinstance(e, Exception) and (said := _last_lines(kernel_log)):
                raise ReportError(f"notebook {src.name}: {type(e).__name__}: {e}; the kernel's last words: "
                                  f"{said}") from e
            raise
        written.replace(tmp)
    if failed is not None:
        raise ReportError(f"notebook {src.name} failed at cell {failed.exec_count} (index {failed.cell_index}): "
                          f"{failed.ename}: {failed.evalue}; the partial notebook is kept at {dst}") from None


def _last_lines(log, n: int = 5) -> str:
    """The last ``n`` non-blank lines a kernel wrote to its stderr file ``log``, joined by " | "."""
    log.seek(0)
    lines = [x.strip() for x in log.read().decode("utf-8", "replace").splitlines() if x.strip()]
    return " | ".join(lines[-n:])


def _curve_available() -> bool:
    import zmq
    from jupyter_client.manager import AsyncKernelManager

    return bool(zmq.has("curve")) and "transport_encryption" in AsyncKernelManager.class_trait_names()


def _kernel_manager(encrypted: bool, stderr=None):
    """nbclient's kernel manager, asking for encrypted (CurveZMQ) kernel sockets where zmq has them, so the kernel
    has nothing to warn about on every notebook; nbclient still owns it, starts and stops it. With ``stderr`` (an
    open file) the kernel process writes its stderr there instead of the report's console.

    It does not interrupt the kernel it is stopping. jupyter_client interrupts a kernel before asking it to shut
    down, and an interrupt that lands while the idle kernel handles a message makes it log "[IPKernelApp] ERROR |
    KeyboardInterrupt caught in kernel." on the report's console (seen once in a CI run on a busy machine). After
    the last cell nothing runs to be interrupted; a kernel that does not answer the shutdown request is killed."""
    from jupyter_client.manager import AsyncKernelManager

    class ReportKernelManager(AsyncKernelManager):
        def __init__(self, **kwargs):
            if encrypted:
                kwargs.setdefault("transport_encryption", "required")
            super().__init__(**kwargs)

        async def _async_launch_kernel(self, kernel_cmd, **kw) -> None:
            if stderr is not None:
                kw["stderr"] = stderr
            await super()._async_launch_kernel(kernel_cmd, **kw)

        async def _async_interrupt_kernel(self) -> None:
            if getattr(self, "shutting_down", False):
                return
            await super()._async_interrupt_kernel()

    return ReportKernelManager


# The page's own rules, on top of nbconvert's: nothing wider than the window (long tokens break, code and
# text outputs wrap, images scale), so it reads at 800 px as at 1280 px; wide tables scroll inside their box.
# break-word, not anywhere: a word breaks only where it cannot fit a line of its own, so a table's column keeps a
# metric name whole (anywhere let columns shrink until "completeness" split) and the table scrolls instead; a
# table's caption stays in view, wrapped to the window, while its table scrolls beneath it.
PAGE_CSS = """
body{overflow-wrap:break-word}
.jp-RenderedHTMLCommon table caption{position:sticky;left:0;max-width:calc(100vw - 48px);white-space:normal;
text-align:left}
.jp-Notebook{max-width:72em;margin:0 auto;padding:0 12px;box-sizing:border-box}
.jp-Cell,.jp-OutputArea,.jp-OutputArea-output,.jp-RenderedHTMLCommon,.jp-RenderedMarkdown{min-width:0;max-width:100%}
.jp-OutputArea-output pre,.jp-RenderedText pre{white-space:pre-wrap;overflow-wrap:break-word}
.jp-RenderedHTMLCommon code{white-space:pre-wrap;overflow-wrap:break-word}
.jp-RenderedHTMLCommon img{max-width:100%;height:auto}
.jp-RenderedHTMLCommon table{display:block;overflow-x:auto;max-width:100%}
.jp-RenderedHTMLCommon td,.jp-RenderedHTMLCommon th{text-align:left}
.jp-RenderedHTMLCommon details summary{cursor:pointer}
"""


# $$display$$ and $inline$ TeX in the notebooks' own Markdown cells (pandoc's rule for inline math: no space
# after the opening or before the closing dollar, so "$604 and $640" stays text)
_DISPLAY_MATH = re.compile(r"\$\$(.+?)\$\$", re.S)
_INLINE_MATH = re.compile(r"(?<![\\$\w])\$(?=\S)([^$\n]+?)(?<=\S)\$(?![\w$])")
_MERMAID = re.compile(r'<script type="module">(?:(?!</script>).)*?mermaid(?:(?!</script>).)*</script>', re.S)
_REMOTE_SCRIPT = re.compile(r'<script src="https?://[^"]*"[^>]*>\s*</script>')
_MATHJAX = re.compile(r"<!-- Load mathjax -->.*?</script>\s*<!-- MathJax configuration -->\s*<script[^>]*>.*?</script>",
                      re.S)


def prerender_math(nb) -> None:
    """TeX in the notebook's Markdown cells as MathML, which browsers draw without MathJax: the page needs
    no script and no network (Chromium, Firefox and Safari render MathML Core). Outputs are never touched
    (a dollar amount in an answer is not math)."""
    from latex2mathml.converter import convert

    def math(m, display: str) -> str:
        try:
            return convert(m.group(1).strip(), display=display)
        except Exception:  # a formula latex2mathml cannot read stays as its TeX source
            return m.group(0)

    for cell in nb.cells:
        if cell.cell_type == "markdown":
            src = _DISPLAY_MATH.sub(lambda m: math(m, "block"), cell.source)
            cell.source = _INLINE_MATH.sub(lambda m: math(m, "inline"), src)


def to_html(notebook: Path, signature: str, title: str) -> str:
    """One self-contained HTML page from an executed notebook, code hidden, signature in the header (once,
    wrapped at any width), formulas as MathML (:func:`prerender_math`; no MathJax from a CDN).

    Outputs are rendered by nbconvert; text outputs are escaped and DataFrames are escaped by pandas,
    so an answer containing ``<script>`` shows as text and never runs.
    """
    import nbformat
    from nbconvert import HTMLExporter

    exporter = HTMLExporter(template_name="lab")
    exporter.exclude_input = True
    exporter.exclude_input_prompt = True
    exporter.exclude_output_prompt = True
    nb = nbformat.read(notebook, as_version=4)
    prerender_math(nb)
    body, _ = exporter.from_notebook_node(nb)
    body = _MATHJAX.sub("<!-- formulas are MathML: no MathJax -->", body, count=1)
    body = _REMOTE_SCRIPT.sub("", body)  # require.js serves interactive widgets, which a static page has none of
    body = _MERMAID.sub("", body)  # it fetches mermaid from a CDN for diagrams, which no evalkit page draws
    header = (f'<header class="evalkit-signature" style="font-family:monospace;font-size:12px;padding:6px 12px;'
              f'background:#f3f3f3;border-bottom:1px solid #ccc;overflow-wrap:anywhere;word-break:break-all">'
              f'{html.escape(title)} &middot; '
              f'<span title="reproducibility signature">{html.escape(signature)}</span></header>')
    body = re.sub(r"<title>.*?</title>", f"<title>{html.escape(title)}</title>", body, count=1, flags=re.S)
    body = body.replace("</head>", f"<style>{PAGE_CSS}</style></head>", 1)
    return re.sub(r"(<body[^>]*>)", lambda m: m.group(1) + header, body, count=1)


def _score(exp: Experiment, log: Callable[[str], None]):
    from evalkit.decide.pipeline import evaluate
    from evalkit.run.runner import shows_a_bar

    df = require_rows(load(exp.data, columns=exp.columns), exp.data)
    log(f"evalkit report {exp.name}: scoring {len(df)} rows of {exp.data}")
    # a line per metric scored where no progress bar can be drawn (a log, make, CI): minutes are never silent
    results = evaluate(df, exp.metrics, exp.config(),
                       progress=None if shows_a_bar(sys.stderr) else (lambda line: log(f"  {line}")))
    meta = dict(results.attrs.get("evalkit", {}))
    results.attrs.clear()  # nothing run-specific in the parquet metadata
    return df, results, meta


def _signature(exp: Experiment, meta: Mapping[str, Any], notebooks: Sequence[str]) -> dict[str, Any]:
    """The scoring run's own signature (every resource it loaded), plus what the report adds."""
    from evalkit.base.signature import sig_string

    sig = dict(meta["signature"])
    sig.update({"experiment": exp.name, "experiment_file": exp.source, "scoring_file": exp.scoring_source,
                "fact_checks": exp.fact_checks, "threshold_profile_file": exp.thresholds,
                "notebooks": list(notebooks)})
    sig["signature"] = sig_string(sig)
    return sig


def _params(exp: Experiment, out: Path, overrides: Mapping[str, Any] | None) -> dict[str, Any]:
    """Notebook parameters: where the experiment and the report folder are; each notebook receives only
    the ones it declares."""
    # the judge's settings with any URL password hidden: papermill writes parameters into the notebook twice
    # (the injected cell and its metadata) and the report folder is what people publish; inside a report the
    # judged metrics come scored, so the notebook never calls the judge with them
    judge = redact_values(dict(exp.judge or {}))
    params = {"experiment_path": exp.source, "report_dir": str(out.resolve()),
              "n_resamples": int(exp.calibration.get("n_resamples", 1000)), "judge": judge}
    params.update(overrides or {})
    return params


def _applicable(nbs: Sequence[str], plan: Mapping[str, Section], log) -> tuple[list[str], list[dict[str, str]]]:
    run, skipped = [], []
    for nb in nbs:
        sec = plan.get(notebook_section(nb) or "")
        if sec is not None and not sec.applies:
            skipped.append({"notebook": nb, "section": sec.name, "note": sec.note})
            log(f"skipped {nb}: {sec.note}")
        else:
            run.append(nb)
    return run, skipped


def _fact_check_coverage(exp: Experiment, results, log) -> dict[str, Any] | None:
    """How many of the experiment's fact-check rules apply to some row; the others are named."""
    if not exp.fact_checks:
        return None
    from evalkit.metrics.factchecks import load_rules

    rules = load_rules(exp.fact_checks)
    qtypes = results["question_type"].tolist() if "question_type" in results.columns else None
    unmatched = rules.unmatched(results["id"].tolist(), qtypes)
    if unmatched:
        log(f"fact checks: {len(unmatched)} of {len(rules.rules)} rules in {exp.fact_checks} match no row: "
            f"{', '.join(unmatched)}")
    return {"file": exp.fact_checks, "rules": len(rules.rules), "unmatched": unmatched}


REPORT_OWNER = "experiment.txt"  # inside a report folder: the experiment file that made it


def _prepare_dirs(out: Path, exp: Experiment, overwrite: bool) -> Path:
    """The report folder, created by evalkit (a marker inside) or refused; its figures folder emptied.

    A folder made for another experiment file with the same ``name:`` is refused unless ``overwrite``.
    """
    owner = out / REPORT_OWNER
    if owner.exists() and not overwrite:
        made_by = owner.read_text(encoding="utf-8").strip()
        if made_by and made_by != exp.source:
            raise ReportError(f"{out}: holds the report of another experiment ({made_by}) with the same name "
                              f"{exp.name!r}; rename one experiment or pass --overwrite")
    for data in (exp.data, exp.fact_checks, exp.thresholds, exp.source):
        if data and Path(data).resolve().is_relative_to(out.resolve()):
            raise ReportError(f"{out}: the report folder holds the experiment's input {data}; "
                              "move the input or change the experiment's name")
    _adopt_earlier_report(out)
    try:
        owned_dir(out)
        owned_dir(out / "notebooks")
        figs = owned_dir(out / "figures", clear=True)
    except OutputError as e:
        raise ReportError(str(e)) from None
    write_text(owner, exp.source + "\n")
    return figs


def _adopt_earlier_report(out: Path) -> None:
    """A report folder written before folders carried evalkit's marker (it holds report.html, signature.json and
    results.parquet and nothing else evalkit would not write) is evalkit's: mark it so it can be refreshed."""
    from evalkit.base.safeio import OWNED_MARKER

    ours = {"report.html", "signature.json", "results.parquet", "metrics.json", "notebooks", "figures"}
    if not out.is_dir() or (out / OWNED_MARKER).exists():
        return
    names = {p.name for p in out.iterdir()}
    if {"report.html", "signature.json", "results.parquet"} <= names and names <= ours:
        for sub in ("", "notebooks", "figures"):
            if (out / sub).is_dir():
                (out / sub / OWNED_MARKER).touch()


def _write_json(path: Path, obj: Any) -> None:
    # keys in the order they were computed (not sorted): a table read back from metrics.json keeps its columns'
    # order (system and metric first), and the order is as deterministic as the computation
    write_text(path, json.dumps(obj, indent=2, ensure_ascii=False) + "\n")


def _run_notebooks(nbs: Sequence[str], out: Path, params: dict[str, Any], log) -> dict[str, Path]:
    executed = {}
    for i, nb in enumerate(nbs, start=1):
        t0 = time.perf_counter()
        log(f"[{i}/{len(nbs)}] {Path(nb).stem} ...")
        src = notebook_source(nb)
        dst = out / "notebooks" / src.name
        _execute(src, dst, params, out)
        log(f"[{i}/{len(nbs)}] {Path(nb).stem} done in {time.perf_counter() - t0:.1f}s")
        executed[nb] = dst
    return executed


def run_report(experiment: str | Path, *, out_root: str | Path = "reports", figures_root: str | Path | None = None,
               notebooks: Sequence[str] | None = None, overrides: Mapping[str, Any] | None = None,
               log: Callable[[str], None] | None = None, overwrite: bool = False) -> Path:
    """Produce ``OUT_ROOT/NAME/`` for an experiment; returns the HTML report's path.

    ``overrides`` are extra notebook parameters (``{"n_resamples": 50}`` for a quick run; it also
    sets the resamples of the report's statistics). ``figures_root`` also receives a copy of the
    figures (``figures/NAME/``); by default only when a ``figures/`` folder exists where you run it.
    A failing notebook stops the run with the notebook, cell and error named; what was produced is kept.

    Every file is written to a temporary name and renamed (a killed run leaves each file old or new, never
    cut short); the folder is one evalkit made (a marker inside), never a user folder; a second report into
    the same folder while this one runs is refused; another experiment with the same ``name:`` is refused
    unless ``overwrite``.
    """
    log = log or (lambda msg: print(msg, file=sys.stderr, flush=True))
    try:
        exp = _with_overrides(load_experiment(experiment), overrides)
    except ExperimentError as e:
        raise ReportError(str(e)) from None
    out = Path(out_root) / exp.name
    new_root = not out.parent.exists()
    out.parent.mkdir(parents=True, exist_ok=True)
    try:
        with output_lock(out):
            new = not out.exists()
            try:
                return _run_report(exp, out, figures_root, notebooks, overrides, log, overwrite)
            except BaseException:
                if new:
                    _remove_if_unwritten(out)
                raise
    finally:
        if new_root and out.parent.is_dir() and not any(out.parent.iterdir()):
            out.parent.rmdir()  # the reports folder this run made, left empty by a refusal


def _remove_if_unwritten(out: Path) -> None:
    """Remove a report folder this run made when it failed before writing a file into it (only evalkit's markers
    inside): a refused report leaves nothing behind, a failed notebook's partial copy is kept for reading."""
    import shutil

    markers = {OWNED_MARKER, REPORT_OWNER}
    if out.is_dir() and all(p.is_dir() or p.name in markers for p in out.rglob("*")):
        shutil.rmtree(out, ignore_errors=True)


def _run_report(exp: Experiment, out: Path, figures_root, notebooks, overrides, log, overwrite: bool) -> Path:
    figs = _prepare_dirs(out, exp, overwrite)
    t0 = time.perf_counter()
    _, results, meta = _score(exp, log)
    save(results, out / "results.parquet")
    plan = plan_sections(results, exp)
    nbs, skipped = _applicable(list(notebooks or exp.notebooks), plan, log)
    numbers = analyze(results, exp, plan)
    numbers["skipped_notebooks"] = skipped
    if (meta.get("judge") or {}).get("usage") is not None:  # this run's judge calls, tokens and cost
        numbers["judge_usage"] = {"per_metric": meta["judge"]["usage"], "total": meta["judge"].get("total")}
    if exp.fact_checks:
        numbers["fact_checks"] = _fact_check_coverage(exp, results, log)
    if overrides and "n_resamples" in overrides:
        numbers["note"] = f"quick run: n_resamples overridden to {overrides['n_resamples']}"
    _write_json(out / "metrics.json", numbers)
    sig = _signature(exp, meta, nbs)
    _write_json(out / "signature.json", sig)
    executed = _run_notebooks(nbs, out, _params(exp, out, overrides), log)
    page = executed.get(REPORT_NOTEBOOK) or executed[nbs[-1]]
    html_path = out / "report.html"
    write_text(html_path, to_html(page, sig["signature"], f"evalkit report: {exp.name}"))
    _copy_figures(figs, figures_root, exp.name)
    log(f"evalkit report {exp.name}: done in {time.perf_counter() - t0:.1f}s -> {html_path}")
    return html_path


def _with_overrides(exp: Experiment, overrides: Mapping[str, Any] | None) -> Experiment:
    """A quick run's resample count applies to the report's statistics as well as to the notebooks."""
    import dataclasses

    n = (overrides or {}).get("n_resamples")
    if not n:
        return exp
    return dataclasses.replace(exp, calibration={**exp.calibration, "n_resamples": int(n)},
                               compare={**exp.compare, "n_resamples": int(n)})


def _copy_figures(figs: Path, figures_root: str | Path | None, name: str) -> None:
    """Copy the report's figures into ``FIGURES_ROOT/NAME/``, a folder evalkit made (never a user's own)."""
    root = Path(figures_root) if figures_root is not None else Path("figures")
    if figures_root is None and not root.is_dir():
        return
    try:
        dst = owned_dir(root / name, clear=True)
    except OutputError as e:
        raise ReportError(f"{e} (the report itself is complete)") from None
    for f in sorted(figs.iterdir()):
        if f.is_file() and f.name != ".evalkit-owned":
            with atomic_path(dst / f.name) as tmp:
                shutil.copyfile(f, tmp)

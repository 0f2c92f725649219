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

    def show(self, fig, name: str | None = None) -> None:
        """Save ``fig`` as PNG and SVG (when named) and display it, whatever the matplotlib backend
        (papermill runs under Agg, where figures are not shown by themselves)."""
        import matplotlib.pyplot as plt
        from IPython.display import Image, display

        if name:
            self.save(fig, name)
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=100, bbox_inches="tight", metadata={"Software": None})
        display(Image(data=buf.getvalue(), format="png"))
        plt.close(fig)


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

"""The calibration lab: choose a threshold by looking, label the rows that decide it, and record the labels.

* :func:`explore` — a threshold slider over a score with the confusion matrix, precision, recall and F1 (each
  with its bootstrap interval) and the rows nearest the threshold drawn as evidence (:func:`evalkit.show`).
* :func:`evalkit.label_next` (in :mod:`evalkit.decide.calibrate.active`) — which unlabelled rows to label next.
* :func:`labeler` — each chosen row with its evidence and one button per label; every click writes
  ``id, label, labeller, timestamp`` to a CSV that ``evalkit calibrate --labels`` reads.

The numbers are computed by plain functions (:func:`threshold_view`, :func:`threshold_html`), the widgets only
wire them to a slider and buttons (ipywidgets: the ``lab`` extra, which ``make setup``'s ``dev`` includes).

Examples
--------
>>> import pandas as pd
>>> df = pd.DataFrame({"id": ["a", "b", "c", "d"], "s": [0.1, 0.4, 0.6, 0.9], "bad": [0, 0, 1, 1]})
>>> v = threshold_view(df, score="s", label="bad", threshold=0.5, direction="higher", n_resamples=0)
>>> v["counts"], v["precision"].estimate, v["recall"].estimate
({'tp': 2, 'fp': 0, 'tn': 2, 'fn': 0}, 1.0, 1.0)
"""
from __future__ import annotations

import getpass
import html
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import pandas as pd

from evalkit.decide.calibrate.active import DESIGN_COLUMNS, SYSTEM, labels_csv, read_labels
from evalkit.decide.calibrate.core import flagged_direction
from evalkit.decide.calibrate.core import CalibrationError, confusion_at, operating_point, select_threshold
from evalkit.decide.calibrate.labels import binary_labels


def _scored_labelled(results: pd.DataFrame, score: str, label: str, positive: Any) -> tuple[np.ndarray, np.ndarray,
                                                                                             np.ndarray]:
    for c in (score, label):
        if c not in results.columns:
            raise CalibrationError(f"no column {c!r} in the results (columns: {list(results.columns)[:12]})")
    s = pd.to_numeric(results[score], errors="coerce").to_numpy(dtype=float)
    yb = binary_labels(results[label].tolist(), positive=positive, column=label)
    keep = ~np.isnan(s) & np.array([v is not None for v in yb])
    y = np.array([int(bool(v)) for v, k in zip(yb, keep) if k])
    return s[keep], y, np.flatnonzero(keep)


def threshold_view(results: pd.DataFrame, *, score: str, label: str, threshold: float, positive: Any = None,
                   direction: str | None = None, n_resamples: int = 200, seed: int = 0,
                   n_rows: int = 3) -> dict[str, Any]:
    """Everything the lab shows at one threshold: the confusion counts (flagged = ``score >= t``, or ``<= t``
    for direction 'lower': the inclusive rule calibration chooses and a calibrated profile writes; the seed's
    default verdict rules are strict), precision, recall and F1 with seeded bootstrap intervals, and the
    positions of the ``n_rows`` labelled rows nearest the threshold."""
    direction = direction or flagged_direction(score) or "higher"
    s, y, rows = _scored_labelled(results, score, label, positive)
    op = operating_point(s, y, float(threshold), direction, n_resamples=n_resamples, seed=seed)
    nearest = rows[np.argsort(np.abs(s - threshold), kind="mergesort")[:n_rows]]
    return {"threshold": float(threshold), "direction": direction, "n": int(len(y)), "n_pos": int(y.sum()),
            "counts": confusion_at(s, y, float(threshold), direction), "precision": op.precision,
            "recall": op.recall, "f1": op.f1, "nearest": [int(i) for i in nearest]}


def _iv(iv) -> str:
    if iv.estimate is None:
        return "–"
    if iv.low is None or iv.high is None:
        return f"{iv.estimate:.3f}"
    return f"{iv.estimate:.3f} [{iv.low:.3f}, {iv.high:.3f}]"


def threshold_html(view: dict[str, Any], score: str, label: str) -> str:
    """The confusion matrix and the operating point as an HTML fragment (inline styles)."""
    c, op = view["counts"], "&ge;" if view["direction"] == "higher" else "&le;"
    td = 'style="padding:3px 10px;border:1px solid #ccc;text-align:right"'
    th = 'style="padding:3px 10px;border:1px solid #ccc;text-align:left;background:#f2f2f4"'
    e = html.escape
    return (f'<div class="ek-confusion" style="font:14px/1.5 system-ui,sans-serif">'
            f"<p><b>flag {e(score)} {op} {view['threshold']:.3f}</b> on {view['n']} labelled rows "
            f"({view['n_pos']} positive)</p>"
            f'<table style="border-collapse:collapse"><tr><th {th}></th><th {th}>{e(label)} positive</th>'
            f"<th {th}>{e(label)} negative</th></tr>"
            f"<tr><th {th}>flagged</th><td {td}>TP {c['tp']}</td><td {td}>FP {c['fp']}</td></tr>"
            f"<tr><th {th}>not flagged</th><td {td}>FN {c['fn']}</td><td {td}>TN {c['tn']}</td></tr></table>"
            f"<p>precision {_iv(view['precision'])} · recall {_iv(view['recall'])} · F1 {_iv(view['f1'])}"
            f" <span style=\"color:#555\">(95% bootstrap intervals)</span></p></div>")


def _widgets():
    """ipywidgets, or None where it is not installed (the ``lab`` extra): the views then draw as static HTML."""
    try:
        import ipywidgets
    except ImportError:
        return None
    return ipywidgets


def _bundle(widget, html_text: str, plain: str, **kwargs) -> dict:
    """A display bundle with the widget (JupyterLab draws it) and its static HTML (a report page, nbconvert,
    or a front end without widgets shows that: the mime type each one renders)."""
    out = widget._repr_mimebundle_(**kwargs) if widget is not None else {}
    out = dict(out[0] if isinstance(out, tuple) else out)
    out.update({"text/html": html_text, "text/plain": plain})
    return out


class Explorer:
    """What :func:`explore` returns: a slider (``slider``), the confusion matrix and operating point
    (``summary``) and the nearest rows' evidence (``rows``) in ``widget`` when ipywidgets is installed; ``view``
    holds the numbers shown and :meth:`html` draws them without widgets."""

    def __init__(self, results: pd.DataFrame, *, score: str, label: str, positive: Any, direction: str,
                 n_resamples: int, seed: int, n_rows: int, start: float, marks: Sequence[str] = ()):
        self.results, self.score, self.label = results, score, label
        self.marks = list(marks)  # the chosen thresholds in words (Youden's, and the guaranteed one when asked)
        self.opts = {"positive": positive, "direction": direction, "n_resamples": n_resamples, "seed": seed,
                     "n_rows": n_rows}
        self.widget = self.slider = self.summary = self.rows = None
        w = _widgets()
        if w is not None:
            s = pd.to_numeric(results[score], errors="coerce").dropna()
            lo, hi = float(s.min()), float(s.max())
            self.slider = w.FloatSlider(value=start, min=lo, max=hi, step=(hi - lo) / 200 or 0.01,
                                        readout_format=".3f", description="threshold", continuous_update=False,
                                        layout=w.Layout(width="100%", max_width="42em"))
            self.summary, self.rows = w.HTML(), w.HTML()
            self.widget = w.VBox([self.slider, self.summary, self.rows])
            self.slider.observe(lambda change: self.update(change["new"]), names="value")
        self.update(start)

    def update(self, threshold: float) -> None:
        """The numbers and the drawing at ``threshold`` (the slider calls this)."""
        self.view = threshold_view(self.results, score=self.score, label=self.label, threshold=threshold,
                                   **self.opts)
        if self.widget is not None:
            self.summary.value, self.rows.value = self._summary_html(), self._rows_html()

    def _summary_html(self) -> str:
        marks = "".join(f"<li>{html.escape(m)}</li>" for m in self.marks)
        return (f'<ul style="font:13px/1.5 system-ui,sans-serif;margin:4px 0">{marks}</ul>' if marks else "") + \
            threshold_html(self.view, self.score, self.label)

    def _row_line(self, i: int) -> str:
        """One nearest row in words: its key, score, human label and the slider's decision on it, the rule the
        confusion matrix counts (a row exactly on the threshold is flagged: the rule is inclusive)."""
        r = self.results.iloc[i]
        t, higher = self.view["threshold"], self.view["direction"] == "higher"
        score = float(r[self.score])
        flagged = score >= t if higher else score <= t
        key = f"id {r['id']}" if "id" in self.results.columns else f"row {i}"
        key += f" ({r['system']})" if "system" in self.results.columns else ""
        return (f"{key}: {self.score} {score:.3f}, {self.label} {r[self.label]}; "
                f"{'flagged' if flagged else 'not flagged'} at {'>=' if higher else '<='} {t:.3f}")

    def _rows_html(self) -> str:
        from evalkit.publish.view.show import show

        has_id = "id" in self.results.columns
        parts = [f'<p style="margin:12px 0 2px;font:600 13px system-ui,sans-serif">{html.escape(self._row_line(i))}'
                 "</p>" + show(self.results, self.results["id"].iloc[i] if has_id else i,
                               system=self.results["system"].iloc[i] if "system" in self.results.columns else None
                               )._repr_html_() for i in self.view["nearest"]]
        return ("<h4 style=\"margin:10px 0 4px\">the labelled rows nearest the threshold (the card's verdict is the "
                "run's own profile; the line above it is the slider's rule)</h4>" + "".join(parts))

    def __str__(self) -> str:
        """The operating point in plain text (``print(explore(...))`` outside a notebook)."""
        v, c = self.view, self.view["counts"]
        op = ">=" if v["direction"] == "higher" else "<="
        lines = [f"evalkit.explore: flag {self.score} {op} {v['threshold']:.3f} on {v['n']} labelled rows "
                 f"({v['n_pos']} {self.label} positive)",
                 f"  TP {c['tp']}  FP {c['fp']}  FN {c['fn']}  TN {c['tn']}",
                 f"  precision {_iv(v['precision'])}  recall {_iv(v['recall'])}  F1 {_iv(v['f1'])}  "
                 "(95% bootstrap intervals)", *(f"  {m}" for m in self.marks),
                 "  nearest labelled rows:", *(f"    {self._row_line(i)}" for i in v["nearest"])]
        return "\n".join(lines)

    __repr__ = __str__

    def html(self) -> str:
        """The view at the current threshold as static HTML (what a report page shows)."""
        return self._summary_html() + self._rows_html()

    def _repr_mimebundle_(self, **kwargs):
        return _bundle(self.widget, self.html(), str(self), **kwargs)


def explore(results: pd.DataFrame, score: str, label: str, *, positive: Any = None, direction: str | None = None,
            threshold: float | None = None, n_resamples: int = 200, seed: int = 0, n_rows: int = 3,
            guarantee: str | None = None, delta: float = 0.1) -> Explorer:
    """A threshold slider over ``score`` against the human ``label``: the confusion matrix, precision, recall and
    F1 with 95% bootstrap intervals (``n_resamples``, ``seed``), and the ``n_rows`` labelled rows nearest the
    threshold drawn with their evidence, all updated as the slider moves. Starts at Youden's threshold (or
    ``threshold``). ``positive`` and ``direction`` as in :func:`evalkit.decide.calibrate.calibrate_frame`; the
    direction defaults to the metric's (a good score is high: the flagged class is low).

    With ``guarantee`` (e.g. ``"precision>=0.9"``, as ``evalkit calibrate --guarantee``) the threshold
    Learn-then-Test picks for it at risk ``delta`` is stated beside Youden's (or that none meets it), so the
    reader sees what the guarantee costs."""
    direction = direction or flagged_direction(score) or "higher"
    s, y, _ = _scored_labelled(results, score, label, positive)
    if y.min() == y.max():
        raise CalibrationError(f"{label}: a single class among the {len(y)} labelled rows; label both kinds first")
    youden = float(select_threshold(s, y, "youden", direction))
    op = ">=" if direction == "higher" else "<="
    marks = [f"Youden's threshold: flag {score} {op} {youden:.3f} (no guarantee)"]
    if guarantee:
        marks.append(_guaranteed_mark(s, y, score, op, guarantee, delta, direction))
    start = youden if threshold is None else float(threshold)
    return Explorer(results, score=score, label=label, positive=positive, direction=direction,
                    n_resamples=n_resamples, seed=seed, n_rows=n_rows, start=start, marks=marks)


def _guaranteed_mark(s: np.ndarray, y: np.ndarray, score: str, op: str, guarantee: str, delta: float,
                     direction: str) -> str:
    from evalkit.decide.calibrate.guarantee import guaranteed_threshold

    try:
        g = guaranteed_threshold(s, y, guarantee, delta=delta, direction=direction)
    except CalibrationError as e:
        return f"guaranteed threshold: none; {e}"
    return f"guaranteed threshold: flag {score} {op} {g.threshold:.3f}, {g.statement}"


class Labeler:
    """The widget :func:`labeler` returns. ``record(label)`` labels the current row and moves on (a button
    calls it), ``skip()`` moves on without a label; ``records`` are the labels file's rows."""

    def __init__(self, rows: pd.DataFrame, out: str | Path, labels: Sequence[str], labeller: str,
                 ask: str = "label"):
        self.rows, self.out, self.choices, self.labeller = rows.reset_index(drop=True), Path(out), list(labels), labeller
        self.ask = ask  # what the buttons answer, e.g. "hallucinated?": said beside them
        self.by_system = SYSTEM in self.rows.columns
        self.keys = [(str(i), str(s) if self.by_system else "") for i, s in
                     zip(self.rows["id"], self.rows[SYSTEM] if self.by_system else [""] * len(self.rows))]
        self.records = self._read()
        self.queue = [i for i in range(len(self.rows)) if not any(self._same(r, self.keys[i]) for r in self.records)]
        self.at = 0
        self.widget = None

    def _read(self) -> list[dict]:
        return read_labels(self.out).to_dict("records") if self.out.exists() else []

    @staticmethod
    def _same(record: dict, key: tuple[str, str]) -> bool:
        """Is this labels-file record the row ``key`` (id, system)? A record without a system (a file written for
        one system) matches the id in any system."""
        system = record.get(SYSTEM)
        system = "" if system is None or system != system else str(system)
        return str(record["id"]) == key[0] and (not system or not key[1] or system == key[1])

    @property
    def current(self) -> int | None:
        """The position (in ``rows``) of the row on screen, or None when every row is done."""
        return self.queue[self.at] if self.at < len(self.queue) else None

    def record(self, label: str) -> None:
        """Label the row on screen and write the labels file: re-read under the file's lock (another labeller's
        rows are kept, and every column the file has), this row's earlier label replaced, written atomically."""
        from evalkit.base.safeio import output_lock, write_text

        i = self.current
        if i is None:
            return
        rec = {"id": self.keys[i][0], "label": str(label), "labeller": self.labeller,
               "timestamp": datetime.now(timezone.utc).isoformat(timespec="seconds")}
        if self.by_system:
            rec[SYSTEM] = self.keys[i][1]
        if "why" in self.rows.columns:  # label_next's reason: calibrate says when labels were chosen near t
            rec["selection"] = str(self.rows["why"].iloc[i])
        for c in DESIGN_COLUMNS:  # an estimate draw's probabilities: estimate weights each label by them
            if c in self.rows.columns:
                rec[c] = self.rows[c].iloc[i]
        with output_lock(self.out):
            self.records = [r for r in self._read() if not self._same(r, self.keys[i])] + [rec]
            write_text(self.out, labels_csv(self.records))
        self.at += 1
        self._draw()

    def skip(self) -> None:
        self.at += 1
        self._draw()

    def html(self) -> str:
        """The row on screen with its evidence (or a closing line when every row is done)."""
        from evalkit.publish.view.show import show

        i = self.current
        if i is None:
            return (f"<p><b>done</b>: {len(self.records)} labels in <code>{html.escape(str(self.out))}</code>; "
                    f"next: <code>evalkit calibrate RESULTS --score S --label L --labels {html.escape(str(self.out))}"
                    f"</code></p>")
        row = self.rows.iloc[i]
        view = show(self.rows, row["id"], system=row["system"] if "system" in self.rows.columns else None)
        return (f"<p>row {self.at + 1} of {len(self.queue)} to label · {len(self.records)} labelled in "
                f"<code>{html.escape(str(self.out))}</code> · <b>{html.escape(self.question())}</b></p>"
                + view.compact_html())

    def question(self) -> str:
        """The question the buttons answer, with the answers: ``hallucinated? yes / no / skip``."""
        return f"{self.ask} {' / '.join(map(str, self.choices))} / skip"

    def build(self):
        """The widget: the row on screen and one button per label (None without ipywidgets)."""
        w = _widgets()
        if w is None:
            return None
        self.page = w.HTML()
        buttons = [w.Button(description=str(c)) for c in self.choices] + [w.Button(description="skip")]
        for b, c in zip(buttons, self.choices):
            b.on_click(lambda _b, c=c: self.record(c))
        buttons[-1].on_click(lambda _b: self.skip())
        # the buttons and what they answer sit above the row's card (below a long card they were off-screen)
        self.widget = w.VBox([w.HBox([w.Label(self.ask), *buttons]), self.page])
        self._draw()
        return self.widget

    def _draw(self) -> None:
        if self.widget is not None:
            self.page.value = self.html()

    def _repr_mimebundle_(self, **kwargs):
        return _bundle(self.widget or self.build(), self.html(), f"evalkit.labeler: {len(self.queue)} rows to label "
                                                                 f"into {self.out}", **kwargs)


def labeler(rows: pd.DataFrame, out: str | Path = "labels.csv", *, labels: Sequence[str] = ("yes", "no"),
            labeller: str | None = None, ask: str = "label") -> Labeler:
    """A labelling widget over ``rows`` (e.g. :func:`evalkit.label_next`'s): each row with its evidence and one
    button per label (and skip), above the row and after ``ask``, the question they answer (``"hallucinated?"``);
    each click writes ``id, label, labeller, timestamp`` to ``out``, a CSV that ``evalkit calibrate --labels``
    reads. Rows already in ``out`` are not asked again, so a session can stop and resume. ``labeller`` defaults
    to the login name."""
    if "id" not in rows.columns:
        raise CalibrationError("rows to label need an id column (labels are joined on it)")
    return Labeler(rows, out, labels, labeller or _login(), ask)


def _login() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):  # a container's arbitrary uid has no name
        return "unknown"

"""One writer for every table evalkit prints for a paper: LaTeX (booktabs) and Markdown to the same rules.

A :class:`Table` holds typed cells (numbers, booleans, text, :class:`Interval`, missing values), a caption
and a label; :func:`to_latex` and :func:`to_markdown` render it. The rules, the same in both formats:

* one header row; a caption and a label;
* text escaped (LaTeX: ``_ % & # $ { } ~ ^ \\`` and ``< > |``; Markdown: ``| \\ * _ ` < >``);
* numbers at the table's stated precision (``digits``, said in the note under the table), intervals as
  ``0.642 [0.416, 0.851]``, integers as integers, p-values below ``10**-digits`` as ``<0.001``;
* booleans as the words ``yes`` / ``no``;
* a missing value (None, NaN, NA) as an en dash with a footnote mark; the note under the table says why
  (each distinct reason once, lettered a, b, c);
* a cell may carry its own footnote (e.g. "fewer than 10 pairs: not a finding").

The builders turn evalkit's tidy frames into tables: :func:`summary_table` (:func:`evalkit.decide.aggregate.summary`),
:func:`compare_table` (:func:`evalkit.decide.compare.compare_systems`), :func:`calibration_table`
(:func:`evalkit.decide.calibrate.calibrate_frame`'s ``to_dict()``) and :func:`frame_table` (any data frame).

Examples
--------
>>> t = Table(("system", "score"), ((Cell("rag_a"), Interval(0.6423, 0.4161, 0.8512)), (Cell("b&c"), None)),
...           caption="Scores", label="scores")
>>> print(to_markdown(t))
| system | score |
| :--- | ---: |
| rag\\_a | 0.642 [0.416, 0.851] |
| b&c | –<sup>a</sup> |
<BLANKLINE>
Table: Scores {#tab:scores}
<BLANKLINE>
Numbers are rounded to 3 decimals; intervals are 95% bootstrap intervals. <sup>a</sup> no value.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any, Mapping

EN_DASH = "–"

# forms that need no font beyond Computer Modern in the default OT1 encoding (no bitmap fonts generated)
_LATEX_SPECIAL = {"\\": r"$\backslash$", "{": r"\{", "}": r"\}", "_": r"\_", "%": r"\%", "&": r"\&",
                  "#": r"\#", "$": r"$\$$", "~": r"\~{}", "^": r"\^{}", "<": "$<$", ">": "$>$", "|": r"$|$",
                  # common non-Latin-1 symbols, in forms a plain pdflatex document knows
                  "–": "--", "—": "---", "−": "$-$", "≥": r"$\geq$", "≤": r"$\leq$", "×": r"$\times$",
                  "±": r"$\pm$", "→": r"$\rightarrow$", "≠": r"$\neq$", "≈": r"$\approx$", "…": r"\dots{}",
                  "‘": "`", "’": "'", "“": "``", "”": "''", "•": r"$\bullet$", "°": r"$^\circ$",
                  "µ": r"$\mu$", "\u00a0": "~"}
_MD_SPECIAL = re.compile(r"([\\|*_`<>])")


def latex_escape(text: str) -> str:
    r"""``text`` as LaTeX prints it literally in a plain pdflatex document.

    Latin-1 letters pass through (pdflatex reads UTF-8); a handful of symbols become their LaTeX forms;
    any other character a plain document cannot typeset is replaced by ``?`` rather than breaking the build.

    >>> latex_escape(r"a_b 50% & #1 $x {y} ~z ^w \ <p>")
    'a\\_b 50\\% \\& \\#1 $\\$$x \\{y\\} \\~{}z \\^{}w $\\backslash$ $<$p$>$'
    """
    out = []
    for ch in str(text):
        if ch in _LATEX_SPECIAL:
            out.append(_LATEX_SPECIAL[ch])
        elif ch == "\n" or ch == "\t" or ch == "\r":
            out.append(" ")
        elif 32 <= ord(ch) < 127 or 0xC0 <= ord(ch) <= 0xFF:  # ASCII and Latin-1 letters
            out.append(ch)
        else:
            out.append("?")
    return "".join(out)


def markdown_escape(text: str) -> str:
    r"""``text`` as a Markdown table cell shows it literally: ``| \ * _ ` < >`` escaped, line breaks as spaces.

    >>> markdown_escape("a_b|c *d*")
    'a\\_b\\|c \\*d\\*'
    """
    return _MD_SPECIAL.sub(r"\\\1", re.sub(r"\s*[\r\n]+\s*", " ", str(text)))


@dataclass(frozen=True)
class Interval:
    """A point estimate with its interval, printed ``0.642 [0.416, 0.851]``; without bounds, the estimate alone."""

    estimate: float | None
    low: float | None = None
    high: float | None = None


@dataclass(frozen=True)
class Cell:
    """A value with an optional footnote (``note``); a missing value's note says why it is missing."""

    value: Any
    note: str | None = None


def value_or(value: Any, why: str) -> Any:
    """``value``, or a missing :class:`Cell` whose footnote says ``why`` when ``value`` is missing."""
    return Cell(None, why) if _kind(value) == "missing" else value


@dataclass(frozen=True)
class Table:
    """A table to print: ``columns`` (one header row), ``rows`` of values or :class:`Cell`, a caption, a label.

    ``digits`` is the precision of every non-integer number; ``missing`` the default reason for a missing
    cell; ``p_columns`` the columns that hold p-values (printed ``<0.001`` below the precision); ``notes``
    extra sentences for the note under the table.
    """

    columns: tuple[str, ...]
    rows: tuple[tuple[Any, ...], ...]
    caption: str
    label: str
    digits: int = 3
    missing: str = "no value"
    p_columns: tuple[str, ...] = ()
    notes: tuple[str, ...] = field(default_factory=tuple)

    def _repr_html_(self) -> str:  # Jupyter's display(table)
        return to_html(self)

    def __post_init__(self):
        for i, r in enumerate(self.rows):
            if len(r) != len(self.columns):
                raise ValueError(f"table {self.label!r}: row {i + 1} has {len(r)} cells for {len(self.columns)} columns")


def _is_missing(v: Any) -> bool:
    if v is None:
        return True
    try:
        import pandas as pd

        if v is pd.NA or v is pd.NaT:
            return True
    except ImportError:  # pragma: no cover
        pass
    return isinstance(v, float) and math.isnan(v)


def _number(v: float, digits: int, p_value: bool = False) -> str:
    if p_value and 0 <= v < 10 ** -digits:
        return f"<{10 ** -digits:.{digits}f}"
    return f"{v:.{digits}f}"


def _kind(v: Any) -> str:
    """'missing', 'bool', 'int', 'float', 'interval' or 'text'."""
    import numbers

    if isinstance(v, Interval):
        return "missing" if _is_missing(v.estimate) else "interval"
    if _is_missing(v):
        return "missing"
    if isinstance(v, bool) or type(v).__name__ in ("bool_", "bool"):
        return "bool"
    if isinstance(v, numbers.Integral):
        return "int"
    if isinstance(v, numbers.Real):
        return "float"
    return "text"


def _plain(v: Any, digits: int, p_value: bool) -> str:
    """The cell's text before escaping; '' for a missing value."""
    k = _kind(v)
    if k == "missing":
        return ""
    if k == "bool":
        return "yes" if bool(v) else "no"
    if k == "int":
        return str(int(v))
    if k == "float":
        return _number(float(v), digits, p_value)
    if k == "interval":
        est = _number(float(v.estimate), digits)
        if _is_missing(v.low) or _is_missing(v.high):
            return est
        return f"{est} [{_number(float(v.low), digits)}, {_number(float(v.high), digits)}]"
    return str(v)


def _numeric_column(table: Table, j: int) -> bool:
    kinds = {_kind(c.value if isinstance(c, Cell) else c) for c in (r[j] for r in table.rows)} - {"missing"}
    return bool(kinds) and kinds <= {"int", "float", "interval", "bool"}


def _footnotes(table: Table, minus: bool = False) -> tuple[list[list[tuple[str, str | None]]], list[str]]:
    """Each cell as (plain text, footnote letter or None); the footnotes' texts in letter order."""
    letters: dict[str, str] = {}
    grid = []
    for r in table.rows:
        out = []
        for col, c in zip(table.columns, r):
            v, note = (c.value, c.note) if isinstance(c, Cell) else (c, None)
            if _kind(v) == "missing" and not note:
                note = table.missing
            mark = None
            if note:
                mark = letters.setdefault(note, "abcdefghijklmnopqrstuvwxyz"[len(letters) % 26])
            text = _plain(v, table.digits, col in table.p_columns)
            if minus and _kind(v) in ("int", "float", "interval"):
                text = text.replace("-", "−")  # a minus sign, not a hyphen
            out.append((text, mark))
        grid.append(out)
    return grid, list(letters)


def _note_sentence(table: Table) -> str:
    return (f"Numbers are rounded to {table.digits} decimal{'' if table.digits == 1 else 's'}"
            + ("; intervals are 95% bootstrap intervals" if any(
                isinstance(c.value if isinstance(c, Cell) else c, Interval) for r in table.rows for c in r) else "")
            + ".")


def _label(label: str) -> str:
    label = re.sub(r"[^A-Za-z0-9:_.-]+", "-", label).strip("-") or "table"
    return label if label.startswith("tab:") else f"tab:{label}"


LONG_TEXT_CELL = 24  # a text column with a longer cell wraps in a paragraph column instead of widening the table


def _text_column(grid, j: int) -> str:
    """``l``, or a wrapping ``p{..}`` column when some cell is long (a metric named with its scale), so a table
    stays within the text width in a plain article (no package beyond booktabs)."""
    longest = max((len(row[j][0]) for row in grid), default=0)
    return "l" if longest <= LONG_TEXT_CELL else r"p{0.26\linewidth}"


def _columns(align: str) -> list[str]:
    """The column specs of a tabular preamble: ``"lrp{0.26\\linewidth}"`` -> ``["l", "r", "p{0.26\\linewidth}"]``."""
    return re.findall(r"p\{[^}]*\}|[lcr]", align)


def to_latex(table: Table) -> str:
    r"""The table as a LaTeX ``table`` float with booktabs rules (needs ``\usepackage{booktabs}``).

    >>> t = Table(("metric", "mean"), (("relevance", 0.5), ("f_1", None)), caption="Means", label="means")
    >>> print(to_latex(t))
    \begin{table}[htbp]
    \centering
    \caption{Means}
    \label{tab:means}
    \begin{tabular}{lr}
    \toprule
    metric & mean \\
    \midrule
    relevance & 0.500 \\
    f\_1 & --\textsuperscript{a} \\
    \bottomrule
    \end{tabular}
    <BLANKLINE>
    \smallskip
    {\footnotesize\raggedright Numbers are rounded to 3 decimals. \textsuperscript{a}~no value.\par}
    \end{table}
    """
    grid, notes = _footnotes(table, minus=True)
    align = "".join("r" if _numeric_column(table, j) else _text_column(grid, j) for j in range(len(table.columns)))
    wide = len(table.columns) > 6
    lines = [r"\begin{table}[htbp]", r"\centering"]
    if wide:  # more columns than a text width holds at the document's size: one or two sizes smaller
        lines += [r"\footnotesize" if len(table.columns) > 8 else r"\small", r"\setlength{\tabcolsep}{3pt}"]
    wraps = [c.startswith("p{") for c in _columns(align)]
    # a wrapping column's cells are set ragged right; \raggedright redefines \\, so those rows end in \tabularnewline
    end = r" \tabularnewline" if any(wraps) else r" \\"
    lines += [rf"\caption{{{latex_escape(table.caption)}}}", rf"\label{{{_label(table.label)}}}",
              rf"\begin{{tabular}}{{{align}}}", r"\toprule",
              " & ".join(latex_escape(c) for c in table.columns) + end, r"\midrule"]
    for row in grid:
        cells = [(r"\raggedright " if wrap else "") + ("--" if not text else latex_escape(text))
                 + (rf"\textsuperscript{{{m}}}" if m else "") for (text, m), wrap in zip(row, wraps)]
        lines.append(" & ".join(cells) + end)
    lines += [r"\bottomrule", r"\end{tabular}", ""]
    foot = " ".join([latex_escape(_note_sentence(table)), *(latex_escape(n) for n in table.notes),
                     *(rf"\textsuperscript{{{m}}}~{latex_escape(n)}." for n, m in zip(notes, "abcdefghijklmnopqrstuvwxyz"))])
    lines += [r"\smallskip", rf"{{\footnotesize\raggedright {foot}\par}}", r"\end{table}"]
    return "\n".join(lines)


def to_markdown(table: Table) -> str:
    """The table in Markdown (GitHub/pandoc pipe table), to the same rules as :func:`to_latex`: one header row,
    then a pandoc caption line ``Table: CAPTION {#tab:LABEL}`` and the note."""
    grid, notes = _footnotes(table)
    lines = ["| " + " | ".join(markdown_escape(c) for c in table.columns) + " |",
             "| " + " | ".join("---:" if _numeric_column(table, j) else ":---" for j in range(len(table.columns))) + " |"]
    for row in grid:
        cells = [(EN_DASH if not text else markdown_escape(text)) + (f"<sup>{m}</sup>" if m else "") for text, m in row]
        lines.append("| " + " | ".join(cells) + " |")
    foot = " ".join([_note_sentence(table), *(markdown_escape(n) for n in table.notes),
                     *(f"<sup>{m}</sup> {markdown_escape(n)}." for n, m in zip(notes, "abcdefghijklmnopqrstuvwxyz"))])
    return "\n".join(lines + ["", f"Table: {markdown_escape(table.caption)} {{#{_label(table.label)}}}", "", foot])


# inline styles (no <style> block): a page, a trusted or untrusted notebook and an e-mail client render them alike
_HTML_BOX = "overflow-x:auto;max-width:100%;margin:0.5em 0 1em"
_HTML_TABLE = "border-collapse:collapse;font-size:0.92em;margin:0"
_HTML_CELL = "padding:3px 8px;border-bottom:1px solid #ddd;vertical-align:top;"
_HTML_FIRST = "position:sticky;left:0;background:#fff;z-index:1;"
_HTML_NOTE = "font-size:0.85em;color:#444;margin:0.3em 0 0;max-width:60em;text-align:left"


def to_html(table: Table) -> str:
    """The table as HTML, to the same rules as :func:`to_latex` (one header row, missing values as an en dash
    with a lettered footnote, booleans as words, numbers at the stated precision), styled inline.

    A wide table scrolls inside its own box, never the page, with its first column held in place; text
    columns are left-aligned and wrap, numeric ones are right-aligned and do not.

    >>> t = Table(("metric", "p"), (("a<b", None),), caption="P", label="p")
    >>> h = to_html(t)
    >>> "a&lt;b" in h and "–<sup>a</sup>" in h and "None" not in h
    True
    """
    import html

    grid, notes = _footnotes(table, minus=True)
    numeric = [_numeric_column(table, j) for j in range(len(table.columns))]

    def style(j: int, head: bool) -> str:
        align = "text-align:right;white-space:nowrap;" if numeric[j] else \
            "text-align:left;overflow-wrap:break-word;min-width:6em;max-width:32em;"
        return _HTML_CELL + align + (_HTML_FIRST if j == 0 else "") + ("border-bottom:1px solid #888;" if head else "")

    head = "".join(f'<th style="{style(j, True)}">{html.escape(c)}</th>' for j, c in enumerate(table.columns))
    body = "".join("<tr>" + "".join(
        f'<td style="{style(j, False)}">{html.escape(text) if text else EN_DASH}'
        f'{f"<sup>{m}</sup>" if m else ""}</td>' for j, (text, m) in enumerate(row)) + "</tr>" for row in grid)
    foot = " ".join([_note_sentence(table), *(html.escape(n) for n in table.notes),
                     *(f"<sup>{m}</sup> {html.escape(n)}." for n, m in zip(notes, "abcdefghijklmnopqrstuvwxyz"))])
    return (f'<div class="ek-table" style="{_HTML_BOX}"><table id="{html.escape(_label(table.label))}" '
            f'style="{_HTML_TABLE}"><caption style="caption-side:top;text-align:left;font-weight:600;'
            f'padding:0 0 4px">{html.escape(table.caption)}</caption><thead><tr>{head}</tr></thead>'
            f'<tbody>{body}</tbody></table></div><p style="{_HTML_NOTE}">{foot}</p>')


def render(table: Table, fmt: str) -> str:
    """``to_latex``, ``to_markdown`` or ``to_html`` by name."""
    if fmt == "latex":
        return to_latex(table)
    if fmt == "markdown":
        return to_markdown(table)
    if fmt == "html":
        return to_html(table)
    raise ValueError(f"table format {fmt!r}: use latex, markdown or html")


# --- builders: evalkit's frames as tables ---------------------------------------------------------------------

def _metric_label(metric: str) -> str:
    from evalkit.metrics import REGISTRY

    m = REGISTRY.get(metric)
    return f"{metric} ({m.reads_as})" if m is not None else str(metric)


def _get(row: Mapping[str, Any], key: str) -> Any:
    v = row.get(key)
    return None if _is_missing(v) else v


def summary_table(tidy, by: str | None = None, *, digits: int = 3, caption: str | None = None,
                  label: str = "summary", n_resamples: int | None = None) -> Table:
    """:func:`evalkit.decide.aggregate.summary` (tidy, grouped by at most one column) as a table: one row per metric
    (and group, in a column after the metric, so any number of systems fits a page's width): ``mean [95% CI]``,
    the corpus value where some metric counts things, and ``n (undet., err.)``.

    Metrics with no mean anywhere (labels) are left out; a group without a value for a metric is left out too
    (its row counts are in ``--format tidy``).
    """
    d = tidy[tidy["mean"].notna()]
    has_micro = "micro" in d.columns and d["micro"].notna().any()
    by = by if by and by in d.columns else None
    columns = ["metric", *([by] if by else []), "mean [95% CI]", *(["micro [95% CI]"] if has_micro else []),
               "n (undet., err.)"]
    order = {m: i for i, m in enumerate(dict.fromkeys(d["metric"]))}
    d = d.assign(_o=d["metric"].map(order)).sort_values(["_o", *([by] if by else [])], kind="stable")
    rows = []
    for r in d.to_dict("records"):
        row: list[Any] = [_metric_label(r["metric"]), *([r[by]] if by else []),
                          Interval(_get(r, "mean"), _get(r, "low"), _get(r, "high"))]
        if has_micro:
            row.append(value_or(Interval(_get(r, "micro"), _get(r, "micro_low"), _get(r, "micro_high")),
                                "the metric counts nothing: no corpus value"))
        row.append(f"{int(r['n'])} ({int(r['n_undetermined'])}, {int(r['n_error'])})")
        rows.append(tuple(row))
    notes = ["micro: the corpus value, every counted item weighing the same."] if has_micro else []
    if n_resamples == 0:
        notes.append("Intervals were not computed (0 bootstrap resamples).")
    cap = caption or ("Scores" + (f" by {by}" if by else "") + ": mean with 95% bootstrap interval over rows; "
                      "n (undetermined, errors) counts the rows")
    return Table(tuple(columns), tuple(rows), cap, label, digits=digits, notes=tuple(notes))


def summary_wide_table(tidy, by: str, *, digits: int = 3, caption: str | None = None,
                       label: str = "summary") -> Table:
    """:func:`evalkit.decide.aggregate.summary` grouped by ``by`` (a few systems) as a paper prints it: one row per metric,
    one ``mean [95% CI]`` column per group, the side that is better, and the determined rows per group, so a
    table of 19 metrics is 19 rows, not 38 with wrapped names.

    >>> import pandas as pd
    >>> tidy = pd.DataFrame({"system": ["a", "b"], "metric": ["relevance"] * 2, "mean": [0.3, 0.5],
    ...                      "low": [0.2, 0.4], "high": [0.4, 0.6], "n_determined": [42, 40]})
    >>> t = summary_wide_table(tidy, "system")
    >>> t.columns, t.rows[0][:2], t.rows[0][3], t.rows[0][4]
    (('metric', 'better', 'a', 'b', 'n'), ('relevance', 'higher'), Interval(estimate=0.5, low=0.4, high=0.6), '42, 40')
    """
    from evalkit.metrics import REGISTRY

    d = tidy[tidy["mean"].notna()]
    groups = list(dict.fromkeys(map(str, sorted(d[by].dropna().unique()))))
    rows = []
    for metric in dict.fromkeys(d["metric"]):
        per = {str(r[by]): r for r in d[d["metric"] == metric].to_dict("records")}
        cells = [value_or(Interval(*(None if _get(per[g], k) is None else float(per[g][k])
                                     for k in ("mean", "low", "high"))) if g in per else None, f"no value for {g}")
                 for g in groups]
        counts = [int(per[g]["n_determined"]) for g in groups if g in per]
        meta = REGISTRY.get(metric)
        rows.append((metric, meta.better if meta is not None and meta.better != "none" else "–", *cells,
                     str(counts[0]) if len(set(counts)) == 1 else ", ".join(map(str, counts))))
    cap = caption or (f"Mean of each metric by {by} with its 95% bootstrap interval over rows; n: the rows where "
                      "the metric is determined")
    return Table(("metric", "better", *groups, "n"), tuple(rows), cap, label, digits=digits)


def compare_table(table, *, digits: int = 3, caption: str | None = None, label: str = "compare",
                  min_pairs: int | None = None, mcnemar_columns: bool = True) -> Table:
    """:func:`evalkit.decide.compare.compare_systems`'s table: per metric (and group) the pairs, both means, the
    difference ``b - a`` with its paired-bootstrap 95% interval, raw and Holm-adjusted p-values, and McNemar's
    discordant counts and p-value where a binary column was compared. A group with too few pairs carries a
    footnote: its p-values are not findings."""
    records = table.to_dict("records") if hasattr(table, "to_dict") else list(table)
    a = records[0]["system_a"] if records else "a"
    b = records[0]["system_b"] if records else "b"
    by = next((c for c in (records[0] if records else {}) if c not in _COMPARE_COLUMNS), None)
    tested = [r for r in records if _get(r, "p_mcnemar") is not None]
    mcnemar = bool(tested) and mcnemar_columns  # else said in the notes: a paper's table keeps to one column per idea
    columns = ["metric", *([by] if by else []), "pairs", "mean A", "mean B", "B − A [95% CI]",
               "p (bootstrap)", "p (Holm)", *(["only A", "only B", "p (McNemar)"] if mcnemar else [])]
    rows = []
    for r in records:
        note = None
        if bool(_get(r, "small")):
            note = r.get("note") or f"fewer than {min_pairs or 'the minimum'} pairs: p-values are not findings"
        none = "no pairs to compare"
        row = [r["metric"], *([r.get(by)] if by else []), Cell(int(r["n_pairs"]), note),
               value_or(_get(r, "mean_a"), none), value_or(_get(r, "mean_b"), none),
               value_or(Interval(_get(r, "diff"), _get(r, "low"), _get(r, "high")), none),
               value_or(_get(r, "p_bootstrap"), none), value_or(_get(r, "p_holm"), none)]
        if mcnemar:
            binary = _get(r, "p_mcnemar") is not None
            why = "McNemar's test applies to binary columns only"
            row += [value_or(int(r["only_a"]) if binary else None, why),
                    value_or(int(r["only_b"]) if binary else None, why), value_or(_get(r, "p_mcnemar"), why)]
        rows.append(tuple(row))
    cap = caption or (f"Paired comparison of {b} with {a}: difference B minus A with its 95% paired bootstrap "
                      "interval; Holm's adjustment across the metrics")
    notes = [f"A: {a}; B: {b}."] + (["only A, only B: pairs where only that system is positive (McNemar's "
                                     "discordant pairs)."] if mcnemar else [])
    if tested and not mcnemar:
        notes += [f"McNemar's exact test on {r['metric']}: positive for A only on {int(r['only_a'])} pairs, for B only "
                  f"on {int(r['only_b'])}, p {_p_text(_get(r, 'p_mcnemar'), digits)}." for r in tested]
    return Table(tuple(columns), tuple(rows), cap, label, digits=digits, notes=tuple(notes),
                 p_columns=("p (bootstrap)", "p (Holm)", "p (McNemar)"))


def _p_text(p: float, digits: int) -> str:
    """A p-value in a sentence, by the tables' own rule (:func:`_number`): ``< 0.001`` below the precision."""
    shown = _number(p, digits, p_value=True)
    return f"< {shown[1:]}" if shown.startswith("<") else f"= {shown}"


_COMPARE_COLUMNS = {"metric", "system_a", "system_b", "n_pairs", "mean_a", "mean_b", "diff", "low", "high",
                    "p_bootstrap", "p_holm", "only_a", "only_b", "p_mcnemar", "small", "note"}


def calibration_table(cal: Mapping[str, Any], *, digits: int = 3, caption: str | None = None,
                      label: str = "calibration") -> Table:
    """A calibration's ``to_dict()`` (:class:`evalkit.decide.calibrate.TableCalibration`) as a table: ROC AUC, PR AUC,
    the threshold and precision, recall, F1 at it, each with its bootstrap interval."""
    def iv(d):
        d = d or {}
        return Interval(d.get("estimate"), d.get("low"), d.get("high"))

    at = cal.get("at_threshold") or {}
    thr = cal.get("threshold_ci") or {}
    rows = [("ROC AUC", value_or(iv(cal.get("roc_auc")), "one class only")),
            ("PR AUC", value_or(iv(cal.get("pr_auc")), "one class only")),
            ("threshold", value_or(Interval(cal.get("threshold"), thr.get("low"), thr.get("high")),
                                   "no threshold reached the criterion"))]
    why = "no threshold, so no operating point"
    rows += [(name, value_or(iv(at.get(key)) if at else None, why)) for name, key in
             (("precision", "precision"), ("recall", "recall"), ("F1", "f1"))]
    score, lab = cal.get("score", "score"), cal.get("label", "label")
    cap = caption or (f"Calibration of {score} against {lab} ({cal.get('criterion', '')} criterion; "
                      f"{cal.get('protocol', '')}; reported on {cal.get('reported_on', '')})")
    return Table(("statistic", "value [95% CI]"), tuple(rows), cap, label, digits=digits)


def frame_table(df, *, caption: str, label: str, digits: int = 3, index: bool = False,
                missing: str = "no value") -> Table:
    """Any data frame as a table (for notebooks): its columns as the header, its cells typed as they are."""
    d = df.reset_index() if index else df
    rows = tuple(tuple(v.item() if hasattr(v, "item") and not isinstance(v, str) else v for v in r)
                 for r in d.itertuples(index=False, name=None))
    return Table(tuple(str(c) for c in d.columns), rows, caption, label, digits=digits, missing=missing)


def write_tex(path, table: Table) -> Any:
    """Write ``to_latex(table)`` to ``path`` atomically."""
    from evalkit.base.safeio import write_text

    return write_text(path, to_latex(table) + "\n")


__all__ = ["Table", "Cell", "Interval", "value_or", "latex_escape", "markdown_escape", "to_latex", "to_markdown",
           "to_html", "render",
           "summary_table", "compare_table", "calibration_table", "frame_table", "write_tex"]


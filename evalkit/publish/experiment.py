"""Experiment files: the schema, validated when loaded, with paths relative to the file.

An experiment is a YAML file::

    name: my-study                   # names the report folder: reports/my-study/
    data: my_answers.csv             # relative to THIS file (or absolute)
    columns: {answer: model_output}  # canonical -> source column mapping
    scoring: scoring.yaml            # EvalConfig YAML (relative to this file) or an inline mapping
    fact_checks: my_rules.yaml       # per-question checks for this dataset (optional)
    metrics: null                    # registry names; null = the defaults whose inputs exist
    thresholds: profile.yaml         # a calibrated threshold profile for the verdict (optional)
    judge: null                      # LLM judge settings (optional)
    calibration: {score: hallucination, label: hallucinated, positive: null, direction: higher,
                  criterion: youden, split: seeded, by: [question_type], n_resamples: 1000}
    compare: {systems: [a, b], binary: [correct], positive: null, pair_on: id, by: question_type, min_pairs: 10}
    seed: 0
    notebooks: [00_quickstart, ..., mine.ipynb]  # shipped names or your own notebooks; default: all shipped

Sections whose data is absent are skipped by the report with a note; they are never errors.
``evalkit init DATA`` writes a starter file for a dataset.

Examples
--------
>>> import tempfile, pathlib
>>> d = pathlib.Path(tempfile.mkdtemp())
>>> _ = (d / "e.yaml").write_text("name: x\\ndata: answers.csv\\n")
>>> exp = load_experiment(d / "e.yaml")
>>> exp.data == str(d / "answers.csv")
True
"""
from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from evalkit.base.config import ConfigError, EvalConfig, read_yaml_mapping

NOTEBOOK_DIR = Path(__file__).resolve().parents[1] / "notebooks"
DEFAULT_NOTEBOOKS = ("00_quickstart", "01_relevance", "02_completeness", "03_hallucination",
                     "04_reference_metrics", "05_judged_metrics", "06_calibration", "07_compare_systems",
                     "09_summary_scorers", "08_report")
REPORT_NOTEBOOK = "08_report"
CALIBRATION_KEYS = {"score", "label", "positive", "direction", "criterion", "split", "by", "groups", "n_resamples",
                    "guarantee", "delta"}
COMPARE_KEYS = {"systems", "binary", "positive", "pair_on", "by", "min_pairs", "n_resamples"}


class ExperimentError(ValueError):
    """An experiment file is invalid; the message names the file and the key."""


@dataclass(frozen=True)
class Experiment:
    """A validated experiment file; every path in it is already resolved against the file's folder."""

    name: str
    data: str
    columns: Mapping[str, str] = field(default_factory=dict)
    scoring: EvalConfig = field(default_factory=EvalConfig)
    scoring_source: str | None = None
    fact_checks: str | None = None
    metrics: tuple[str, ...] | None = None
    thresholds: str | None = None
    judge: Mapping[str, Any] | None = None
    calibration: Mapping[str, Any] = field(default_factory=dict)
    compare: Mapping[str, Any] = field(default_factory=dict)
    seed: int = 0
    notebooks: tuple[str, ...] = DEFAULT_NOTEBOOKS
    description: str = ""
    print_figures: bool = False  # also every report figure as PDF/SVG at 3.5 in and 7 in (figures/print/)
    source: str = ""

    def config(self) -> EvalConfig:
        """The scoring config with the experiment's seed, fact checks, judge and threshold profile applied."""
        cfg = dataclasses.replace(self.scoring, seed=self.seed)
        if self.fact_checks:
            cfg = dataclasses.replace(cfg, fact_checks=self.fact_checks)
        if self.judge:
            cfg = dataclasses.replace(cfg, judge={**cfg.judge, **self.judge})
        if self.thresholds:
            from evalkit.decide.profiles import thresholds_from_profile

            cfg = dataclasses.replace(cfg, thresholds=thresholds_from_profile(self.thresholds, cfg.thresholds))
        return cfg


_KEYS = {f.name for f in dataclasses.fields(Experiment)} - {"source", "scoring_source"}


def _resolve(base: Path, value: Any) -> str | None:
    """A path written in the experiment file, relative to the file's folder (absolute paths kept)."""
    if value in (None, ""):
        return None
    p = Path(str(value)).expanduser()
    return str(p if p.is_absolute() else (base / p).resolve())


def _check_section(path: Path, raw: Mapping[str, Any], key: str, known: set[str]) -> dict[str, Any]:
    sec = raw.get(key) or {}
    if not isinstance(sec, dict):
        raise ExperimentError(f"{path}: {key} must be a mapping, got {type(sec).__name__}")
    bad = sorted(set(sec) - known)
    if bad:
        raise ExperimentError(f"{path}: {key} has unknown key(s) {bad}; known: {sorted(known)}")
    _check_values(path, key, sec)
    return dict(sec)


def _check_top(path: Path, raw: Mapping[str, Any]) -> None:
    unknown = sorted(set(raw) - _KEYS)
    if unknown:
        raise ExperimentError(f"{path}: unknown key(s) {unknown}; known: {sorted(_KEYS)}")
    for key in ("name", "data"):
        if key not in raw:
            raise ExperimentError(f"{path}: missing required key {key!r}")
        if raw[key] is None or str(raw[key]).strip() == "":
            raise ExperimentError(f"{path}: {key} is empty; give the experiment's "
                                  f"{'name (it names the report folder)' if key == 'name' else 'data file'}")
    name = str(raw["name"])
    # the name becomes a folder that the report clears: '.', '..' or a leading dot would name the user's own
    if not re.fullmatch(r"[A-Za-z0-9_-][A-Za-z0-9_.-]*", name) or set(name) == {"."}:
        raise ExperimentError(f"{path}: name {raw['name']!r} must be letters, digits, '.', '_' or '-', not "
                              f"start with '.' (it names the report's folder)")
    seed = raw.get("seed", 0)
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise ExperimentError(f"{path}: seed must be an integer, got {seed!r}")
    if not isinstance(raw.get("print_figures", False), bool):
        raise ExperimentError(f"{path}: print_figures must be true or false, got {raw['print_figures']!r}")


# keys of the calibration/compare sections whose values must be integers of at least this much
_INT_KEYS = {"n_resamples": 1, "min_pairs": 1}
_TEXT_KEYS = {"score", "label", "direction", "criterion", "split", "groups", "pair_on"}


def _check_values(path: Path, key: str, sec: Mapping[str, Any]) -> None:
    """Types of a section's values, checked at load (before any scoring), naming the file and key."""
    for k, v in sec.items():
        if k in _INT_KEYS and (isinstance(v, bool) or not isinstance(v, int) or v < _INT_KEYS[k]):
            raise ExperimentError(f"{path}: {key}.{k} must be an integer >= {_INT_KEYS[k]}, got {v!r}")
        if k in _TEXT_KEYS and v is not None and not isinstance(v, str):
            raise ExperimentError(f"{path}: {key}.{k} must be text, got {v!r}")
        if k == "direction" and v not in (None, "higher", "lower"):
            raise ExperimentError(f"{path}: {key}.direction must be 'higher' or 'lower', got {v!r}")
        if k == "systems" and (not isinstance(v, list) or len(v) != 2):
            raise ExperimentError(f"{path}: {key}.systems must be a list of two system names, got {v!r}")


def _scoring(path: Path, raw: Mapping[str, Any]) -> tuple[EvalConfig, str | None]:
    scoring = raw.get("scoring")
    try:
        from evalkit.metrics import REGISTRY, RENAMED

        if isinstance(scoring, str):
            src = _resolve(path.parent, scoring)
            if not Path(src).exists():
                raise ExperimentError(f"{path}: scoring: no such file {src}")
            return EvalConfig.from_yaml(src).validate(src, registry=REGISTRY, renamed=RENAMED), src
        cfg = EvalConfig.from_dict(scoring, source=f"{path}: scoring")
        return cfg.validate(f"{path}: scoring", registry=REGISTRY, renamed=RENAMED), None
    except ConfigError as e:
        raise ExperimentError(str(e)) from None


def _notebooks(path: Path, raw: Mapping[str, Any]) -> tuple[str, ...]:
    """Shipped notebook names (``06_calibration``) or your own notebooks as paths ending in ``.ipynb``
    (relative to the experiment file); each is checked to exist."""
    out = []
    for nb in raw.get("notebooks") or DEFAULT_NOTEBOOKS:
        nb = str(nb)
        if nb.endswith(".ipynb"):
            own = _resolve(path.parent, nb)
            if not Path(own).exists():
                raise ExperimentError(f"{path}: notebook {nb!r} not found (looked at {own})")
            out.append(own)
        elif (NOTEBOOK_DIR / f"{nb}.ipynb").exists():
            out.append(nb)
        else:
            known = sorted(p.stem for p in NOTEBOOK_DIR.glob("[0-9][0-9]_*.ipynb"))
            raise ExperimentError(f"{path}: notebook {nb!r} not found (shipped notebooks: {known}; "
                                  f"your own: a path ending in .ipynb)")
    return tuple(out)


def notebook_source(nb: str) -> Path:
    """Where a notebook entry of an experiment lives: a shipped name, or a path to your own."""
    return Path(nb) if nb.endswith(".ipynb") else NOTEBOOK_DIR / f"{nb}.ipynb"


def load_experiment(path: str | Path) -> Experiment:
    """Read and validate an experiment YAML; paths inside it resolve against the file's folder."""
    path = Path(path).resolve()
    raw = read_yaml_mapping(path, ExperimentError, "experiment file")
    _check_top(path, raw)
    cfg, scoring_source = _scoring(path, raw)
    if cfg.custom_metrics:  # known wherever the experiment is loaded (the report's notebook kernels too)
        from evalkit.metrics.custom import activate

        activate(cfg)
    metrics = raw.get("metrics")
    if metrics is not None and (not isinstance(metrics, list) or not all(isinstance(m, str) for m in metrics)):
        raise ExperimentError(f"{path}: metrics must be a list of metric names or null")
    return Experiment(
        name=str(raw["name"]), data=_resolve(path.parent, raw["data"]), columns=dict(raw.get("columns") or {}),
        scoring=cfg, scoring_source=scoring_source, fact_checks=_resolve(path.parent, raw.get("fact_checks")),
        metrics=tuple(metrics) if metrics else None, thresholds=_resolve(path.parent, raw.get("thresholds")),
        judge=raw.get("judge"), calibration=_check_section(path, raw, "calibration", CALIBRATION_KEYS),
        compare=_check_section(path, raw, "compare", COMPARE_KEYS), seed=int(raw.get("seed", 0)),
        notebooks=_notebooks(path, raw), description=str(raw.get("description") or ""),
        print_figures=bool(raw.get("print_figures", False)), source=str(path))


def _label_columns(df) -> list:
    """Columns that look like human labels (bool, 0/1, Y/N, yes/no, true/false, pass/fail, or a 1-5 scale),
    canonical ones excluded, each with the positive class that flags its bad answers."""
    from evalkit.decide.calibrate import suggest_label
    from evalkit.base.data import CANONICAL_COLUMNS

    found = (suggest_label(df[c].tolist(), str(c)) for c in df.columns if c not in CANONICAL_COLUMNS)
    return [s for s in found if s is not None]


def _calibration_score(columns) -> tuple[str, str]:
    """The score a starter calibration pairs with a label, and its direction: the metric of the default profile's
    first rule that the data can feed (the unsupported-facts check with contexts, else whether it answers the
    question), since that is what decides the verdict the report shows. A rule that compares with the reference
    counts only where the data has one (without it the metric is a constant, and an AUC of nothing); a rule that
    flags high values points at the positive label from above ("higher")."""
    from evalkit.base.config import VerdictThresholds
    from evalkit.decide.verdict import roles_for
    from evalkit.metrics import REGISTRY

    have = set(columns)
    roles = roles_for(VerdictThresholds().named)

    def feeds(name: str) -> bool:
        metric = REGISTRY[name]
        reads_reference = "ground_truth" in (*metric.needs, *metric.optional)
        return set(metric.needs) <= have and (not reads_reference or "ground_truth" in have)

    name, role = next(((n, r) for n, r in roles if feeds(n)), roles[0])
    return name, "higher" if role.flag == "above" else "lower"


def _calibration_lines(labels: list, columns) -> list[str]:
    import json

    if not labels:
        return ["# calibration: no binary label column (True/False, 0/1, Y/N, yes/no, pass/fail) or 1-5 score in the",
                "#   data; add one, e.g. `hallucinated`, then: calibration: {score: "
                f"{_calibration_score(columns)[0]}, label: hallucinated, split: seeded}}"]
    # a column named for hallucination first, then two-valued labels before a 1-5 scale
    label = min(labels, key=lambda s: ("halluc" not in s.column.lower(), s.kind != "binary"))
    score, direction = _calibration_score(columns)
    from evalkit.run.runner import output_columns

    column = str(label.column)
    kept = [] if column not in output_columns() else [  # scoring never overwrites it: read it where it is kept
        f"  # your column {column!r} has the name of an evalkit output; scoring keeps it as input_{column}"]
    column = f"input_{column}" if kept else column
    return ["calibration:               # choose a threshold for a score against a human label",
            f"  score: {score}",
            f"  label: {column}             # positive = a bad answer, so the verdict flags that side", *kept,
            f"  positive: {json.dumps(label.positive)}           # {label.why}",
            f"  direction: {direction}           # {direction}: a {direction} score points at the positive label",
            "  criterion: youden",
            "  split: seeded             # choose on half, report on the other half (honest)",
            "  n_resamples: 1000"]


def _compare_lines(df) -> list[str]:
    if "system" not in df.columns:
        return ["# compare: no 'system' column; add one naming which system gave each answer to compare systems"]
    systems = sorted(df["system"].dropna().astype(str).unique())
    if len(systems) < 2:
        return [f"# compare: one system only ({', '.join(systems)}); add a second system's answers to compare"]
    pair_on = _pairing_column(df, systems[:2])
    return ["compare:                   # paired comparison of two systems on the same questions",
            f"  systems: [{systems[0]}, {systems[1]}]", f"  pair_on: {pair_on}", "  min_pairs: 10"]


def _pairing_column(df, systems: list[str]) -> str:
    """The column that pairs two systems' answers to one question: the first of ``id``, ``question_id`` and
    ``question`` whose values both systems have (ids such as "q1-A" and "q1-B" pair nothing; the generated
    "row-N" ids never do)."""
    system = df["system"].astype(str)
    for column in ("id", "question_id", "question"):
        if column in df.columns:
            values = [set(df.loc[system == s, column].dropna().astype(str)) for s in systems]
            if values[0] & values[1]:
                return column
    return "question"


def starter_experiment(df, data_path: str | Path, out_path: str | Path) -> str:
    """The text of a starter experiment for a loaded dataset: the sections that apply to its columns are on,
    the others are commented out with the reason (``evalkit init DATA -o my.yaml`` writes it).

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"id": ["a"], "question": ["Q?"], "answer": ["A."]})
    >>> text = starter_experiment(df, "/tmp/answers.csv", "/tmp/my.yaml")
    >>> "data: answers.csv" in text and "# compare: no 'system' column" in text
    True
    """
    import os

    out_dir = Path(out_path).resolve().parent
    rel = os.path.relpath(Path(data_path).resolve(), out_dir)
    name = re.sub(r"[^A-Za-z0-9_.-]+", "-", Path(data_path).stem) or "experiment"
    has_contexts = "contexts" in df.columns
    lines = [f"# Starter experiment for {Path(data_path).name} ({len(df)} rows), written by evalkit init.",
             "# Paths are relative to this file. Run: evalkit report THIS_FILE", f"name: {name}", f"data: {rel}",
             "metrics: null               # every default metric whose input columns exist"]
    if not has_contexts:
        lines.append("# (no 'contexts' column: hallucination, grounding_risk and the verdict need retrieved passages)")
    if "ground_truth" not in df.columns:
        lines.append("# (no 'ground_truth' column: the reference metrics need an expected answer)")
    lines += ["# fact_checks: rules.yaml    # per-question checks for this dataset's ids (optional)",
              "# thresholds: profile.yaml   # a profile written by `evalkit calibrate -o` (optional)",
              "# judge: {base_url: http://localhost:8000/v1, model: my-model}   # judged metrics (optional)"]
    lines += _calibration_lines(_label_columns(df), df.columns)
    lines += _compare_lines(df)
    lines += ["seed: 0"]
    return "\n".join(lines) + "\n"

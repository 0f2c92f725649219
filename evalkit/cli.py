"""Command line: thin wrappers that parse arguments and call the package.

    evalkit metrics
    evalkit init DATA [-o my.yaml]
    evalkit score INPUT -o OUTPUT [--metrics a,b] [--config cfg.yaml] [--thresholds profile.yaml]
    evalkit summary RESULTS [--by system,question_type]
    evalkit report EXPERIMENT.yaml
    evalkit calibrate TABLE --score COL --label COL [--positive VALUE|'<=2'] [-o profile.yaml] [--force]
    evalkit estimate RESULTS --target LABEL --using SCORE[,SCORE] [--positive VALUE] [--a SYS --b SYS] [--json F]
    evalkit verdict RESULTS --thresholds profile.yaml -o OUT
    evalkit compare RESULTS --a SYS --b SYS [--pair-on id|question|COLUMN] [--binary correct [--positive Y]]

Bad input exits with status 2 and one line on stderr naming what is wrong.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import logging
import os
import sys
from pathlib import Path


# the named verdict profiles (evalkit.base.config.VERDICT_PROFILES; spelled here so --help imports nothing)
VERDICT_PROFILE_NAMES = ("seed", "evalkit")
DEFAULT_PROFILE_NAME = "evalkit"  # evalkit.base.config.DEFAULT_PROFILE (tests/test_verdict.py checks the two agree)

def _real(accepts, says: str):
    """An option's real number that ``accepts`` takes (``nan`` never does), else its name and ``must be {says}``."""
    def parse(text: str) -> float:
        try:
            v = float(text)
        except ValueError:
            v = float("nan")
        if v != v or not accepts(v):
            raise argparse.ArgumentTypeError(f"must be {says}, got {text!r}")
        return v

    return parse


# seconds: finite and above 0 (``nan`` and ``inf`` are refused by the option's name)
_seconds = _real(lambda v: 0 < v < float("inf"), "a finite number of seconds above 0")
_probability = _real(lambda v: 0 < v < 1, "a probability between 0 and 1, e.g. 0.1")
_confidence = _real(lambda v: 0.5 <= v < 1, "a level between 0.5 and 1, e.g. 0.95")


def _count(least: int):
    """An option's whole number of at least ``least``."""
    def parse(text: str) -> int:
        try:
            v = int(text)
        except ValueError:
            v = None
        if v is None or v < least:
            raise argparse.ArgumentTypeError(f"must be a whole number >= {least}, got {text!r}")
        return v

    parse.__name__ = f"count>={least}"
    return parse


def _add_formula_guard(p) -> None:
    p.add_argument("--formula-guard", action=argparse.BooleanOptionalAction, default=True,
                   help="in a CSV output, write text that starts with = + - @ TAB or CR after an apostrophe, so a "
                        "spreadsheet shows it instead of running it (OWASP CSV injection); evalkit reads it back "
                        "without the apostrophe; --no-formula-guard writes the text exactly")


def _default_text(metric) -> str:
    """Whether ``evalkit score`` without --metrics runs it: always, or when the judge / encoder it needs is there."""
    from evalkit.metrics import DEFAULT_METRICS, OPTIONAL_DEFAULTS

    if metric.name in DEFAULT_METRICS:
        return "yes"
    if metric.name in OPTIONAL_DEFAULTS:
        return "with a judge" if "judge" in metric.resources or metric.derived else "with the embed extra"
    if metric.family == "custom":  # the config defines it to be run
        return "with a judge"
    return ""


def _metrics_cmd(args) -> int:
    import dataclasses

    from evalkit.metrics import DEFAULT_METRICS, REGISTRY
    from evalkit.metrics.base import markdown_table

    shown = dict(REGISTRY)
    if getattr(args, "config", None):  # the config's custom metrics, listed like built-ins (validated first)
        from evalkit.metrics.custom import config_metrics
        from evalkit.run.runner import as_config

        shown.update({m.name: m for m in config_metrics(as_config(args.config))})
    if args.markdown:
        print(markdown_table(shown.values()))
        return 0
    if args.json:
        print(json.dumps([{"name": m.name, "family": m.family, "kind": m.kind, "better": m.better,
                           "range": list(m.range) if m.range else None, "display_scale": m.display_scale,
                           "unit": m.unit, "needs": list(m.needs), "default": m.name in DEFAULT_METRICS,
                           "formula": m.formula, "empty_policy": m.empty_policy,
                           "verdict_role": dataclasses.asdict(m.verdict_role) if m.verdict_role else None,
                           "evidence_keys": list(m.evidence_keys)} for m in shown.values()], indent=2))
        return 0
    header = ("name", "family", "kind", "value", "needs", "default", "formula")
    rows = [(m.name, m.family, m.kind, m.reads_as, ",".join(m.needs), _default_text(m), m.formula)
            for m in shown.values()]
    widths = [max(len(r[i]) for r in rows + [header]) for i in range(len(header) - 1)]
    for r in [header, *rows]:  # the formula is last and not padded: it is the long column
        print("  ".join(c.ljust(w) for c, w in zip(r, widths)) + "  " + r[-1])
    return 0


def _columns(args) -> dict[str, str]:
    from evalkit.base.data import parse_column_mapping

    return parse_column_mapping(getattr(args, "columns", None))


def _reading(args) -> dict[str, str | None]:
    """How input files are read: the CSV separator and the text encoding (None: sniffed / UTF-8 or its BOM)."""
    return {"sep": _separator(getattr(args, "sep", None)), "encoding": getattr(args, "encoding", None)}


def _separator(sep: str | None) -> str | None:
    names = {"tab": "\t", "\\t": "\t", "comma": ",", "semicolon": ";", "pipe": "|"}
    return names.get(sep, sep) if sep else None


def _input_files(spec: str) -> list[Path]:
    """The files an input names: the file itself, a folder's files, or a glob's matches."""
    import glob

    p = Path(spec)
    if p.is_dir():
        return [q for q in p.iterdir() if q.is_file()]
    if p.exists():
        return [p]
    return [Path(m) for m in glob.glob(spec)]


def _refuse_overwriting(output: str | None, *inputs: str | None, what: str = "-o/--output") -> None:
    """An output that names an input file (resolved, symlinks included) is refused before any work."""
    from evalkit.base.safeio import refuse_output_over_inputs

    files = [f for i in inputs if i for f in _input_files(i)]
    refuse_output_over_inputs(output, files, what=what)


def _metric_names(text: str | None) -> list[str] | None:
    if text is None:
        return None
    names = [m.strip() for m in text.split(",") if m.strip()]
    if not names:
        raise ValueError(f"--metrics {text!r} names no metric; give comma-separated names (evalkit metrics lists "
                         "them) or leave it out for the defaults")
    return names


def _load_config(args):
    from evalkit.base.config import EvalConfig
    from evalkit.decide.profiles import thresholds_from_profile

    cfg = EvalConfig.from_yaml(args.config) if getattr(args, "config", None) else EvalConfig()
    flags = {k: getattr(args, f"judge_{k}", None)
             for k in ("timeout", "max_retries", "concurrency", "response_format", "repeats", "seed")}
    if any(v is not None for v in flags.values()):  # flags win over the config file and the environment
        import dataclasses

        judge = {**cfg.judge, **{k: v for k, v in flags.items() if v is not None}}
        cfg = dataclasses.replace(cfg, judge=judge).validate(getattr(args, "config", None) or "command line")
    if getattr(args, "thresholds", None):
        import dataclasses

        from evalkit.base.config import ConfigError
        from evalkit.metrics.custom import activate

        try:  # the profile may name the config's custom metrics: registered before it is read
            activate(cfg)
        except ConfigError as e:
            raise ConfigError(f"{getattr(args, 'config', None) or 'command line'}: {e}") from None
        cfg = dataclasses.replace(cfg, thresholds=thresholds_from_profile(args.thresholds, cfg.thresholds))
    if getattr(args, "profile", None):  # the flag wins over the config file's ``profile:``
        import dataclasses

        cfg = dataclasses.replace(cfg, thresholds=dataclasses.replace(cfg.thresholds, named=args.profile))
    return cfg


def _check_output_path(path: str) -> None:
    """An output extension :func:`evalkit.save` cannot write fails here, before anything is scored."""
    from evalkit.base.data import FORMATS, DataError
    from evalkit.base.safeio import check_folder_writable, check_name_fits

    suffix = Path(path).suffix
    if suffix.lower() not in FORMATS:
        raise DataError(f"{path}: unsupported output extension {suffix!r}; use one of {sorted(FORMATS)}")
    check_folder_writable(path)
    check_name_fits(path)  # with the temporary suffix: refused now, not after the scoring


def _failed_everywhere(out) -> str | None:
    """One line naming each metric that errored on every row (with its first error), or None."""
    from evalkit.decide.aggregate import errored
    from evalkit.base.data import error_of

    if not len(out):
        return None
    failed = [m for m in out.attrs["evalkit"]["metrics"] if errored(out, m).all()]
    if not failed:
        return None
    first = {m: error_of(out["error"].iloc[0], m) for m in failed}
    return f"{len(failed)} metric(s) failed on all {len(out)} rows: " + "; ".join(str(first[m]) for m in failed)


def _score_cmd(args) -> int:
    from evalkit.decide.aggregate import summary, summary_reads, wide
    from evalkit.decide.pipeline import evaluate_to_file

    if args.dry_run:
        return _dry_run_cmd(args)
    if not args.output:
        raise ValueError("score: -o/--output is required (only --dry-run writes nothing)")
    _check_output_path(args.output)
    _refuse_overwriting(args.output, args.input, args.config, args.thresholds)
    metrics = _metric_names(args.metrics)
    cfg = _load_config(args)
    parts = f"{args.output}.parts"  # finished chunks and their manifest: a re-run resumes from here
    data, columns = _score_input(args)
    # streamed from the parts into the output under its lock; what is printed below is computed from the columns
    # the summary reads (kept for every row), so memory stays flat however large the output is
    # (a run that fails before finishing a chunk leaves no parts; a run refused by another's lock touches nothing)
    written = evaluate_to_file(data, args.output, metrics, cfg, parts_dir=parts, keep=summary_reads,
                               progress=not args.quiet and None, engine=args.engine, scheduler=args.scheduler,
                               chunk_size=args.chunk_size, resume=args.resume, columns=columns,
                               strict_columns=args.strict, formula_guard=args.formula_guard)
    path, out = written.path, written.kept
    meta = out.attrs["evalkit"]
    n_err = int(out["error"].notna().sum())
    print(f"scored {len(out)} rows with {len(meta['metrics'])} metrics -> {path} ({n_err} rows with errors)")
    if "verdict" in out.columns:
        print("verdicts: " + ", ".join(f"{k} {v}" for k, v in out["verdict"].value_counts().sort_index().items()))
    if meta.get("judge"):
        from evalkit.judge.costs import cost_text

        for metric, u in sorted(meta["judge"]["usage"].items()):
            print(f"judge {metric}: {int(u.get('http_calls', 0))} HTTP calls, {int(u.get('cache_hits', 0))} cached, "
                  f"{int(u.get('retries', 0))} retries, {int(u.get('repairs', 0))} replies repaired, "
                  f"{int(u.get('failures', 0))} failures, "
                  f"{int(u.get('prompt_tokens', 0))}+{int(u.get('completion_tokens', 0))} tokens"
                  + (f", valid JSON {u['valid_json_rate']:.0%}" if u.get("valid_json_rate") is not None else "")
                  + (f", cost {cost_text(u['cost'])}" if u.get("cost") is not None else ""))
            if u.get("asked_per_passage"):
                print(f"judge {metric}: {int(u['asked_per_passage'])} rows asked one passage at a time (the judge "
                      "miscounted the passages, also after a repair)")
        total = meta["judge"].get("total") or {}
        if total:
            print(f"judge total: {int(total.get('http_calls', 0))} HTTP calls, "
                  f"{int(total.get('cache_hits', 0))} cached, "
                  f"{int(total.get('prompt_tokens', 0))}+{int(total.get('completion_tokens', 0))} tokens, cost "
                  f"{cost_text(total.get('cost'))}")
    if not args.quiet:  # metrics undetermined on every row have no mean to show (summary counts them)
        print(wide(summary(out, by="system"), by="system").dropna(axis=1, how="all").round(3).to_string())
    print(meta["signature_string"])
    failed = _failed_everywhere(out)
    if failed:  # the results are written for inspection, but the run did not do its job
        print(f"evalkit: error: {failed}", file=sys.stderr)
        return 1
    return 0


def _dry_run_cmd(args) -> int:
    """``evalkit score --dry-run``: the judge calls, cache hits, tokens and cost the run would make; nothing sent."""
    from evalkit.decide.pipeline import estimate

    data, columns = _score_input(args)
    if columns is not None:  # a file read whole here: a dry run renders every row's prompts anyway
        from evalkit.base.data import load

        data = load(data, columns=columns)
    print(estimate(data, _metric_names(args.metrics), _load_config(args), strict_columns=args.strict))
    return 0


def _score_input(args):
    """A single CSV file is read and validated whole here (separator, encoding, field counts: it is read whole
    in any case); Parquet/JSONL files, folders and globs are streamed chunk by chunk by the run."""
    from evalkit.base.data import FORMATS, load, require_rows

    p = Path(args.input)
    reading = _reading(args)
    if p.is_file() and (FORMATS.get(p.suffix.lower()) == "csv" or any(reading.values())):
        # said before any work (and before a parts folder is made for it)
        return require_rows(load(p, columns=_columns(args), **reading), p), None
    return args.input, _columns(args)


def _read_results(path: str, columns: dict[str, str] | None = None, args=None):
    """Scored results or any table of scores and labels: no answer columns required."""
    from evalkit.base.data import read_table
    from evalkit.metrics.custom import activate_from

    df = read_table(path, columns=columns, **(_reading(args) if args is not None else {}))
    activate_from(df)  # the custom metrics the run defined (kept in a Parquet file's metadata) read like any
    return df


def _summary_cmd(args) -> int:
    from evalkit.decide.aggregate import summary

    from evalkit.decide.aggregate import scored_metrics

    df = _read_results(args.results, _columns(args), args)
    if not scored_metrics(df):
        raise ValueError(f"{args.results}: no metric columns to summarise (it has {list(df.columns)[:8]}); "
                         f"score it first: evalkit score {args.results} -o results.parquet")
    if args.by is None:  # results without a system column (one system) summarise as a whole
        args.by = "system" if "system" in df.columns else ""
    by = [b for b in args.by.split(",") if b] if args.by else None
    missing = [b for b in by or [] if b not in df.columns]
    if missing:
        raise ValueError(f"{args.results}: --by names absent column(s) {missing}")
    table = summary(df, by=by, n_resamples=args.resamples, seed=args.seed)
    if args.format == "tidy":
        print(table.round(4).to_string(index=False))
        _print_judge_variance(df, args)
        return 0
    from evalkit.decide.aggregate import readable

    if by and len(by) > 1:
        raise ValueError("--format text|markdown|latex shows one grouping column; use --format tidy for several")
    if args.format in ("latex", "markdown"):  # one writer, one set of rules for both (evalkit.publish.tables)
        from evalkit.publish.tables import render, summary_table

        print(render(summary_table(table, by=by[0] if by else None, n_resamples=args.resamples), args.format))
    else:
        # grouped tables are indexed by metric; an ungrouped one names the metric in a column
        print(readable(table, by=by[0] if by else None).to_string(index=bool(by)))
    _print_judge_variance(df, args)
    return 0


def _print_judge_variance(df, args) -> None:
    """Metrics scored with ``judge.repeats``: their intervals over rows and repeats, and the judge's agreement."""
    from evalkit.decide.judge_variance import judge_variance, repeated_metrics

    if not repeated_metrics(df):
        return
    jv = judge_variance(df, n_resamples=args.resamples, seed=args.seed)
    title = "judge variance (two-level bootstrap over rows and repeats; judge_share: variance between repeats)"
    if args.format in ("latex", "markdown"):
        from evalkit.publish.tables import frame_table, render

        print("\n" + render(frame_table(jv, caption=title, label="judge-variance"), args.format))
    else:
        print(f"\n{title}:")
        print(jv.set_index("metric").round(4).to_string())


def _report_cmd(args) -> int:
    from evalkit.publish.report import run_report

    overrides = {"n_resamples": args.resamples} if args.resamples else None
    path = run_report(args.experiment, out_root=args.out, overrides=overrides, overwrite=args.overwrite)
    print(f"report: {path}")
    sig = json.loads((path.parent / "signature.json").read_text(encoding="utf-8")).get("signature")
    if sig:  # publish it with the numbers: it names everything that produced them
        print(f"signature: {sig}")
    return 0


def _init_cmd(args) -> int:
    from evalkit.base.data import load
    from evalkit.publish.experiment import starter_experiment

    from evalkit.base.safeio import write_text

    out = Path(args.output or (Path(args.data).stem + ".yaml"))
    _refuse_overwriting(str(out), args.data)
    if out.exists() and not args.force:
        raise ValueError(f"{out}: already exists (use --force to overwrite)")
    cols = _columns(args)
    text = starter_experiment(load(args.data, columns=cols, **_reading(args)), args.data, out)
    if cols:
        text = text.replace("metrics: null", f"columns: {json.dumps(cols)}\nmetrics: null", 1)
    write_text(out, text)
    print(f"wrote {out}; next: evalkit report {out}")
    return 0


def _calibrate_cmd(args) -> int:
    from evalkit.decide.calibrate import calibrate_frame, profile_entry, write_profile
    from evalkit.base.safeio import write_text

    _refuse_overwriting(args.output, args.results, args.labels)
    _refuse_overwriting(args.json, args.results, args.output, args.labels, what="--json")
    if args.guarantee and args.criterion:
        raise ValueError("--criterion and --guarantee each choose the threshold: give one of them")
    args.criterion = args.criterion or "youden"
    df = _read_results(args.results, _columns(args), args)
    if args.labels:
        from evalkit.decide.calibrate.active import join_labels, read_labels, relabelled_note, selection_note

        labels = read_labels(args.labels)
        for note in (selection_note(labels), relabelled_note(labels)):
            if note is not None:
                print(f"evalkit: note: {note}", file=sys.stderr)
        df = _named(args.labels, join_labels)(df, labels, args.label, source=args.labels)
    # a bad label value came from the labels file when there is one: the message names that file
    named = args.labels if args.labels else args.results
    tc = _named_label(named, args.label, _named(args.results, calibrate_frame))(df, args.score, args.label, positive=args.positive, direction=args.direction,
                         criterion=args.criterion, split=args.split, by=[c for c in (args.by or "").split(",") if c],
                         groups=args.groups, n_resamples=args.resamples, seed=args.seed,
                         guarantee=args.guarantee, delta=args.delta, min_per_class=args.min_per_class)
    print("\n".join(tc.summary_lines()))  # a warning about the positive class comes first
    _refuse_the_better_side(args, tc.score)
    out = tc.to_dict()
    useless = tc.useless_rule()
    if args.output and useless and not args.force:  # the verdict would FAIL every row, or none
        raise ValueError(f"not writing {args.output}: {useless}; check --positive and --direction "
                         f"(flagged = positive, here {tc.flagged_class}), or pass --force to write it anyway")
    if args.output:
        write_profile(args.output, {tc.score: profile_entry(tc.result, tc.score, args.label, args.positive)},
                      dataset_sha256=df.attrs.get("sha256"), source=args.results)
        print(f"profile: {args.output} (apply it: evalkit verdict RESULTS --thresholds {args.output} -o OUT)")
    if args.json:
        write_text(args.json, json.dumps(out, indent=2) + "\n")
        print(f"full result: {args.json}")
    return 0


def _refuse_the_better_side(args, score: str) -> None:
    """A profile that flags the better side of a registered metric (a high support, a low hallucination) would FAIL
    the good answers: refused unless --force."""
    from evalkit.decide.calibrate import flagged_direction

    side = flagged_direction(score)
    if args.output and args.direction and side and args.direction != side and not args.force:
        from evalkit.metrics import REGISTRY

        raise ValueError(f"not writing {args.output}: --direction {args.direction} flags the better side of {score} "
                         f"({REGISTRY[score].better} is better; its bad answers are flagged with --direction "
                         f"{side}, the default); pass --force to write it anyway")


def _named_label(path: str, label: str, func):
    """``func`` whose errors about the ``label`` column name ``path`` (where the labels came from), in place of
    the file name the inner call put first."""
    def call(*a, **kw):
        try:
            return func(*a, **kw)
        except ValueError as e:
            msg = str(e)
            if f"column {label!r}" in msg and not msg.startswith(f"{path}: "):
                raise type(e)(f"{path}: {msg[msg.index('column ' + repr(label)):]}") from None
            raise
    return call


def _named(path: str, func):
    """``func`` whose ValueError names the file it was reading (the statistics do not know it)."""
    def call(*a, **kw):
        try:
            return func(*a, **kw)
        except ValueError as e:
            if str(e).startswith(str(path)):
                raise
            raise type(e)(f"{path}: {e}") from None
    return call


def _verdict_cmd(args) -> int:
    import pandas as pd

    from evalkit.base.config import VerdictThresholds
    from evalkit.base.data import save
    from evalkit.decide.profiles import thresholds_from_profile
    from evalkit.decide.verdict import apply_verdicts, profile_held_by

    _check_output_path(args.output)
    _refuse_overwriting(args.output, args.results, args.thresholds)
    df = _read_results(args.results, _columns(args), args)
    base = VerdictThresholds(named=args.profile) if args.profile else profile_held_by(df.columns)
    out, notes = apply_verdicts(df, thresholds_from_profile(args.thresholds, base))
    for n in notes:
        print(f"evalkit: warning: {n}", file=sys.stderr)
    save(out, args.output, formula_guard=args.formula_guard)
    counts = pd.Series(out["verdict"]).value_counts().sort_index()
    print(f"{len(out)} rows -> {args.output}; verdicts: " + ", ".join(f"{k} {v}" for k, v in counts.items()))
    return 0


def _compare_cmd(args) -> int:
    from evalkit.decide.aggregate import scored_metrics
    from evalkit.decide.compare import compare_systems

    if args.output:
        _check_output_path(args.output)
    _refuse_overwriting(args.output, args.results)
    df = _read_results(args.results, _columns(args), args)
    # by default every scored metric with values (one without any, e.g. fact_checks without rules, has no pairs)
    metrics = _metric_names(args.metrics) or [m for m in scored_metrics(df)
                                              if df[m].dtype != object and df[m].notna().any()]
    table = compare_systems(df, metrics, args.a, args.b, by=args.by, n_resamples=args.resamples, seed=args.seed,
                            binary=[c for c in (args.binary or "").split(",") if c], positive=args.positive,
                            pair_on=args.pair_on, min_pairs=args.min_pairs)
    if args.output:
        from evalkit.base.data import save

        save(table, args.output)
    shown = table.drop(columns=["system_a", "system_b"])
    if args.format in ("latex", "markdown"):  # a short group's footnote says its p-values are not findings
        from evalkit.publish.tables import compare_table, render

        print(render(compare_table(table, min_pairs=args.min_pairs, caption=(
            f"Paired comparison of {args.b} (B) with {args.a} (A), paired on {table.attrs['pair_on']}: difference "
            f"B minus A with its 95% paired bootstrap interval ({args.resamples} resamples, seed "
            f"{args.seed}); Holm's adjustment across the metrics")), args.format))
        return 0
    else:
        print(f"{args.b} minus {args.a}, paired on {table.attrs['pair_on']!r}")
        print(shown.round(4).to_string(index=False))
    small = int(table["small"].sum())
    if small:
        print(f"note: {small} row(s) have fewer than {args.min_pairs} pairs: their p-values are not findings")
    return 0


def _paper_cmd(args) -> int:
    from evalkit.publish.paper import write_paper

    b = write_paper(args.results, args.output, n_resamples=args.resamples, seed=args.seed)
    print(f"paper: {b.folder}/main.tex (tables: {', '.join(b.tables)}; figures: {', '.join(b.figures) or 'none'}; "
          f"references: {', '.join(b.references)})")
    print(f"build it: cd {b.folder} && pdflatex main && bibtex main && pdflatex main && pdflatex main")
    return 0


class _Help(argparse.ArgumentDefaultsHelpFormatter, argparse.RawDescriptionHelpFormatter):
    """Show each option's default once and keep the examples' line breaks: an option whose help already says its
    default (or the environment variable it reads) and an option with no default (None, or a flag's False) get no
    second "(default: ...)"."""

    def _get_help_string(self, action) -> str:
        text = action.help or ""
        said = "default" in text or "EVALKIT_" in text
        nothing = action.default is None or action.default is False or action.default in ("", argparse.SUPPRESS)
        if said or nothing or not action.option_strings:
            return text
        return super()._get_help_string(action)


COLUMNS_HELP = "rename columns on read: NAME=SOURCE pairs, e.g. answer=model_output,contexts=docs"


def _add_reading(p) -> None:
    p.add_argument("--sep", help="CSV separator: , ; | tab (default: sniffed from the header line)")
    p.add_argument("--encoding", help="text encoding of CSV/JSONL input, e.g. latin-1, cp1252 (default: UTF-8; "
                                      "a UTF-8 or UTF-16 byte-order mark is honoured)")


def _sub(sub, name: str, help: str, examples: str, func):
    p = sub.add_parser(name, help=help, description=help, epilog="examples:\n" + examples, formatter_class=_Help)
    p.set_defaults(func=func)
    return p


def _add_score(sub) -> None:
    s = _sub(sub, "score", "score a dataset and write per-row results (in checkpointed chunks: re-run to resume)",
             "  evalkit score data.jsonl -o results.parquet\n"
             "  evalkit score data.csv -o results.csv --metrics relevance,hallucination --columns answer=output\n"
             "  evalkit score 'logs/*.parquet' -o results.parquet --chunk-size 5000\n"
             "  evalkit score data.jsonl -o results.parquet --engine dask --scheduler local:2\n"
             "  evalkit score data.jsonl -o results.parquet --engine dask --scheduler tcp://10.0.0.5:8786\n"
             "  evalkit score data.jsonl --metrics faithfulness,context_precision --config cfg.yaml --dry-run",
             _score_cmd)
    s.add_argument("input", help="CSV, JSONL or Parquet dataset; or a directory or glob of Parquet/JSONL files")
    s.add_argument("-o", "--output", help="output path (.parquet, .csv or .jsonl); required unless --dry-run")
    s.add_argument("--dry-run", action="store_true",
                   help="call no judge and write nothing: render every judge prompt for the data and print the "
                        "estimated calls, cache hits, prompt tokens and cost (judge.prices)")
    s.add_argument("--metrics", help="comma-separated metric names (default: every default metric that applies)")
    s.add_argument("--config", help="scoring config YAML (see evalkit.base.config.EvalConfig)")
    s.add_argument("--thresholds", help="calibrated threshold profile (YAML) for the verdict")
    s.add_argument("--profile", choices=VERDICT_PROFILE_NAMES,
                   help="the named verdict profile: 'seed' (the seed documents' word-overlap triad, exact) or "
                        "'evalkit' (unsupported facts, answers the question, coverage); default: the config's "
                        "profile: key, else evalkit")
    s.add_argument("--columns", help=COLUMNS_HELP)
    _add_formula_guard(s)
    _add_reading(s)
    s.add_argument("--strict", action="store_true",
                   help="refuse input columns named like outputs (hallucination, verdict, error, ...) instead of "
                        "keeping them as input_<name>")
    s.add_argument("--judge-timeout", type=_seconds, help="seconds per judge call (also EVALKIT_JUDGE_TIMEOUT; default 60)")
    s.add_argument("--judge-max-retries", type=_count(0), help="retries of a failed judge call (EVALKIT_JUDGE_MAX_RETRIES; 4)")
    s.add_argument("--judge-concurrency", type=_count(1), help="judge calls in flight (EVALKIT_JUDGE_CONCURRENCY; 4)")
    s.add_argument("--judge-response-format", choices=["auto", "json_schema", "json_object_schema", "json_object", "none"],
                   help="how the judge is asked for JSON (EVALKIT_JUDGE_RESPONSE_FORMAT; auto)")
    s.add_argument("--judge-repeats", type=_count(1), help="ask each judge question N times (EVALKIT_JUDGE_REPEATS; 1)")
    s.add_argument("--judge-seed", type=int, help="seed sent to the judge; repeat r sends seed + r (EVALKIT_JUDGE_SEED)")
    s.add_argument("-q", "--quiet", action="store_true", help="no progress bar or summary table")
    s.add_argument("--chunk-size", type=_count(1), default=2000,
                   help="rows per chunk; each finished chunk is saved in OUTPUT.parts/ until the run completes")
    s.add_argument("--resume", action=argparse.BooleanOptionalAction, default=True,
                   help="continue the run found in OUTPUT.parts/ (same input and settings); --no-resume starts over")
    s.add_argument("--engine", default="local", choices=["local", "dask"], help="where chunks are scored")
    s.add_argument("--scheduler", help="with --engine dask: tcp://HOST:PORT of a dask scheduler, or local:N for N "
                                       "worker processes on this machine")


def _add_report_and_init(sub) -> None:
    r = _sub(sub, "report", "score an experiment's data once and run its notebooks into OUT/NAME/",
             "  evalkit report experiments/default.yaml\n  evalkit report my.yaml --resamples 100   # a quick draft",
             _report_cmd)
    r.add_argument("experiment", help="experiment YAML (paths inside it are relative to the file)")
    r.add_argument("--out", default="reports", help="parent folder of the report")
    r.add_argument("--resamples", type=int, help="override bootstrap resamples (quick runs)")
    r.add_argument("--overwrite", action="store_true",
                   help="replace a report folder made by another experiment file with the same name:")
    i = _sub(sub, "init", "write a starter experiment for a data file (sections that apply are on)",
             "  evalkit init my_answers.csv -o my.yaml\n  evalkit report my.yaml", _init_cmd)
    i.add_argument("data", help="CSV, JSONL or Parquet dataset")
    i.add_argument("-o", "--output", help="experiment file to write (default: DATA's name with .yaml)")
    i.add_argument("--columns", help=COLUMNS_HELP)
    _add_reading(i)
    i.add_argument("--force", action="store_true", help="overwrite an existing file")


def _add_calibrate(sub) -> None:
    c = _sub(sub, "calibrate", "choose a threshold for a score against a binary human label",
             "  evalkit calibrate results.parquet --score hallucination --label hallucinated --split seeded -o p.yaml\n"
             "  evalkit calibrate labels.csv --score s --label judged --positive yes --json cal.json\n"
             "  evalkit calibrate results.csv --score hallucination --label likert --positive '<=2'\n"
             "  evalkit calibrate results.parquet --score hallucination --label human --labels labels.csv --positive yes",
             _calibrate_cmd)
    c.add_argument("results", help="any table with a score column and a label column (.parquet, .csv, .jsonl)")
    c.add_argument("--score", required=True, help="score column, e.g. hallucination")
    c.add_argument("--label", required=True, help="binary label column: booleans, 0/1, or strings with --positive; "
                                                  "an ordinal scale (1-5) with a comparison in --positive")
    c.add_argument("--positive", help="the label class that is flagged (the bad answer): a value, e.g. N or yes, or "
                                      "a comparison for an ordinal label, e.g. '<=2', '<3', '>=4', '==1'")
    c.add_argument("--labels", help="a labels CSV (id,label,labeller,timestamp, as evalkit.labeler writes) joined on id "
                                    "(and system): its labels make the new column --label; rows it does not name are "
                                    "unlabelled and left out")
    c.add_argument("--direction", choices=["higher", "lower"],
                   help="the side of the score that flags the positive label (higher: a high score flags); default: "
                        "the metric's own from the registry (support is better high, so low flags), else higher")
    c.add_argument("--criterion", help="youden (default) | f1 | precision>=X | recall>=X | cost:fp=A,fn=B")
    c.add_argument("--guarantee", help="instead of --criterion, a threshold with a finite-sample guarantee (Learn-then-"
                                       "Test risk control, MAPIE): precision>=X | recall>=X | fpr<=X | false_pass<=X "
                                       "(bad answers among those let pass); exit 2 when no threshold meets it")
    c.add_argument("--delta", type=_probability, default=0.1,
                   help="with --guarantee: the chance the guarantee fails (default 0.1: it holds with probability 0.9)")
    c.add_argument("--split", help="'seeded' or a column with calibration/test values (honest protocol); "
                                   "default: same rows (optimistic, and said so)")
    c.add_argument("--by", help="comma-separated subgroup columns, e.g. question_type,system")
    c.add_argument("--groups", help="cluster column for the bootstrap and split, e.g. a document id")
    c.add_argument("--resamples", type=int, default=1000, help="bootstrap resamples")
    c.add_argument("--seed", type=int, default=0, help="seed of every resample and split")
    c.add_argument("--min-per-class", type=int, default=5, help="fewer labelled rows of either class are refused: "
                                                                 "an AUC or a threshold from 3 labels is not a statistic")
    c.add_argument("--columns", help=COLUMNS_HELP)
    _add_reading(c)
    c.add_argument("-o", "--output", help="write a threshold profile YAML (refused when its threshold flags every "
                                          "row or none: see --force)")
    c.add_argument("--force", action="store_true", help="write the profile even if its threshold flags every row "
                                                        "or none of those it was chosen on")
    c.add_argument("--json", help="write the full result as JSON to this file")


def _add_estimate(sub) -> None:
    e = _sub(sub, "estimate", "the rate of a human label per system, from a few labels and every row's scores (PPI++)",
             "  evalkit estimate results.parquet --target hallucinated --positive Y --using hallucination\n"
             "  evalkit estimate results.csv --target correct --using support,grounding_risk --a rag-a --b rag-b\n"
             "  evalkit estimate results.parquet --target grade --using hallucination --json estimate.json",
             _estimate_cmd)
    e.add_argument("results", help="a results table whose --target column is labelled on some rows (a random "
                                   "sample) and empty on the others")
    e.add_argument("--target", required=True, help="the human label column: binary (with --positive), ordinal or "
                                                   "numeric; empty cells are unlabelled rows")
    e.add_argument("--using", required=True, help="comma-separated score columns that predict the label (a model "
                                                  "of the label from them is fitted out of fold)")
    e.add_argument("--positive", help="the label value whose rate is estimated, e.g. Y, or a comparison for an "
                                      "ordinal label, e.g. '<=2'")
    e.add_argument("--labels", help="a labels CSV (as evalkit.labeler writes) joined on id (and system): its labels "
                                    "become the --target column")
    e.add_argument("--by", default="system", help="the group column (default: system; '' for all rows as one)")
    e.add_argument("--a", help="with --b: the paired difference a - b as well")
    e.add_argument("--b", help="with --a: the paired difference a - b as well")
    e.add_argument("--pair-on", default="id", help="the column pairing a's rows with b's (default: id)")
    e.add_argument("--confidence", type=_confidence, default=0.95, help="interval level (default 0.95)")
    e.add_argument("--seed", type=int, default=0, help="seed of the out-of-fold split")
    e.add_argument("--columns", help=COLUMNS_HELP)
    _add_reading(e)
    e.add_argument("--json", help="write every number (ppi, labels_only, metric_only: estimate, low, high, n)")
    e.add_argument("--plan", type=float, metavar="WIDTH",
                   help="instead of estimating: how many random labels each system needs for a PPI interval WIDTH "
                        "wide (e.g. 0.1 for +-5 points), the labels so far taken as a pilot")


def _estimate_cmd(args) -> int:
    from evalkit.decide.calibrate.estimate import METHOD, estimate, paired_difference
    from evalkit.base.safeio import write_text

    _refuse_overwriting(args.json, args.results, args.labels, what="--json")
    if bool(args.a) != bool(args.b):
        raise ValueError("--a and --b go together: name both systems of the paired difference")
    if args.a and args.a == args.b:
        raise ValueError(f"--a and --b name the same system {args.a!r}")
    df = _read_results(args.results, _columns(args), args)
    if args.labels:
        from evalkit.decide.calibrate.estimate import with_labels

        df = _named(args.labels, with_labels)(df, args.labels, args.target)
    using = [c.strip() for c in args.using.split(",") if c.strip()]
    options = {"positive": args.positive, "alpha": 1 - args.confidence, "seed": args.seed}
    named = args.labels if args.labels else args.results
    if args.plan is not None:
        if args.a:
            raise ValueError("--plan plans each system's labels; it does not plan the paired difference (--a/--b): "
                             "drop --a/--b")
        return _plan_cmd(args, df, using, options, named)
    found = _named(named, estimate)(df, args.target, using, by=args.by or None, **options)
    if args.a:
        found.append(_named(named, paired_difference)(df, args.target, using, args.a, args.b, by=args.by or "system",
                                                       pair_on=args.pair_on, **options))
    print(_estimate_table(found, args, using, df[args.target]))
    print(f"method: {METHOD}; labels_only: the labelled rows alone; metric_only: the fitted prediction's mean on "
          "every row, its interval as if the metric were the truth (compare, do not report)")
    if args.json:
        write_text(args.json, json.dumps({"target": args.target, "positive": args.positive, "using": using,
                                          "confidence": args.confidence, "method": METHOD,
                                          "estimates": [e.to_dict() for e in found]}, indent=2) + "\n")
        print(f"full result: {args.json}")
    return 0


def _plan_cmd(args, df, using, options, named) -> int:
    from evalkit.decide.calibrate.estimate import plan
    from evalkit.base.safeio import write_text

    plans = _named(named, plan)(df, args.target, using, args.plan, by=args.by or None, **options)
    print(f"labels needed for a {args.confidence:.0%} interval {args.plan:g} wide (the labels so far as a random pilot; "
          "power analysis of ppi-python, Broska et al. 2024)")
    print(f"{'group':<16}{'pilot':>7}{'rows':>7}{'PPI corr':>10}{'width now':>11}{'with PPI':>13}{'labels only':>13}")
    for p in plans:
        shown = [str(v) if v is not None else "unreachable" for v in (p.labels_ppi, p.labels_only)]
        print(f"{p.group:<16}{p.pilot:>7}{p.rows:>7}{p.ppi_corr:>10.2f}{p.width_now:>11.3f}{shown[0]:>13}"
              f"{shown[1]:>13}")
    if any(p.labels_ppi is None or p.labels_only is None for p in plans):
        print("unreachable: even every row of the group labelled gives a wider interval (its rows are a sample of "
              "the system's answers; score more rows, or ask for a wider interval)")
    print("a pilot of a few dozen labels plans roughly: its correlation, its spread and the width now are "
          "estimates too (the plan uses PPI++'s variance, 1 - corr^2 N/(n+N) of the labels' own)")
    if args.json:
        write_text(args.json, json.dumps({"target": args.target, "width": args.plan, "confidence": args.confidence,
                                          "plans": [p.to_dict() for p in plans]}, indent=2) + "\n")
        print(f"full result: {args.json}")
    return 0


def _wilson_note(e) -> str:
    """For a rate whose labels all agree, the Wilson interval of the labels alone (statsmodels), which does not
    collapse: what the labels can honestly say."""
    from statsmodels.stats.proportion import proportion_confint

    rate = e.labels_only.estimate
    if rate not in (0.0, 1.0) or "-" in e.group:
        return ""
    low, high = proportion_confint(round(rate * e.labelled), e.labelled, method="wilson")
    return f"the labels' Wilson 95% interval is [{low:.3f}, {high:.3f}]; "


def _estimate_table(found, args, using, labels) -> str:
    from evalkit.decide.calibrate.estimate import RANDOM, label_values

    what = label_values(list(labels), args.target, args.positive)[1]
    g = max([16, *(len(e.group) + 2 for e in found)])  # a paired difference's name is longer than a system's
    lines = [f"estimate: {what} ({args.confidence:.0%} intervals; scores used: {', '.join(using)})",
             f"{'group':<{g}}{'method':<13}{'estimate':>9}{'low':>9}{'high':>9}{'width':>8}  labelled/rows"]
    for e in found:
        for name in ("ppi", "labels_only", "metric_only"):
            iv = getattr(e, name)
            lines.append(f"{e.group:<{g}}{name:<13}{iv.estimate:>9.3f}{iv.low:>9.3f}{iv.high:>9.3f}"
                         f"{iv.high - iv.low:>8.3f}  {e.labelled}/{e.rows}")
        if e.design != RANDOM:
            lines.append(f"{'':<{g}}labels: {e.design}")
        width = e.labels_only.high - e.labels_only.low
        if width > 0:
            lines.append(f"{'':<{g}}PPI's interval is {(e.ppi.high - e.ppi.low) / width:.0%} of the labels-only width")
        else:  # a CLT interval of identical labels is a point: it says nothing
            lines.append(f"{'':<{g}}every labelled row has the same label: the normal intervals collapse to a point "
                         f"and say nothing; {_wilson_note(e)}label more rows")
    return "\n".join(lines)


def _add_verdict_and_compare(sub) -> None:
    v = _sub(sub, "verdict", "re-apply the verdict with a threshold profile, without re-scoring",
             "  evalkit verdict results.parquet --thresholds profile.yaml -o results_v2.parquet", _verdict_cmd)
    v.add_argument("results", help="scored results with hallucination, relevance and completeness")
    v.add_argument("--thresholds", required=True, help="threshold profile YAML (evalkit calibrate -o)")
    v.add_argument("--profile", choices=VERDICT_PROFILE_NAMES,
                   help="the named verdict profile the calibrated rules extend (default: the one whose metrics the "
                        f"results hold, {DEFAULT_PROFILE_NAME} first, then seed)")
    v.add_argument("-o", "--output", required=True, help="output path (.parquet, .csv or .jsonl)")
    v.add_argument("--columns", help=COLUMNS_HELP)
    _add_formula_guard(v)
    _add_reading(v)
    k = _sub(sub, "compare", "paired comparison of two systems",
             "  evalkit compare results.parquet --a rag-a --b rag-b --binary correct\n"
             "  evalkit compare results.parquet --a base --b new --pair-on question --format latex\n"
             "  evalkit compare results.csv --a rag-a --b rag-b --binary faithful --positive Y", _compare_cmd)
    k.add_argument("results", help="scored results with a 'system' column")
    k.add_argument("--a", required=True, help="baseline system")
    k.add_argument("--b", required=True, help="system compared with it (differences are b - a)")
    k.add_argument("--pair-on", help="column that pairs answers: id, question or any column "
                                     "(default: id when the data has ids, else the question text)")
    k.add_argument("--metrics", help="comma-separated (default: every scored metric)")
    k.add_argument("--binary", default="", help="paired binary columns for McNemar, e.g. correct")
    k.add_argument("--positive", help="with --binary: the class counted as True in those columns, a value (Y, pass) "
                                      "or a comparison for an ordinal column ('>=4'); default: booleans or 0/1")
    k.add_argument("--by", help="group column, e.g. question_type")
    k.add_argument("--min-pairs", type=int, default=10, help="groups with fewer pairs are flagged, not findings")
    k.add_argument("--resamples", type=int, default=2000, help="bootstrap resamples")
    k.add_argument("--seed", type=int, default=0, help="seed of the bootstrap")
    k.add_argument("--format", default="text", choices=["text", "markdown", "latex"], help="table format")
    k.add_argument("--columns", help=COLUMNS_HELP)
    _add_reading(k)
    k.add_argument("-o", "--output", help="write the table (.csv, .parquet, .jsonl)")


def _add_paper(sub) -> None:
    pp = _sub(sub, "paper", "write a paper's parts from a run: LaTeX tables, PDF/SVG figures, methods text, "
                            "references.bib and a main.tex that includes them",
              "  evalkit paper reports/default -o paper/\n  evalkit paper results.parquet -o paper/ --resamples 500",
              _paper_cmd)
    pp.add_argument("results", help="a report folder (reports/NAME) or a results file (evalkit score -o)")
    pp.add_argument("-o", "--output", default="paper", help="folder to write (created; evalkit's own folders only)")
    pp.add_argument("--resamples", type=int, help="a results file only: bootstrap resamples of the intervals "
                    "(default: the report's, 1000 for means and 2000 for paired differences); a report folder's "
                    "numbers are printed as the report computed them")
    pp.add_argument("--seed", type=int, help="a results file only: seed of the bootstrap (default: the run's seed)")


def _add_check(sub) -> None:
    c = _sub(sub, "check", "CI gate: exit 1 with a table of the failing rules when a system's mean falls on the "
             "wrong side of a threshold (or its share of FAIL verdicts is too high); exit 0 when all pass, 2 on bad "
             "input",
             "  evalkit check results.parquet --thresholds profile.yaml\n"
             "  evalkit check results.parquet --thresholds profile.yaml --max-fail-share 0.1",
             _check_cmd)
    c.add_argument("results", help="scored results (.parquet, .csv, .jsonl)")
    c.add_argument("--thresholds", help="threshold profile (YAML, as evalkit calibrate writes): each rule is applied "
                                        "to each system's mean")
    c.add_argument("--max-fail-share", type=float,
                   help="also fail a system whose share of FAIL verdicts (0..1) is above this")
    c.add_argument("--by", default="system", help="column naming the systems ('' : all rows as one)")
    c.add_argument("--resamples", type=int, default=1000, help="bootstrap resamples of each mean's interval")
    c.add_argument("--seed", type=int, default=0, help="seed of the bootstrap")
    c.add_argument("--columns", help=COLUMNS_HELP)
    _add_reading(c)


def _check_cmd(args) -> int:
    from evalkit.decide.gate import check
    from evalkit.decide.profiles import thresholds_from_profile
    from evalkit.decide.verdict import apply_verdicts, profile_held_by, profile_metrics

    if not args.thresholds and args.max_fail_share is None:
        raise ValueError("check: give --thresholds PROFILE, --max-fail-share SHARE, or both")
    df = _read_results(args.results, _columns(args), args)
    base = profile_held_by(df.columns)  # the named profile the results were scored for
    thresholds = thresholds_from_profile(args.thresholds, base) if args.thresholds else None
    if args.max_fail_share is not None and all(m in df.columns for m in profile_metrics(base)) and \
            (thresholds is not None or "verdict" not in df.columns):  # the verdict under these thresholds
        df, _ = apply_verdicts(df, thresholds or base)
    by = args.by or None
    if by == "system" and "system" not in df.columns:  # results of one system
        by = None
    res = check(df, thresholds.profile if thresholds is not None else (), by=by,
                max_fail_share=args.max_fail_share, n_resamples=args.resamples, seed=args.seed)
    systems = len({c.system for c in res.checks})
    if res.passed:
        print(f"check passed: {len(res.checks)} rule(s) over {systems} system(s)")
        return 0
    print(f"check failed: {len(res.failing)} of {len(res.checks)} rule(s) over {systems} system(s)")
    print(res.table())
    return 1


def build_parser() -> argparse.ArgumentParser:
    from evalkit import __version__

    p = argparse.ArgumentParser(prog="evalkit", description="Evaluate LLM/RAG answers reproducibly.",
                                formatter_class=_Help)
    p.add_argument("--version", action="version", version=f"evalkit {__version__}")
    p.add_argument("-v", "--verbose", action="store_true", help="log progress details; show tracebacks")
    sub = p.add_subparsers(dest="cmd", required=True)
    m = _sub(sub, "metrics", "list registered metrics: scale, which end is better, inputs, formula",
             "  evalkit metrics\n  evalkit metrics --json\n"
             "  evalkit metrics --markdown > metrics.md   # the README's metric table", _metrics_cmd)
    shown = m.add_mutually_exclusive_group()
    shown.add_argument("--json", action="store_true", help="print JSON instead of a table")
    shown.add_argument("--markdown", action="store_true", help="print the Markdown table the README shows")
    m.add_argument("--config", help="a scoring config: its custom_metrics are listed too (and it is validated)")
    _add_report_and_init(sub)
    _add_score(sub)
    sm = _sub(sub, "summary", "summary table of a results file",
              "  evalkit summary results.parquet\n  evalkit summary results.parquet --format latex",
              _summary_cmd)
    sm.add_argument("results", help="scored results (.parquet, .csv, .jsonl)")
    sm.add_argument("--by", help="comma-separated grouping columns (default: system when the results have one; "
                                  "'' for none)")
    sm.add_argument("--format", default="text", choices=["text", "markdown", "latex", "tidy"],
                    help="text/markdown/latex: mean [95%% CI] and counts per group; tidy: every column")
    sm.add_argument("--resamples", type=int, default=1000, help="bootstrap resamples of each mean's interval")
    sm.add_argument("--seed", type=int, default=0, help="seed of the bootstrap")
    sm.add_argument("--columns", help=COLUMNS_HELP)
    _add_reading(sm)
    _add_calibrate(sub)
    _add_estimate(sub)
    _add_verdict_and_compare(sub)
    _add_paper(sub)
    _add_check(sub)
    return p


def _noting_renames(func, args) -> int:
    """Run a command; an old metric name's deprecation warning becomes one ``evalkit: note:`` line on stderr
    (each message once), other warnings are shown as usual."""
    import warnings

    from evalkit.metrics import MetricRenamedWarning

    noted: set[str] = set()
    show = warnings.showwarning

    from evalkit.run.runner import InputColumnsRenamed

    def note(message, category, *rest, **kwargs):
        kind = "note" if issubclass(category, MetricRenamedWarning) else "warning"
        if not issubclass(category, (MetricRenamedWarning, InputColumnsRenamed)):
            return show(message, category, *rest, **kwargs)
        if str(message) not in noted:  # once per run, however many chunks repeat it
            noted.add(str(message))
            print(f"evalkit: {kind}: {_redacted(str(message))}", file=sys.stderr)

    with warnings.catch_warnings():  # restores the filters and showwarning afterwards
        warnings.simplefilter("always", MetricRenamedWarning)
        warnings.simplefilter("always", InputColumnsRenamed)
        warnings.showwarning = note
        return func(args)


class _Terminated(SystemExit):
    """SIGTERM, raised in the main thread so that every ``finally`` runs: temporary notebooks, locks and empty
    parts folders are removed as they are on Ctrl-C (the default action would kill the process where it stands).

    A SystemExit, as Ctrl-C's KeyboardInterrupt is a special exception: an asyncio task re-raises only those two
    out of the event loop and keeps any other exception to itself, so a SIGTERM landing while the report's
    notebook client ran a background task (its kernel-alive poll) was lost and the report ended with exit 0. Its
    code is 143 wherever it surfaces."""

    def __init__(self) -> None:
        super().__init__(143)


@contextlib.contextmanager
def _terminated_like_interrupted():
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():  # only the main thread may set handlers
        yield
        return

    from evalkit.base.safeio import stop_or_defer

    def stop(signum, frame):
        stop_or_defer(_Terminated if signum == signal.SIGTERM else KeyboardInterrupt)
    previous = {s: signal.signal(s, stop) for s in (signal.SIGTERM, signal.SIGINT)}
    try:
        yield
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING, format="evalkit: %(message)s")
    _hide_credentials_in_logs()
    if "HF_HUB_OFFLINE" not in os.environ:  # the models ship in packages; never reach for a hub
        os.environ["HF_HUB_OFFLINE"] = "1"
    # the console shows evalkit's own progress only, not a model loader's bar per notebook (the report's
    # kernels inherit this); set it to 0 to see them
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    try:
        with _terminated_like_interrupted():
            return _noting_renames(args.func, args)
    except _Terminated:
        _release_abandoned_locks()
        print("evalkit: terminated (SIGTERM); nothing half-written was left", file=sys.stderr)
        return 143
    except KeyboardInterrupt:
        _release_abandoned_locks()
        print("evalkit: interrupted", file=sys.stderr)
        return 130
    except (ValueError, KeyError, OSError, RuntimeError) as e:  # one line, no traceback, non-zero exit
        if args.verbose:
            raise
        msg = e.args[0] if isinstance(e, KeyError) and e.args else e
        print(f"evalkit: error: {_redacted(str(msg))}", file=sys.stderr)
        return 2


def _release_abandoned_locks() -> None:
    """A stop can land inside a lock's own release (after its finally began, before the file went): no lock file
    may outlive the command."""
    from evalkit.base.safeio import release_abandoned

    release_abandoned()


def _redacted(text: str) -> str:
    from evalkit.base.config import redact_secrets

    return redact_secrets(text)


def _hide_credentials_in_logs() -> None:
    """Every handler of the root logger hides URL passwords and credential query values (httpx logs each request's
    full URL at INFO, which -v shows)."""
    from evalkit.base.config import RedactingFilter

    for handler in logging.getLogger().handlers:
        if not any(isinstance(f, RedactingFilter) for f in handler.filters):
            handler.addFilter(RedactingFilter())


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

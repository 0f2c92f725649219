"""Command line: thin wrappers that parse arguments and call the package.

    evalkit metrics
    evalkit score INPUT -o OUTPUT [--metrics a,b] [--config cfg.yaml] [--thresholds profile.yaml]
    evalkit summary RESULTS [--by system,question_type]
    evalkit report experiments/NAME.yaml
    evalkit calibrate RESULTS --score COL --label COL --criterion C [-o profile.yaml]
    evalkit compare RESULTS --a SYS --b SYS [--binary correct]

Bad input exits non-zero with one line on stderr naming what is wrong.
"""
from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from pathlib import Path


def _metrics_cmd(args) -> int:
    from .metrics import DEFAULT_METRICS, REGISTRY

    rows = []
    for m in REGISTRY.values():
        lo_hi = f"[{m.range[0]:g}, {m.range[1]:g}]" if m.range else "-"
        rows.append((m.name, m.family, m.kind, m.direction, lo_hi, ",".join(m.needs),
                     "yes" if m.name in DEFAULT_METRICS else "", m.description))
    if args.json:
        keys = ("name", "family", "kind", "direction", "range", "needs", "default", "description")
        print(json.dumps([dict(zip(keys, r)) for r in rows], indent=2))
        return 0
    header = ("name", "family", "kind", "better", "range", "needs", "default", "description")
    widths = [max(len(str(r[i])) for r in rows + [header]) for i in range(7)]
    print("  ".join(h.ljust(w) for h, w in zip(header, widths)) + "  " + header[7])
    for r in rows:
        print("  ".join(str(c).ljust(w) for c, w in zip(r, widths)) + "  " + r[7])
    return 0


def _load_config(args):
    from .config import EvalConfig
    from .verdict import thresholds_from_profile

    cfg = EvalConfig.from_yaml(args.config) if getattr(args, "config", None) else EvalConfig()
    if getattr(args, "thresholds", None):
        import dataclasses

        cfg = dataclasses.replace(cfg, thresholds=thresholds_from_profile(args.thresholds, cfg.thresholds))
    return cfg


def _score_cmd(args) -> int:
    from . import evaluate, load, save
    from .aggregate import summary, wide
    from .signature import build_signature, sig_string

    cfg = _load_config(args)
    metrics = [m.strip() for m in args.metrics.split(",") if m.strip()] if args.metrics else None
    df = load(args.input)
    out = evaluate(df, metrics, cfg, progress=not args.quiet and None)
    path = save(out, args.output)
    meta = out.attrs["evalkit"]
    sig = build_signature(cfg, df.attrs.get("sha256"), meta["metrics"], judge=meta.get("judge"))
    n_err = int(out["error"].notna().sum())
    print(f"scored {len(out)} rows with {len(out.attrs['evalkit']['metrics'])} metrics -> {path}"
          f" ({n_err} rows with errors)")
    if "verdict" in out.columns:
        print("verdicts: " + ", ".join(f"{k} {v}" for k, v in out["verdict"].value_counts().sort_index().items()))
    if meta.get("judge"):
        for metric, u in sorted(meta["judge"]["usage"].items()):
            print(f"judge {metric}: {int(u.get('http_calls', 0))} HTTP calls, {int(u.get('cache_hits', 0))} cached, "
                  f"{int(u.get('retries', 0))} retries, {int(u.get('failures', 0))} failures, "
                  f"{int(u.get('prompt_tokens', 0))}+{int(u.get('completion_tokens', 0))} tokens")
    if not args.quiet:
        print(wide(summary(out, by="system"), by="system").round(3).to_string())
    print(sig_string(sig))
    return 0


def _summary_cmd(args) -> int:
    from .aggregate import summary
    from .data import load

    import pandas as pd

    path = Path(args.results)
    df = pd.read_parquet(path) if path.suffix == ".parquet" else load(path)
    by = [b for b in args.by.split(",") if b] if args.by else None
    print(summary(df, by=by).round(4).to_string(index=False))
    return 0


def _report_cmd(args) -> int:
    from .report import run_report

    overrides = {"n_resamples": args.resamples} if args.resamples else None
    path = run_report(args.experiment, out_root=args.out, overrides=overrides)
    print(f"report: {path}")
    return 0


def _read_results(path: str):
    import pandas as pd

    from .data import load

    p = Path(path)
    if p.suffix == ".parquet":
        return pd.read_parquet(p)
    return load(p)


def _calibrate_cmd(args) -> int:
    from .calibrate import calibrate, profile_entry, write_profile
    from .data import dataset_sha256

    df = _read_results(args.results)
    for col in (args.score, args.label) + ((args.split,) if args.split and args.split != "seeded" else ()):
        if col not in df.columns:
            raise ValueError(f"{args.results}: no column {col!r} (columns: {list(df.columns)})")
    ok = df[args.score].notna() & df[args.label].notna()
    split = args.split if args.split in (None, "seeded") else df.loc[ok, args.split].tolist()
    subgroups = {c: df.loc[ok, c].tolist() for c in (args.by or "").split(",") if c and c in df.columns}
    res = calibrate(df.loc[ok, args.score].astype(float).tolist(), df.loc[ok, args.label].astype(bool).tolist(),
                    direction=args.direction, criterion=args.criterion, n_resamples=args.resamples, seed=args.seed,
                    split=split, subgroups=subgroups)
    out = {"score": args.score, "label": args.label, "excluded_undetermined": int((~ok).sum()), **res.to_dict()}
    if args.output:
        write_profile(args.output, {args.score: profile_entry(res, args.score, args.label)},
                      dataset_sha256=dataset_sha256(args.results))
        out["profile"] = args.output
    print(json.dumps(out, indent=2))
    return 0


def _compare_cmd(args) -> int:
    from .aggregate import scored_metrics
    from .compare import compare_systems

    df = _read_results(args.results)
    metrics = args.metrics.split(",") if args.metrics else [m for m in scored_metrics(df) if df[m].dtype != object]
    table = compare_systems(df, metrics, args.a, args.b, by=args.by, n_resamples=args.resamples, seed=args.seed,
                            binary=[c for c in (args.binary or "").split(",") if c])
    if args.output:
        from .data import save

        save(table, args.output)
    print(table.round(4).to_string(index=False))
    return 0


def build_parser() -> argparse.ArgumentParser:
    from . import __version__

    p = argparse.ArgumentParser(prog="evalkit", description="Evaluate LLM/RAG answers reproducibly.")
    p.add_argument("--version", action="version", version=f"evalkit {__version__}")
    p.add_argument("-v", "--verbose", action="store_true", help="log progress details")
    sub = p.add_subparsers(dest="cmd", required=True)

    m = sub.add_parser("metrics", help="list registered metrics")
    m.add_argument("--json", action="store_true")
    m.set_defaults(func=_metrics_cmd)

    s = sub.add_parser("score", help="score a dataset and write per-row results")
    s.add_argument("input", help="CSV, JSONL or Parquet dataset")
    s.add_argument("-o", "--output", required=True, help="output path (.parquet, .csv or .jsonl)")
    s.add_argument("--metrics", help="comma-separated metric names (default: all that apply)")
    s.add_argument("--config", help="YAML config (see evalkit.config.EvalConfig)")
    s.add_argument("--thresholds", help="calibrated threshold profile (YAML) for the verdict")
    s.add_argument("-q", "--quiet", action="store_true", help="no progress bar or summary table")
    s.set_defaults(func=_score_cmd)

    sm = sub.add_parser("summary", help="per-system summary of a results file")
    sm.add_argument("results")
    sm.add_argument("--by", default="system", help="comma-separated grouping columns")
    sm.set_defaults(func=_summary_cmd)

    r = sub.add_parser("report", help="run an experiment's notebooks into reports/NAME/")
    r.add_argument("experiment", help="experiment YAML, e.g. experiments/default.yaml")
    r.add_argument("--out", default="reports", help="parent folder of the report (default: reports)")
    r.add_argument("--resamples", type=int, help="override bootstrap resamples (quick runs)")
    r.set_defaults(func=_report_cmd)

    c = sub.add_parser("calibrate", help="choose a threshold against a human label; print JSON, write a profile")
    c.add_argument("results", help="scored results (.parquet, or a dataset with score columns)")
    c.add_argument("--score", required=True, help="score column, e.g. hallucination")
    c.add_argument("--label", required=True, help="binary label column, e.g. hallucinated")
    c.add_argument("--direction", default="higher", choices=["higher", "lower"],
                   help="higher: a high score indicates the positive label")
    c.add_argument("--criterion", default="youden", help="youden | f1 | precision>=X | recall>=X | cost:fp=A,fn=B")
    c.add_argument("--split", help="'seeded' or a column with calibration/test values (honest protocol)")
    c.add_argument("--by", help="comma-separated subgroup columns, e.g. question_type,system")
    c.add_argument("--resamples", type=int, default=1000)
    c.add_argument("--seed", type=int, default=0)
    c.add_argument("-o", "--output", help="write a threshold profile YAML")
    c.set_defaults(func=_calibrate_cmd)

    k = sub.add_parser("compare", help="paired comparison of two systems")
    k.add_argument("results")
    k.add_argument("--a", required=True, help="baseline system")
    k.add_argument("--b", required=True, help="system compared with it")
    k.add_argument("--metrics", help="comma-separated (default: every scored metric)")
    k.add_argument("--binary", default="", help="paired binary columns for McNemar, e.g. correct")
    k.add_argument("--by", help="group column, e.g. question_type")
    k.add_argument("--resamples", type=int, default=2000)
    k.add_argument("--seed", type=int, default=0)
    k.add_argument("-o", "--output", help="write the table (.csv, .parquet, .jsonl)")
    k.set_defaults(func=_compare_cmd)
    return p


def main(argv: list[str] | None = None) -> int:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING, format="evalkit: %(message)s")
    try:
        return args.func(args)
    except KeyboardInterrupt:
        print("evalkit: interrupted", file=sys.stderr)
        return 130
    except (ValueError, KeyError, OSError, RuntimeError) as e:  # one line, no traceback, non-zero exit
        if args.verbose:
            raise
        msg = e.args[0] if isinstance(e, KeyError) and e.args else e
        print(f"evalkit: error: {msg}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

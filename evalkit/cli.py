"""Command line: thin wrappers that parse arguments and call the package.

    evalkit metrics
    evalkit score INPUT -o OUTPUT [--metrics a,b] [--config cfg.yaml] [--thresholds profile.yaml]
    evalkit summary RESULTS [--by system,question_type]

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
    sig = build_signature(cfg, df.attrs.get("sha256"), out.attrs["evalkit"]["metrics"])
    n_err = int(out["error"].notna().sum())
    print(f"scored {len(out)} rows with {len(out.attrs['evalkit']['metrics'])} metrics -> {path}"
          f" ({n_err} rows with errors)")
    if "verdict" in out.columns:
        print("verdicts: " + ", ".join(f"{k} {v}" for k, v in out["verdict"].value_counts().sort_index().items()))
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

    for register in _EXTRA_COMMANDS:
        register(sub)
    return p


_EXTRA_COMMANDS: list = []


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

"""Where the time goes on large runs: per metric rows/s, CPU-s per row and peak RSS at N rows, and how each grows.

Rows come from the HaluEval QA and summarization dev splits in ../shared/bench (never copied into the project):
the first 4,600 rows are the real rows; beyond that each further pass adds a marker sentence to every context and
a suffix to every id, so no two rows share a context (per-context caches cannot make large N look cheap).

Each (metric, N) runs in its own process (peak RSS is a per-process high-water mark): it loads the metric's
resources on 8 warm-up rows, then scores the N rows through :func:`evalkit.stream.score_chunks` (chunks of 2,000)
and reports wall time, CPU time of the scoring and the process's peak RSS.

    nice -n 10 .venv/bin/python benchmarks/bench_scale.py --sizes 1000,10000 --out benchmarks/results/scale.md
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT.parent / "shared" / "bench"
SOURCES = ("halueval_qa_dev.jsonl", "halueval_summarization_dev.jsonl")
KEEP = ("id", "question", "contexts", "answer", "ground_truth")


def build_rows(n: int, path: Path) -> Path:
    """Write ``n`` rows with distinct contexts to ``path`` (JSONL); the mix of QA and summaries of the dev splits."""
    base = []
    for name in SOURCES:
        src = BENCH / name
        if not src.exists():
            raise SystemExit(f"{src} not found: the benchmark reads ../shared/bench beside the project")
        base += [json.loads(line) for line in src.read_text().splitlines() if line.strip()]
    # interleave so every prefix has both tasks in the splits' proportion
    qa = [r for r in base if r.get("task_type") == "qa"]
    summ = [r for r in base if r.get("task_type") != "qa"]
    step = max(1, len(qa) // max(1, len(summ)))
    mixed = []
    for i, r in enumerate(qa):
        mixed.append(r)
        if i % step == step - 1 and summ:
            mixed.append(summ.pop(0))
    mixed += summ
    with open(path, "w") as f:
        for i in range(n):
            r = {k: v for k, v in mixed[i % len(mixed)].items() if k in KEEP}
            k = i // len(mixed)
            if k:
                r["id"] = f"{r['id']}-pass{k}"
                r["contexts"] = [c + f" (Archive copy {k}.)" for c in r.get("contexts") or []]
            f.write(json.dumps(r) + "\n")
    return path


def run_one(metrics: list[str], data: Path, chunk: int = 2000) -> dict:
    """In this process: warm up, then score ``data``; wall and CPU seconds of the scoring, peak RSS in MB."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from evalkit.stream import score_chunks

    warm = Path(tempfile.mkdtemp()) / "warm.jsonl"
    with open(data) as f:
        warm.write_text("".join(next(f) for _ in range(8)))
    score_chunks(warm, metrics, chunk_size=chunk, progress=False)
    t0, c0 = time.perf_counter(), time.process_time()
    out = score_chunks(data, metrics, chunk_size=chunk, progress=False)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    errors = int(out["error"].notna().sum())
    return {"metrics": metrics, "rows": len(out), "wall_s": wall, "cpu_s": cpu, "peak_rss_mb": rss, "errors": errors}


def scaling(metrics: list[str], data: Path, workers: list[int], chunk: int) -> list[dict]:
    """Wall time of the same rows on this process and on dask LocalClusters of each size in ``workers``; each
    cluster is warmed (models loaded on every worker) before the clock starts."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    sys.path.insert(0, str(ROOT))
    from evalkit.engine import DaskEngine
    from evalkit.stream import score_chunks

    warm = data.with_name("warm.jsonl")
    with open(data) as f:
        warm.write_text("".join(next(f) for _ in range(chunk * max(workers))))
    local = measure(metrics, data, chunk)
    out = [{"engine": "local (this process)", "workers": 1, "wall_s": local["wall_s"], "rows": local["rows"]}]
    for n in workers:
        with DaskEngine(f"local:{n}") as eng:
            score_chunks(warm, metrics, chunk_size=chunk, progress=False, engine=eng)
            t0 = time.perf_counter()
            res = score_chunks(data, metrics, chunk_size=chunk, progress=False, engine=eng)
            out.append({"engine": f"dask local:{n}", "workers": n, "wall_s": time.perf_counter() - t0,
                        "rows": len(res)})
    return out


def scaling_table(runs: list[dict], metrics: list[str]) -> str:
    one = next(r["wall_s"] for r in runs if r["engine"].startswith("dask local:1")) if \
        any(r["engine"] == "dask local:1" for r in runs) else runs[0]["wall_s"]
    lines = [f"Scaling on {runs[0]['rows']} rows, metrics {', '.join(metrics)}; efficiency = T(1 worker) / (n * T(n))",
             "", "| engine | rows/s | wall s | efficiency vs 1 dask worker |", "|---|---|---|---|"]
    for r in runs:
        lines.append(f"| {r['engine']} | {r['rows'] / r['wall_s']:.1f} | {r['wall_s']:.1f} | "
                     f"{one / (r['workers'] * r['wall_s']):.2f} |")
    return "\n".join(lines)


def encoder_ratio(data: Path, repeats: int = 2) -> str:
    """semantic_similarity's encoding before (answers and references encoded in two calls, every text) and after
    (one call, each distinct text once), side by side on the same rows; the largest difference in the scores."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    sys.path.insert(0, str(ROOT))
    import numpy as np

    from evalkit.encoders import get_encoder

    rows = [json.loads(line) for line in data.read_text().splitlines()]
    a = [r["answer"] for r in rows if (r.get("answer") or "").strip() and (r.get("ground_truth") or "").strip()]
    g = [r["ground_truth"] for r in rows if (r.get("answer") or "").strip() and (r.get("ground_truth") or "").strip()]
    enc = get_encoder()

    def before():
        kw = dict(batch_size=enc.batch_size, normalize_embeddings=True, show_progress_bar=False)
        va, vg = (np.asarray(enc.model.encode(t, **kw), dtype=np.float64) for t in (a, g))
        return (va * vg).sum(axis=1)

    def after():
        v = enc.encode([*a, *g])
        return (v[:len(a)] * v[len(a):]).sum(axis=1)

    enc.encode(a[:8])  # warm-up
    times: dict[str, list[float]] = {"before": [], "after": []}
    for _ in range(repeats):  # interleaved, so both see the same machine load
        for name, fn in (("before", before), ("after", after)):
            t0 = time.process_time()
            res = fn()
            times[name].append(time.process_time() - t0)
            if name == "before":
                ref = res
            else:
                diff = float(np.abs(res - ref).max())
    b, f = min(times["before"]), min(times["after"])
    return (f"semantic_similarity encoding on {len(a)} pairs ({len(set(a + g))} distinct of {2 * len(a)} texts): "
            f"before {b:.1f} CPU-s, after {f:.1f} CPU-s, ratio {b / f:.2f}x; largest score difference {diff:.1e}")


def measure(metrics: list[str], data: Path, chunk: int = 2000) -> dict:
    r = subprocess.run([sys.executable, __file__, "--one", ",".join(metrics), "--data", str(data),
                        "--chunk-size", str(chunk)], cwd=ROOT,
                       capture_output=True, text=True, env={**os.environ, "HF_HUB_OFFLINE": "1",
                                                            "PYTHONPATH": str(ROOT)})
    if r.returncode:
        raise SystemExit(f"{metrics} failed:\n{r.stderr[-2000:]}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def default_metrics() -> list[str]:
    sys.path.insert(0, str(ROOT))
    from evalkit.runner import resolve_metrics

    cols = ["id", "question", "contexts", "answer", "ground_truth"]
    return [m.name for m in resolve_metrics(None, cols)]


def table(results: list[dict], sizes: list[int]) -> str:
    lines = ["| metric | N | rows/s | CPU ms/row | peak RSS MB | RSS growth vs smallest N |", "|---|---|---|---|---|---|"]
    first: dict[str, float] = {}
    for r in results:
        name = ",".join(r["metrics"]) if len(r["metrics"]) == 1 else f"default set ({len(r['metrics'])} metrics)"
        first.setdefault(name, r["peak_rss_mb"])
        lines.append(f"| {name} | {r['rows']} | {r['rows'] / r['wall_s']:.1f} | {1000 * r['cpu_s'] / r['rows']:.2f} | "
                     f"{r['peak_rss_mb']:.0f} | {r['peak_rss_mb'] - first[name]:+.0f} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--sizes", default="1000,10000", help="comma-separated row counts")
    p.add_argument("--metrics", default="default", help="'default' or comma-separated names (each measured alone)")
    p.add_argument("--no-set", action="store_true", help="skip the run of all the metrics together")
    p.add_argument("--only-set", action="store_true", help="only the run of all the metrics together")
    p.add_argument("--out", help="write the Markdown table here")
    p.add_argument("--scaling", type=int, help="instead: N rows on this process and on dask local:1 and local:2")
    p.add_argument("--encoder-ratio", type=int, help="instead: the encoder de-duplication before/after on N rows")
    p.add_argument("--chunk-size", type=int, default=2000, help="rows per chunk")
    p.add_argument("--one", help=argparse.SUPPRESS)
    p.add_argument("--data", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.one:
        print(json.dumps(run_one(args.one.split(","), Path(args.data), args.chunk_size)))
        return 0
    sizes = [int(s) for s in args.sizes.split(",")]
    metrics = default_metrics() if args.metrics == "default" else args.metrics.split(",")
    if args.encoder_ratio:
        with tempfile.TemporaryDirectory() as tmp:
            print(encoder_ratio(build_rows(args.encoder_ratio, Path(tmp) / "rows.jsonl")))
        return 0
    if args.scaling:
        with tempfile.TemporaryDirectory() as tmp:
            data = build_rows(args.scaling, Path(tmp) / "rows.jsonl")
            text = scaling_table(scaling(metrics, data, [1, 2], args.chunk_size), metrics)
        print(text)
        if args.out:
            Path(args.out).write_text(text + "\n")
        return 0
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in sizes:
            data = build_rows(n, Path(tmp) / f"rows_{n}.jsonl")
            runs = ([] if args.only_set else [[m] for m in metrics]) + ([] if args.no_set else [metrics])
            for ms in runs:
                r = measure(ms, data)
                results.append(r)
                print(f"{','.join(ms) if len(ms) == 1 else 'default set'} N={n}: {r['rows'] / r['wall_s']:.1f} rows/s, "
                      f"{1000 * r['cpu_s'] / r['rows']:.2f} CPU ms/row, peak RSS {r['peak_rss_mb']:.0f} MB", flush=True)
    results.sort(key=lambda r: (len(r["metrics"]), ",".join(r["metrics"]), r["rows"]))
    text = table(results, sizes)
    print(text)
    if args.out:
        Path(args.out).write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

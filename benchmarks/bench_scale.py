"""Where the time goes on large runs: per metric rows/s, CPU-s per row and peak RSS at N rows, and how each grows.

Rows come from the HaluEval QA and summarization dev splits in ../shared/bench (never copied into the project):
the first 4,600 rows are the real rows; beyond that each further pass adds a marker sentence to every context and
a suffix to every id, so no two rows share a context (per-context caches cannot make large N look cheap).

Each (metric, N) runs in its own process (peak RSS is a per-process high-water mark): it loads the metric's
resources on 8 warm-up rows, then scores the N rows through :func:`evalkit.run.stream.score_chunks` (chunks of 2,000)
and reports wall time, CPU time of the scoring and the process's peak RSS.

    nice -n 10 .venv/bin/python benchmarks/bench_scale.py --sizes 1000,10000 --out benchmarks/results/scale.md

``--per-metric`` alone measures each metric's CPU per row on QA rows and on summaries separately (the support
detector's budgets, issue 24, beside grounding_risk):

    nice -n 10 .venv/bin/python benchmarks/bench_scale.py --per-metric --metrics support,grounding_risk --sizes 400,100

``--peak-rss`` instead runs ``evalkit score`` itself on each N (cheap metrics, same chunk size) and reports the
peak RSS of each run: flat memory means the 50,000-row peak stays within 1.2x of the 10,000-row one.

    nice -n 10 .venv/bin/python benchmarks/bench_scale.py --peak-rss --sizes 10000,50000
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
from types import SimpleNamespace

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


# a warm-up row whose answer is not English: the language guard's full lingua detector (about 6 CPU-s to load its
# n-gram models, once per process) loads before the clock like every other model, in every revision alike (one
# without lingua scores it as any other row); ``fixed_costs`` reports that load apart
WARM_OTHER_LANGUAGE = {"id": "warm-de", "question": "How often should the filter be replaced?",
                       "contexts": ["Replace the HEPA filter every six months."],
                       "answer": "Der HEPA-Filter sollte alle sechs Monate ersetzt werden.",
                       "ground_truth": "Every six months."}


def run_one(metrics: list[str] | None, data: Path, chunk: int = 2000, profile: str | None = None) -> dict:
    """In this process: warm up, then score ``data``; wall and CPU seconds of the scoring, peak RSS in MB.
    ``metrics`` None: what a run that names none scores (each revision's own default); ``profile``: the named verdict
    profile of this tree's config (a revision from before profiles is given none)."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    score_chunks = _score_chunks()
    config = {"profile": profile} if profile else None
    warm = Path(tempfile.mkdtemp()) / "warm.jsonl"
    with open(data) as f:
        warm.write_text("".join(next(f) for _ in range(8)) + json.dumps(WARM_OTHER_LANGUAGE) + "\n")
    score_chunks(warm, metrics, config, chunk_size=chunk, progress=False)
    t0, c0 = time.perf_counter(), time.process_time()
    out = score_chunks(data, metrics, config, chunk_size=chunk, progress=False)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    errors = int(out["error"].notna().sum())
    named = [c for c in out.columns if c in _registered()]
    return {"metrics": metrics if metrics is not None else named, "rows": len(out), "wall_s": wall, "cpu_s": cpu,
            "peak_rss_mb": rss, "errors": errors}


def _registered() -> set[str]:
    from evalkit.metrics import REGISTRY

    return set(REGISTRY)


def _score_chunks():
    """The evalkit on the path's streaming scorer, whichever house it lives in (a revision's checkout from
    --against may be from before evalkit.run, or before streaming: then the whole file in one score() call)."""
    try:
        from evalkit.run.stream import score_chunks
        return score_chunks
    except ImportError:
        pass
    try:
        from evalkit.stream import score_chunks  # before the package's folders were the pipeline
        return score_chunks
    except ImportError:
        from evalkit.run.runner import score

    def whole(path, metrics, config=None, chunk_size=None, progress=False):
        import pandas as pd

        return score(pd.read_json(path, lines=True), metrics, config, progress=progress)

    return whole


def scaling(metrics: list[str], data: Path, workers: list[int], chunk: int) -> list[dict]:
    """Wall time of the same rows on this process and on dask LocalClusters of each size in ``workers``; each
    cluster is warmed (models loaded on every worker) before the clock starts."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    sys.path.insert(0, str(ROOT))
    from evalkit.run.engine import DaskEngine
    from evalkit.run.stream import score_chunks

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


def worktree(rev: str, where: Path) -> Path:
    """A checkout of ``rev`` of this repository at ``where`` (git worktree, detached), for side-by-side runs."""
    subprocess.run(["git", "worktree", "add", "--detach", "-f", str(where), rev], cwd=ROOT, check=True,
                   capture_output=True)
    return where


def against(rev: str, metrics: list[str], data: Path, repeats: int = 2, per_metric: bool = False) -> str:
    """The same rows scored by revision ``rev`` and by this tree, interleaved (so both see the same machine load),
    each in its own process with models loaded beforehand; best of ``repeats``; CPU and wall ms per row."""
    runs = ([[m] for m in metrics] if per_metric else []) + [metrics]
    best: dict[tuple[str, str], dict] = {}
    with tempfile.TemporaryDirectory() as tmp:
        old = worktree(rev, Path(tmp) / "old")
        try:
            for _ in range(repeats):
                for ms in runs:
                    for side, root in ((rev, old), ("this tree", ROOT)):
                        r = measure(ms, data, root=root)
                        key = (",".join(ms) if len(ms) == 1 else f"default set ({len(ms)} metrics)", side)
                        if key not in best or r["cpu_s"] < best[key]["cpu_s"]:
                            best[key] = r
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(old)], cwd=ROOT, capture_output=True)
    n = best[next(iter(best))]["rows"]
    lines = [f"Side by side on {n} rows (best of {repeats}, interleaved): revision {rev} vs this tree", "",
             "| metrics | CPU ms/row before | after | CPU ratio | wall ms/row before | after | wall ratio | peak RSS MB before | after |",
             "|---|---|---|---|---|---|---|---|---|"]
    for name in dict.fromkeys(k[0] for k in best):
        b, a = best[(name, rev)], best[(name, "this tree")]
        cb, ca = 1000 * b["cpu_s"] / b["rows"], 1000 * a["cpu_s"] / a["rows"]
        wb, wa = 1000 * b["wall_s"] / b["rows"], 1000 * a["wall_s"] / a["rows"]
        lines.append(f"| {name} | {cb:.2f} | {ca:.2f} | {cb / ca:.2f}x | {wb:.2f} | {wa:.2f} | {wb / wa:.2f}x | "
                     f"{b['peak_rss_mb']:.0f} | {a['peak_rss_mb']:.0f} |")
    return "\n".join(lines)


def default_run_against(rev: str, profile: str, data: Path, repeats: int = 3) -> str:
    """A run that names no metrics: revision ``rev``'s (its own default set) against this tree's under ``profile``
    and under the other named profile, interleaved, each in its own process with its models loaded on 8 rows
    first; the median of ``repeats`` CPU ms per row (#38: the default profile's CPU against the default set of
    the revision the target was set at)."""
    import statistics

    other = "seed" if profile == "evalkit" else "evalkit"
    sides = {f"{rev}, default run": (None, None), f"this tree, profile: {profile}": (ROOT, profile),
             f"this tree, profile: {other}": (ROOT, other)}
    runs: dict[str, list[dict]] = {k: [] for k in sides}
    with tempfile.TemporaryDirectory() as tmp:
        old = worktree(rev, Path(tmp) / "old")
        try:
            for _ in range(repeats):
                for name, (root, prof) in sides.items():
                    runs[name].append(measure(None, data, root=root or old, profile=prof))
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(old)], cwd=ROOT, capture_output=True)
    cpu = {k: statistics.median(1000 * r["cpu_s"] / r["rows"] for r in v) for k, v in runs.items()}
    base = cpu[f"{rev}, default run"]
    lines = [f"A run naming no metrics on {runs[next(iter(runs))][0]['rows']} rows (median of {repeats}, "
             f"interleaved): revision {rev} against this tree", "",
             "| run | metrics | CPU ms/row | vs the revision's |", "|---|---|---|---|"]
    lines += [f"| {k} | {len(v[0]['metrics'])}: {', '.join(v[0]['metrics'])} | {cpu[k]:.1f} | {cpu[k] / base:.2f}x |"
              for k, v in runs.items()]
    return "\n".join(lines)


def parse_ratio(data: Path, repeats: int = 2) -> str:
    """``hallucination`` against the bare spaCy parse it cannot avoid: ``nlp.pipe`` over the same answers (full
    pipeline) and distinct joined contexts (lemma components), the same components, one process, interleaved,
    each on a fresh doc cache; best of ``repeats`` CPU seconds."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    sys.path.insert(0, str(ROOT))
    from evalkit.metrics.anchors import hallucination_batch
    from evalkit.base.nlp import ANSWER_COMPONENTS, CONTEXT_COMPONENTS, NlpPipeline, load_pipeline

    rows = [json.loads(line) for line in data.read_text().splitlines()]
    inputs = {"answer": [r.get("answer") or "" for r in rows], "contexts": [r.get("contexts") or [] for r in rows]}
    answers = inputs["answer"]
    contexts = list(dict.fromkeys(j for j in ("\n\n".join(c for c in cs if c) for cs in inputs["contexts"]) if j))
    nlp = load_pipeline()

    def bare():
        for texts, keep in ((answers, ANSWER_COMPONENTS), (contexts, CONTEXT_COMPONENTS)):
            with nlp.select_pipes(disable=[p for p in nlp.pipe_names if p not in keep]):
                for _ in nlp.pipe(texts, batch_size=64):
                    pass

    def metric():
        hallucination_batch(inputs, {}, SimpleNamespace(nlp=NlpPipeline(), context_index={}))

    metric()  # warm-up: the pipeline's lemma memo and regexes, for both
    times: dict[str, list[float]] = {"bare nlp.pipe": [], "hallucination": []}
    for _ in range(repeats):
        for name, fn in (("bare nlp.pipe", bare), ("hallucination", metric)):
            t0 = time.process_time()
            fn()
            times[name].append(time.process_time() - t0)
    b, h = min(times["bare nlp.pipe"]), min(times["hallucination"])
    return (f"hallucination on {len(rows)} rows ({len(set(answers))} distinct answers, {len(contexts)} distinct "
            f"contexts): bare nlp.pipe {b:.2f} CPU-s, hallucination {h:.2f} CPU-s, ratio {h / b:.2f}x")


def kill_and_resume(data: Path, out: Path, kill_after: float, chunk: int) -> str:
    """``evalkit score`` on ``data`` as a user runs it (non-TTY, so status lines), SIGKILLed after ``kill_after``
    seconds and re-run with the same command; the finished run's rows, errors and peak RSS, and the status lines."""
    import signal

    import pandas as pd

    cmd = [str(Path(sys.executable).with_name("evalkit")), "score", str(data), "-o", str(out),
           "--chunk-size", str(chunk)]
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(ROOT)}
    log = out.with_suffix(".log")
    t0 = time.perf_counter()
    with open(log, "w") as fh:
        first = subprocess.Popen(cmd, stdout=fh, stderr=subprocess.STDOUT, env=env)
        try:
            first.wait(timeout=kill_after)
            raise SystemExit(f"the first run ended by itself after {time.perf_counter() - t0:.0f} s: raise N")
        except subprocess.TimeoutExpired:
            first.send_signal(signal.SIGKILL)
            first.wait()
    killed_at = time.perf_counter() - t0
    manifest = json.loads((Path(f"{out}.parts") / "manifest.json").read_text())
    done = sum(c["stop"] - c["start"] for c in manifest["chunks"])
    t1 = time.perf_counter()
    with open(log, "a") as fh:
        fh.write("--- killed (SIGKILL); the same command again ---\n")
        fh.flush()
        second = subprocess.run(cmd, stdout=fh, stderr=subprocess.STDOUT, env=env)
    resumed = time.perf_counter() - t1
    if second.returncode:
        raise SystemExit(f"the resumed run failed ({second.returncode}); see {log}")
    rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    res = pd.read_parquet(out, columns=["id", "error"])
    ids = [json.loads(line).get("id") for line in data.read_text().splitlines()]
    lines = [line for line in log.read_text().splitlines() if line.startswith(("evalkit:", "---", "scored", "resum"))]
    return "\n".join([
        f"`{' '.join(['evalkit', *cmd[1:]])}`: killed after {killed_at:.0f} s with {done} rows in finished chunks; "
        f"the same command resumed and finished in {resumed:.0f} s (total {killed_at + resumed:.0f} s)",
        f"output: {len(res)} rows, ids in input order: {list(res['id']) == ids}, rows with errors: "
        f"{int(res['error'].notna().sum())}; peak RSS of either process: {rss:.0f} MB", "", "    " +
        "\n    ".join(lines[:4] + ["..."] + lines[-6:])])


def peak_rss(sizes: list[int], metrics: list[str], chunk: int, fmt: str = "parquet", root: Path = ROOT) -> str:
    """``evalkit score`` (the CLI, as a user runs it) on N rows for each N, each in a fresh process with the same
    chunk size; the peak RSS of that process alone (``os.wait4``), and each N's peak against the smallest N's."""
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(root)}
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in sizes:
            data = build_rows(n, Path(tmp) / f"rows_{n}.jsonl")
            out = Path(tmp) / f"scored_{n}.{fmt}"
            cmd = [sys.executable, "-m", "evalkit.cli", "score", str(data), "-o", str(out), "--metrics",
                   ",".join(metrics), "--chunk-size", str(chunk)]
            t0 = time.perf_counter()
            with open(Path(tmp) / f"log_{n}.txt", "w") as log:
                proc = subprocess.Popen(cmd, cwd=root, env=env, stdout=log, stderr=subprocess.STDOUT)
                _, status, usage = os.wait4(proc.pid, 0)
                proc.returncode = os.waitstatus_to_exitcode(status)
            wall = time.perf_counter() - t0
            if proc.returncode:
                raise SystemExit(f"N={n} failed ({proc.returncode}):\n{(Path(tmp) / f'log_{n}.txt').read_text()[-2000:]}")
            rows.append((n, wall, usage.ru_maxrss / 1024, out.stat().st_size / 2 ** 20))
            print(f"N={n}: {wall:.0f} s, peak RSS {rows[-1][2]:.0f} MB, output {rows[-1][3]:.1f} MB", flush=True)
    base = rows[0][2]
    lines = [f"`evalkit score ROWS.jsonl -o OUT.{fmt} --metrics {','.join(metrics)} --chunk-size {chunk}` "
             f"(`bench_scale.py --peak-rss`), each N in a fresh process:", "",
             "| N | wall s | peak RSS MB | vs N=%d | output MB |" % rows[0][0], "|---|---|---|---|---|"]
    lines += [f"| {n} | {wall:.0f} | {rss:.0f} | {rss / base:.2f}x | {size:.1f} |" for n, wall, rss, size in rows]
    return "\n".join(lines)


def measure(metrics: list[str] | None, data: Path, chunk: int = 2000, root: Path = ROOT,
            profile: str | None = None) -> dict:
    """:func:`run_one` in a fresh process on the evalkit of ``root`` (this tree, or a revision's checkout)."""
    cmd = [sys.executable, __file__, "--one", "default" if metrics is None else ",".join(metrics), "--data",
           str(data), "--chunk-size", str(chunk)] + (["--profile", profile] if profile else [])
    r = subprocess.run(cmd, cwd=root, capture_output=True, text=True,
                       env={**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(root)})
    if r.returncode:
        raise SystemExit(f"{metrics or 'the default run'} failed:\n{r.stderr[-2000:]}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def task_rows(source: str, n: int, path: Path) -> Path:
    """The first ``n`` rows of one development split (``halueval_qa_dev.jsonl``, ...) as JSONL at ``path``."""
    src = BENCH / source
    if not src.exists():
        raise SystemExit(f"{src} not found: the benchmark reads ../shared/bench beside the project")
    rows = [json.loads(line) for line in src.read_text().splitlines() if line.strip()][:n]
    path.write_text("".join(json.dumps({k: v for k, v in r.items() if k in KEEP}) + "\n" for r in rows))
    return path


# the CPU budgets per row for the support detector (issue 24): summaries 150 ms, QA answers 30 ms
SUPPORT_BUDGET_MS = {"halueval_qa_dev.jsonl": 30.0, "halueval_summarization_dev.jsonl": 150.0}


def per_task(metrics: list[str], n_qa: int, n_summ: int, repeats: int = 2) -> str:
    """CPU ms per row of each metric alone on QA rows and on summaries, side by side (each run in its own process
    with its models loaded on 8 warm-up rows first, metrics interleaved, best of ``repeats``)."""
    best: dict[tuple[str, str], dict] = {}
    with tempfile.TemporaryDirectory() as tmp:
        sets = {s: task_rows(s, n, Path(tmp) / s) for s, n in (("halueval_qa_dev.jsonl", n_qa),
                                                               ("halueval_summarization_dev.jsonl", n_summ))}
        for _ in range(repeats):
            for source, data in sets.items():
                for m in metrics:
                    r = measure([m], data)
                    if (m, source) not in best or r["cpu_s"] < best[(m, source)]["cpu_s"]:
                        best[(m, source)] = r
    lines = [f"CPU ms per row, each metric alone (best of {repeats}, interleaved; {n_qa} QA rows, {n_summ} summaries)", "",
             "| metric | task | rows | CPU ms/row | wall ms/row | budget (issue 24) |", "|---|---|---|---|---|---|"]
    for (m, source), r in sorted(best.items()):
        budget = f"{SUPPORT_BUDGET_MS[source]:.0f}" if m == "support" else ""
        lines.append(f"| {m} | {source.replace('_dev.jsonl', '')} | {r['rows']} | {1000 * r['cpu_s'] / r['rows']:.1f} | "
                     f"{1000 * r['wall_s'] / r['rows']:.1f} | {budget} |")
    return "\n".join(lines)


def default_metrics() -> list[str]:
    sys.path.insert(0, str(ROOT))
    from evalkit.run.runner import resolve_metrics

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
    p.add_argument("--against", metavar="REV", help="instead: this tree against git revision REV, side by side")
    p.add_argument("--profile", choices=["seed", "evalkit"],
                   help="with --against: the run that names no metrics, this tree under this verdict profile (and "
                        "under the other), against the revision's own default run")
    p.add_argument("--per-metric", action="store_true", help="with --against: each metric alone as well; alone: "
                   "CPU ms per row of each of --metrics on QA rows and on summaries (--sizes QA,SUMMARIES)")
    p.add_argument("--parse-ratio", type=int, metavar="N", help="instead: hallucination vs bare nlp.pipe on N rows")
    p.add_argument("--kill-resume", type=float, metavar="SECONDS",
                   help="instead: `evalkit score` on the first of --sizes rows, killed after SECONDS, then resumed")
    p.add_argument("--chunk-size", type=int, default=2000, help="rows per chunk")
    p.add_argument("--peak-rss", action="store_true",
                   help="instead: peak RSS of `evalkit score` (a fresh process per N of --sizes, --metrics given "
                        "or exact_match,relevance,number_match), e.g. --sizes 10000,50000")
    p.add_argument("--format", default="parquet", choices=["parquet", "csv", "jsonl"], help="with --peak-rss")
    p.add_argument("--one", help=argparse.SUPPRESS)
    p.add_argument("--data", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.one:
        named = None if args.one == "default" else args.one.split(",")
        print(json.dumps(run_one(named, Path(args.data), args.chunk_size, args.profile)))
        return 0
    sizes = [int(s) for s in args.sizes.split(",")]
    if args.peak_rss:
        cheap = ["exact_match", "relevance", "number_match"] if args.metrics == "default" else args.metrics.split(",")
        text = peak_rss(sizes, cheap, args.chunk_size, args.format)
        print(text)
        if args.out:
            Path(args.out).write_text(text + "\n")
        return 0
    metrics = default_metrics() if args.metrics == "default" else args.metrics.split(",")
    if args.per_metric and not args.against:
        text = per_task(metrics, sizes[0], sizes[-1] if len(sizes) > 1 else sizes[0])
        print(text)
        if args.out:
            Path(args.out).write_text(text + "\n")
        return 0
    if args.against or args.parse_ratio:
        with tempfile.TemporaryDirectory() as tmp:
            data = build_rows(args.parse_ratio or sizes[0], Path(tmp) / "rows.jsonl")
            if args.parse_ratio:
                text = parse_ratio(data)
            elif args.profile:
                text = default_run_against(args.against, args.profile, data)
            else:
                text = against(args.against, metrics, data, per_metric=args.per_metric)
        print(text)
        if args.out:
            Path(args.out).write_text(text + "\n")
        return 0
    if args.kill_resume:
        with tempfile.TemporaryDirectory() as tmp:
            data = build_rows(sizes[0], Path(tmp) / "rows.jsonl")
            text = kill_and_resume(data, Path(tmp) / "scored.parquet", args.kill_resume, args.chunk_size)
        print(text)
        if args.out:
            Path(args.out).write_text(text + "\n")
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

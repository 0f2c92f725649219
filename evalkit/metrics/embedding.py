"""Embedding metrics: semantic similarity and BERTScore, offline (``embed`` extra)."""
from __future__ import annotations

from typing import Any, Mapping, Sequence

import numpy as np

from evalkit.metrics.base import Metric, NoEvidence, Score
from evalkit.metrics.guard import decision_for, decisions_for, skipped

_EMPTY = "empty answer or ground truth"


def compute_semantic_similarity(a_vec: np.ndarray, b_vec: np.ndarray) -> float:
    """``min(max(0, cos), 1) * 100`` for L2-normalised vectors (unrounded: rounding is for display).

    The upper clip only absorbs float32 error: a vector with itself can give a cosine of 1 + 1e-7.

    >>> compute_semantic_similarity(np.array([0.6, 0.8]), np.array([1.0, 0.0]))
    60.0
    >>> compute_semantic_similarity(np.array([1.0, 0.0]), np.array([-1.0, 0.0]))
    0.0
    """
    return min(max(0.0, float(a_vec @ b_vec)), 1.0) * 100.0


def semantic_similarity(answer: str | None, ground_truth: str | None, *, encoder=None,
                        decision: Any = None) -> Score:
    """Cosine of answer and ground-truth sentence embeddings x 100, clipped at 0.

    Empty policy: undetermined for an empty or None answer (reason "empty answer", the row's ``decision``);
    0 when the ground truth is empty or None.

    Examples
    --------
    >>> round(semantic_similarity("The premium is $604 per year.", "It costs $604 a year.").value, 2)
    73.51
    """
    if (guarded := skipped(decision_for(answer, decision), "semantic_similarity")) is not None:
        return guarded
    if not (answer or "").strip() or not (ground_truth or "").strip():
        return Score(0.0, NoEvidence(_EMPTY))
    if encoder is None:
        from evalkit.base.encoders import get_encoder

        encoder = get_encoder()
    v = encoder.encode([answer, ground_truth])
    return Score(compute_semantic_similarity(v[0], v[1]), NoEvidence())


def _pairwise_batch(inputs: Mapping[str, Sequence[Any]], score_pairs, metric: str) -> list[Score]:
    """Score non-empty (answer, ground truth) pairs in one call; an empty answer is undetermined, an empty
    ground truth scores 0, each with a reason."""
    ans, gts = list(inputs["answer"]), list(inputs["ground_truth"])
    idx = [i for i, (a, g) in enumerate(zip(ans, gts)) if (a or "").strip() and (g or "").strip()]
    out = [skipped(d, metric) or Score(0.0, NoEvidence(_EMPTY))
           for d in decisions_for(inputs)]
    for i, v in zip(idx, score_pairs([ans[i] for i in idx], [gts[i] for i in idx]) if idx else []):
        out[i] = Score(v, NoEvidence())
    return out


def semantic_similarity_batch(inputs: Mapping[str, Sequence[Any]], params: Mapping[str, Any] | None = None,
                              resources: Any = None) -> list[Score]:
    enc = resources.encoder

    def pairs(a, g):
        v = enc.encode([*a, *g])  # one call: a text shared by answers and references is encoded once
        va, vg = v[:len(a)], v[len(a):]
        return [compute_semantic_similarity(x, y) for x, y in zip(va, vg)]

    return _pairwise_batch(inputs, pairs, "semantic_similarity")


def _f1_x100(f: float) -> float:
    """F1 on the metric's 0..100 scale, clipped at both ends (one rule, as ``semantic_similarity`` clips its cosine).

    Without baseline rescaling BERTScore's F1 is a mean of cosines and can fall below 0 when the answer's tokens
    point away from the reference's (2 of 2,000 HaluEval QA dev rows: -0.22): that is no similarity, 0 here.
    bert-score computes in float32, so identical texts can give 1 + 1e-7: 100 here.

    >>> _f1_x100(-0.2216), _f1_x100(0.5), _f1_x100(1.0000001)
    (0.0, 50.0, 100.0)
    """
    return min(max(float(f), 0.0), 1.0) * 100.0


def bert_score_f1(answer: str | None, ground_truth: str | None, *, scorer=None, decision: Any = None) -> Score:
    """BERTScore F1 x 100 of the answer against the ground truth (the value of the ``bert-score`` package's
    ``score`` on the pair alone; the model is configurable, by default the packaged MiniLM, layer 6, no baseline
    rescaling), clipped to 0..100: a negative F1 is 0 (:func:`_f1_x100`).

    Empty policy: undetermined for an empty or None answer (reason "empty answer", the row's ``decision``);
    0 when the ground truth is empty or None.

    Examples
    --------
    >>> round(bert_score_f1("The premium is $604 per year.", "It costs $604 a year.").value, 2)
    73.84
    """
    if (guarded := skipped(decision_for(answer, decision), "bert_score_f1")) is not None:
        return guarded
    if not (answer or "").strip() or not (ground_truth or "").strip():
        return Score(0.0, NoEvidence(_EMPTY))
    if scorer is None:
        from evalkit.base.encoders import get_bert_scorer

        scorer = get_bert_scorer()
    return Score(_f1_x100(scorer.f1([answer], [ground_truth])[0]), NoEvidence())


def bert_score_batch(inputs: Mapping[str, Sequence[Any]], params: Mapping[str, Any] | None = None,
                     resources: Any = None) -> list[Score]:
    sc = resources.bert_scorer
    return _pairwise_batch(inputs, lambda a, g: [_f1_x100(f) for f in sc.f1(a, g)], "bert_score_f1")


# ---------------------------------------------------------------------------------------------------------------
# The declarations: this module's metrics as the registry lists them (evalkit.metrics collects METRICS)
# ---------------------------------------------------------------------------------------------------------------
# the publications these metrics follow (their methods and the model they run by default)
MINILM = """@inproceedings{wang2020minilm,
  title = {{MiniLM}: Deep Self-Attention Distillation for Task-Agnostic Compression of Pre-Trained Transformers},
  author = {Wang, Wenhui and Wei, Furu and Dong, Li and Bao, Hangbo and Yang, Nan and Zhou, Ming},
  booktitle = {Advances in Neural Information Processing Systems},
  volume = {33},
  pages = {5776--5788},
  year = {2020}
}"""
REFERENCES = {
    "reimers2019sbert": """@inproceedings{reimers2019sbert,
  title = {Sentence-{BERT}: Sentence Embeddings using {S}iamese {BERT}-Networks},
  author = {Reimers, Nils and Gurevych, Iryna},
  booktitle = {Proceedings of the 2019 Conference on Empirical Methods in Natural Language Processing and the 9th International Joint Conference on Natural Language Processing (EMNLP-IJCNLP)},
  pages = {3982--3992},
  year = {2019},
  address = {Hong Kong, China},
  publisher = {Association for Computational Linguistics},
  doi = {10.18653/v1/D19-1410}
}""",
    "zhang2020bertscore": """@inproceedings{zhang2020bertscore,
  title = {{BERTScore}: Evaluating Text Generation with {BERT}},
  author = {Zhang, Tianyi and Kishore, Varsha and Wu, Felix and Weinberger, Kilian Q. and Artzi, Yoav},
  booktitle = {International Conference on Learning Representations (ICLR)},
  year = {2020},
  url = {https://openreview.net/forum?id=SkeHuCVFDr}
}""",
    "wang2020minilm": MINILM,
}
METRICS = (
    Metric("semantic_similarity", semantic_similarity, needs=("answer", "ground_truth"), better="higher",
           range=(0.0, 100.0), batch=semantic_similarity_batch, resources=("encoder",),
           details=NoEvidence, family="embedding",
           formula="cosine of answer and ground-truth embeddings x 100, clipped at 0",
           empty_policy="undetermined for an empty answer; 0 for an empty ground truth",
           cites=("reimers2019sbert", "wang2020minilm")),
    Metric("bert_score_f1", bert_score_f1, needs=("answer", "ground_truth"), better="higher", range=(0.0, 100.0),
           batch=bert_score_batch, resources=("bertscore",), details=NoEvidence,
           family="embedding",
           formula="BERTScore F1 x 100 (bert-score; packaged MiniLM by default)",
           empty_policy="undetermined for an empty answer; 0 for an empty ground truth",
           cites=("zhang2020bertscore", "wang2020minilm")),
)

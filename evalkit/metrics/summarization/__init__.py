"""Summary scorers: Twin-Lock and Judge-Lock, 0..10 per metric, on a summary (the answer) of its article
(the joined contexts).

* :mod:`.arithmetic` -- pure scoring of labels: rules, caps, rounding and bands (:func:`twin_lock`,
  :func:`judge_lock`); a malformed label is a :class:`LabelError`, reported as that metric's error.
* :mod:`.labels_offline` -- :class:`OfflineLabeler`, deterministic labels with no network.
* :mod:`.labels_judge` -- :class:`JudgeLabeler`, labels from the configured LLM judge.
* :mod:`.scorers` -- the registry's entry points (:func:`twin_lock_score`, :func:`judge_lock_score`, their
  batch forms) and :func:`make_labeler`.

Examples
--------
>>> from evalkit.metrics.summarization import band, round_half_up
>>> band(round_half_up(7.995))
'good'
"""
from evalkit.metrics.summarization.arithmetic import (BANDS, ORDER, JudgeLockContext, LabelError, alignment_raw, band, bias_tox_raw,
                         claim_fraction, coverage_prf, harmonic_mean, judge_lock, overall, overlap_band, qag_mean,
                         round_half_up, segment_overlaps, severity_of, split_segments, twin_lock)
from evalkit.metrics.summarization.labels_judge import JudgeLabeler
from evalkit.metrics.summarization.labels_offline import OfflineLabeler, bias_lexicon, central_sentences, lexical_segments, word_recall
from evalkit.metrics.summarization.scorers import (PROVIDERS, SCORE_KEYS, judge_lock_batch, judge_lock_score, make_labeler, twin_lock_batch,
                      twin_lock_score)

__all__ = ["BANDS", "ORDER", "PROVIDERS", "SCORE_KEYS", "JudgeLabeler", "JudgeLockContext", "LabelError",
           "OfflineLabeler", "alignment_raw", "band", "bias_lexicon", "bias_tox_raw", "central_sentences",
           "claim_fraction", "coverage_prf", "harmonic_mean", "judge_lock", "judge_lock_batch", "judge_lock_score",
           "lexical_segments", "make_labeler", "overall", "overlap_band", "qag_mean", "round_half_up",
           "segment_overlaps", "severity_of", "split_segments", "twin_lock", "twin_lock_batch", "twin_lock_score",
           "word_recall"]

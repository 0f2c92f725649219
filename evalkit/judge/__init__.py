"""The LLM judge layer: one small interface, an OpenAI-compatible client, a persistent cache,
versioned prompts, a scripted loopback server for tests, and a ragas adapter (``ragas`` extra)."""
from .client import (NOT_CONFIGURED, Judge, JudgeConfig, JudgeError, JudgeNotConfigured, JudgeReply, OpenAIJudge,
                     make_judge)
from .prompts import Prompt, load_prompts, prompts_sha256

__all__ = ["Judge", "JudgeConfig", "JudgeError", "JudgeNotConfigured", "JudgeReply", "OpenAIJudge", "make_judge",
           "Prompt", "load_prompts", "prompts_sha256", "NOT_CONFIGURED"]

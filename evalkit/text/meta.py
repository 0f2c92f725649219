"""Meta sentences: what an answer says about itself or its source, not about the world.

LLM summaries often open with a preamble ("Here is a concise summary of the passage:") or frame their
content ("The passage discusses ..."). Neither is a claim a document can support, so the grounding detector
drops a pure preamble and scores only what follows a frame.

Examples
--------
>>> meta_prefix_length("Here is a concise summary of the article:")
41
>>> s = "The passage discusses the merger of two banks."
>>> s[meta_prefix_length(s):]
'the merger of two banks.'
>>> meta_prefix_length("The bank merged with its rival.")
0
>>> s = "Here is a summary of the passage: the bank merged."
>>> s[meta_prefix_length(s):]
'the bank merged.'
"""
from __future__ import annotations

import re

_SOURCE = (r"(?:passage|text|article|document|story|report|conversation|dialogue|dialog|transcript|email|e-mail|"
           r"call|podcast|episode|meeting|paper|discussion|excerpt|summary|speaker|author|call transcript|news)")
_FRAME_VERBS = (r"(?:discusses|discussed|describes|described|is about|was about|talks about|talked about|covers|"
                r"explains|highlights|focuses on|focused on|provides|presents|outlines|mentions|summarizes|"
                r"summarises|reports|reports on|details|revolves around|centers on|centres on|deals with|"
                r"concerns|addresses|examines|explores|introduces|includes)")
# "Here is a (concise|brief|short) summary (of the passage):", "Sure! Here's the summary:", "Summary:"
_PREAMBLE = re.compile(
    r"^\s*(?:(?:sure|certainly|okay|ok)[!,.]?\s*)?(?:here\s+is|here's|here\s+are|below\s+is|the\s+following\s+is)"
    r"\s+(?:a|an|the|my)?\s*(?:\w+\s+){0,3}?(?:summary|summaries|overview|recap|synopsis|tl;?dr)\b[^:.!]*[:.!]?\s*$"
    r"|^\s*(?:summary|tl;?dr|in summary|to summarize|to summarise)\s*[:.]?\s*$", re.I)
# the same preamble ending in a colon, with the content after it in the same sentence
_PREAMBLE_HEAD = re.compile(
    r"^\s*(?:(?:sure|certainly|okay|ok)[!,.]?\s*)?(?:here\s+is|here's|here\s+are|below\s+is|the\s+following\s+is)"
    r"\s+(?:a|an|the|my)?\s*(?:\w+\s+){0,3}?(?:summary|summaries|overview|recap|synopsis)\b[^:.!]{0,80}:\s*"
    r"|^\s*(?:summary|tl;?dr|in summary|to summarize|to summarise)\s*:\s*", re.I)
_FRAME = re.compile(
    rf"^\s*(?:in\s+(?:this|the)\s+{_SOURCE},?\s+)?(?:the|this)\s+(?:\w+\s+)?{_SOURCE}\s+{_FRAME_VERBS}\s+(?:that\s+|how\s+)?"
    rf"|^\s*(?:in\s+(?:this|the)\s+{_SOURCE},?\s+)|^\s*(?:according\s+to\s+the\s+{_SOURCE},?\s+)", re.I)


def meta_prefix_length(sentence: str) -> int:
    """How many leading characters of ``sentence`` are about the answer or its source, not the world.

    The whole length for a pure preamble ("Here is a concise summary:"), the frame's length for a framed
    sentence ("The passage discusses " of "The passage discusses the merger"), else 0.
    """
    if _PREAMBLE.match(sentence):
        return len(sentence)
    head = _PREAMBLE_HEAD.match(sentence)
    start = head.end() if head else 0
    m = _FRAME.match(sentence[start:])
    return start + (m.end() if m else 0)

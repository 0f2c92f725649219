"""Text from the data made safe inside Markdown: one escaper for every Markdown a notebook or report renders."""
from __future__ import annotations

from typing import Any


def quote(text: Any, limit: int = 400) -> str:
    """``text`` from the data (a system's name, an answer) safe inside Markdown that is rendered to HTML:
    HTML escaped (nbconvert renders Markdown outputs without sanitising), Markdown's and TeX's characters
    escaped (``$604 and $40`` is not a formula), line breaks as spaces, cut at ``limit`` characters.

    >>> print(quote("<img src=x onerror=alert(1)> costs $604_*"))
    &lt;img src=x onerror=alert\\(1\\)&gt; costs \\$604\\_\\*
    """
    import html
    import re

    s = " ".join(str("" if text is None else text).split())
    cut = s if len(s) <= limit else s[:limit].rstrip() + "…"
    return re.sub(r"([\\`*_{}\[\]()#+\-!|>~$])", r"\\\1", html.escape(cut, quote=False))

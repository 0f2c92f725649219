"""Text from the data made safe inside Markdown: one escaper for every Markdown a notebook or report renders."""
from __future__ import annotations

from typing import Any


# MathJax's classes for "not maths here": version 2's and 3's default ignoreHtmlClass (JupyterLab 4 runs 3, which
# reads only the second), as pandas' display.html.use_mathjax=False writes them
NO_MATHS = "tex2jax_ignore mathjax_ignore"


def quote(text: Any, limit: int = 400) -> str:
    """``text`` from the data (a system's name, an answer) safe inside Markdown that is rendered to HTML:
    HTML escaped (nbconvert renders Markdown outputs without sanitising), Markdown's and TeX's characters
    escaped, line breaks as spaces, cut at ``limit`` characters.

    A text with a dollar sign is also wrapped in a span of class ``NO_MATHS``: JupyterLab's Markdown turns ``\\$``
    into ``$`` and then runs MathJax over the page, which set "from $1.107 billion to $1.2 billion" as italic
    maths; MathJax skips those classes (the ones pandas' tables use).

    >>> print(quote("<img src=x onerror=alert(1)> costs 604_*"))
    &lt;img src=x onerror=alert\\(1\\)&gt; costs 604\\_\\*
    >>> print(quote("from $1.107 billion to $1.2 billion"))
    <span class="tex2jax_ignore mathjax_ignore">from \\$1.107 billion to \\$1.2 billion</span>
    """
    import html
    import re

    s = " ".join(str("" if text is None else text).split())
    cut = s if len(s) <= limit else s[:limit].rstrip() + "…"
    out = re.sub(r"([\\`*_{}\[\]()#+\-!|>~$])", r"\\\1", html.escape(cut, quote=False))
    return f'<span class="{NO_MATHS}">{out}</span>' if "$" in cut else out


def markdown_code(text: str) -> str:
    r"""``text`` as a Markdown code span that shows it literally, whatever it holds: fenced by one backtick more
    than its longest run of backticks (CommonMark's rule: a span closes only on a run of the same length), padded
    when it starts or ends with a backtick, on one line. Inside a code span ``<img ...>`` is text, not HTML.

    >>> markdown_code("rag-a"), markdown_code("a` <img src=x onerror=alert(5)>")
    ('`rag-a`', '``a` <img src=x onerror=alert(5)>``')
    >>> markdown_code("``x`")
    '``` ``x` ```'
    """
    import re

    text = re.sub(r"\s*[\r\n]+\s*", " ", str(text))
    fence = "`" * (max((len(run) for run in re.findall(r"`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"

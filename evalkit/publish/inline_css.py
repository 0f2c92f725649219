"""Inline a small scoped stylesheet into the HTML evalkit generates, so a view keeps its look where ``<style>``
is stripped: an untrusted notebook in JupyterLab, an e-mail, a sanitised page.

Only what evalkit's own stylesheets use is supported: comma-separated selectors made of compounds ``tag``,
``.class``, ``tag.class`` (several classes allowed), joined by descendant spaces; declarations of matching rules
are written into each element's ``style`` attribute in the stylesheet's order (later rules win, as in the
stylesheet, which lists the more specific rules later), before any style the element already had.

The HTML must be evalkit's own: text and attribute values escaped, so ``<`` and ``>`` only delimit tags.

>>> inline('<div class="box"><p>hi <b class="x">there</b></p></div>', ".box{color:red} .box b.x{font-weight:700}")
'<div class="box" style="color:red"><p>hi <b class="x" style="font-weight:700">there</b></p></div>'
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

_TAG = re.compile(r"<(/?)([A-Za-z][A-Za-z0-9]*)([^>]*)>")
_CLASS = re.compile(r'\bclass="([^"]*)"')
_STYLE = re.compile(r'\sstyle="([^"]*)"')
_VOID = frozenset("area base br col embed hr img input link meta source track wbr".split())


@dataclass(frozen=True)
class _Compound:
    tag: str | None
    classes: frozenset[str]

    def matches(self, tag: str, classes: frozenset[str]) -> bool:
        return (self.tag is None or self.tag == tag) and self.classes <= classes


def _compound(text: str) -> _Compound:
    m = re.fullmatch(r"([a-z0-9]*)((?:\.[A-Za-z0-9_-]+)*)", text.strip())
    if m is None:
        raise ValueError(f"unsupported selector part {text!r}")
    return _Compound(m.group(1) or None, frozenset(c for c in m.group(2).split(".") if c))


@lru_cache(maxsize=8)
def parse(css: str) -> tuple[tuple[tuple[_Compound, ...], str], ...]:
    """(selector compounds, declarations) for every selector of every rule, in order."""
    rules = []
    for sel, body in re.findall(r"([^{}]+)\{([^}]*)\}", re.sub(r"/\*.*?\*/", "", css, flags=re.S)):
        # double quotes (font names) would end the style attribute: CSS takes single ones alike
        decl = ";".join(d.strip() for d in body.replace("\n", " ").replace('"', "'").split(";") if d.strip())
        for one in sel.split(","):
            parts = [p for p in one.split() if p]
            if parts and "*" not in parts:
                rules.append((tuple(_compound(p) for p in parts), decl))
    return tuple(rules)


def _matches(chain: tuple[_Compound, ...], stack: list[tuple[str, frozenset[str]]]) -> bool:
    """The last compound matches the element (the stack's top), the others its ancestors in order."""
    if not chain[-1].matches(*stack[-1]):
        return False
    k = len(chain) - 2
    for tag, classes in reversed(stack[:-1]):
        if k < 0:
            break
        if chain[k].matches(tag, classes):
            k -= 1
    return k < 0


def inline(html: str, css: str) -> str:
    """``html`` with ``css``'s declarations written into each matching element's ``style`` attribute."""
    rules = parse(css)
    stack: list[tuple[str, frozenset[str]]] = []
    out, at = [], 0
    for m in _TAG.finditer(html):
        out.append(html[at:m.start()])
        at = m.end()
        closing, tag, attrs = m.group(1), m.group(2).lower(), m.group(3)
        if closing:
            while stack and stack.pop()[0] != tag:
                pass
            out.append(m.group(0))
            continue
        cls = _CLASS.search(attrs)
        stack.append((tag, frozenset(cls.group(1).split()) if cls else frozenset()))
        decls = [d for chain, d in rules if _matches(chain, stack)]
        if tag in _VOID or attrs.rstrip().endswith("/"):
            stack.pop()
        if decls:
            own = _STYLE.search(attrs)
            style = ";".join(decls + ([own.group(1)] if own else []))
            attrs = (_STYLE.sub("", attrs, count=1) if own else attrs).rstrip("/").rstrip()
            out.append(f'<{tag}{attrs} style="{style}"{" /" if m.group(3).rstrip().endswith("/") else ""}>')
        else:
            out.append(m.group(0))
    out.append(html[at:])
    return "".join(out)

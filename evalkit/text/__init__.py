"""Text primitives shared by every metric: tokenisation, stop words, numbers, dates, names, declining answers.

One module per concern (``tokens``, ``numbers``, ``dates``, ``names``, ``abstention``); this package
re-exports them, so ``from evalkit.text import extract_numbers`` keeps working.

There is exactly one number normaliser (:func:`extract_numbers`), one date
normaliser (:func:`extract_dates`), one name matcher (:func:`normalize_entity`,
:func:`find_entity`), one abstention detector (:func:`declines_to_answer`) and one row
decision (:func:`decide_answer`: empty, declining, language) in evalkit; the
hallucination anchors, the grounding detector, the reference metrics, the fact
checks and the verdict all call these, so "$1,200", "Norwick Pumps'" and
"I don't know" mean the same thing everywhere. Their reading rules are pinned by
the golden table ``tests/golden/normaliser.yaml``.

Examples
--------
>>> word_tokens("The premium is $1,200.")
['the', 'premium', 'is', '1,200']
>>> [str(n.value) for n in extract_numbers("$1,200.00 and -0.133%")]
['1200', '-0.133']
>>> extract_dates("signed on 3 March 2021")[0].key
(2021, 3, 3)
"""
from __future__ import annotations

from evalkit.text.tokens import (fold_apostrophes, Tokenizer, RegexTokenizer, NLTKTokenizer, TOKENIZERS, get_tokenizer,
                     word_tokens, stop_words, content_words, ngrams, normalize_ws, snippet, phrase_pattern,
                     contains_phrase, sentences, is_heading, stem, stems)
from evalkit.text.numbers import Number, extract_numbers, number_keys
from evalkit.text.dates import DateMention, extract_dates, date_supported, normalize_time, extract_times
from evalkit.text.names import normalize_entity, find_entity
from evalkit.text.abstention import default_lexicons, declines_to_answer, AnswerDecision, decide_answer, DECISION_COLUMNS
from evalkit.text.language import LanguageGuess, detect_language

__all__ = ["fold_apostrophes", "Tokenizer", "RegexTokenizer", "NLTKTokenizer", "TOKENIZERS", "get_tokenizer",
           "word_tokens", "stop_words", "content_words", "ngrams", "normalize_ws", "snippet", "phrase_pattern",
           "contains_phrase", "sentences", "is_heading", "stem", "stems", "Number", "extract_numbers", "number_keys",
           "DateMention",
           "extract_dates", "date_supported", "normalize_time", "extract_times", "normalize_entity", "find_entity",
           "default_lexicons", "declines_to_answer", "AnswerDecision", "decide_answer", "DECISION_COLUMNS",
           "LanguageGuess", "detect_language"]

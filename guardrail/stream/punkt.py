"""Punkt without downloads: the shipped abbreviation lists and a tokenizer built from them.

nltk cannot fetch its trained ``punkt`` data here, and the segmenter must not depend
on statistics anyway (its decisions must not depend on how the text was chunked), so
the tokenizer knows only ``guardrail/data/punkt_abbreviations.txt``.
"""

from __future__ import annotations

import functools
import re
from importlib import resources

from nltk.tokenize.punkt import PunktParameters, PunktSentenceTokenizer

__all__ = ["build_punkt", "final_abbreviations", "load_abbreviations"]


class _NoInsertDict(dict):
    """``ortho_context`` that answers 0 for unseen words without storing them.

    Punkt's own ``defaultdict`` inserts every word it is asked about, which would
    grow a tokenizer shared by all streams without bound.
    """

    def __missing__(self, key: str) -> int:
        return 0


def _read_list(name: str) -> frozenset[str]:
    text = (resources.files("guardrail") / "data" / name).read_text(encoding="utf-8")
    return frozenset(line.strip().lower() for line in text.splitlines()
                     if line.strip() and not line.lstrip().startswith("#"))


@functools.lru_cache(maxsize=None)
def load_abbreviations() -> frozenset[str]:
    """The shipped abbreviation list (``guardrail/data/punkt_abbreviations.txt``)."""
    return _read_list("punkt_abbreviations.txt")


@functools.lru_cache(maxsize=None)
def final_abbreviations() -> frozenset[str]:
    return _read_list("punkt_final_abbreviations.txt")


@functools.lru_cache(maxsize=8)
def build_punkt(abbreviations: frozenset[str]) -> PunktSentenceTokenizer:
    """A Punkt tokenizer from an abbreviation list alone: nothing is downloaded.

    Without collocations, sentence starters or orthographic statistics, Punkt's
    decision at a period depends only on the word before it and the first
    character of the word after it, which is what lets the segmenter decide as
    soon as that character arrives.  Tokenizers are stateless, hence shared.
    """
    params = PunktParameters()
    params.abbrev_types = set(abbreviations)
    params.ortho_context = _NoInsertDict()
    return PunktSentenceTokenizer(params)


_LEADS_ON = re.compile(  # a line ending so goes on into the next one
    r"(?:[,;:\-\u2013\u2014(/&]|\b(?:a|an|the|and|or|but|nor|of|by|to|in|on|at|for|from|with|"
    r"as|than|that|which|who|whose|is|are|was|were|be|been|his|her|its|their|our|your|my|"
    r"this|these|those|into|onto|via|per|not|no|if|so))\s*$", re.I)


def line_ends(before: str, first: str) -> bool:
    """Does a plain line break end a statement?  ``before``: the end of the line,
    ``first``: the next line's first character.  Yes when that is a capital letter and
    the line does not lead on into it (a comma, "by", "the")."""
    return first.isalpha() and first.isupper() and not _LEADS_ON.search(before)

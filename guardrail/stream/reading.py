"""``AnswerReader``: the upstream's answer (choice 0) cut into sentences, and the answer
as its checks read it.

    feed(text) / flush()   -> [Sentence]: finished sentences, placed in the whole answer
    read(sentence)         the sentence as its check reads it
    reads                  the answer as checks read it (a ``TextLog``)
    values(start, end)     a JSON answer's character kinds there (``stream.jsontext``)

A plain answer is read as it is.  A JSON answer (``response_format`` ``json_object`` or
``json_schema``) is read as its string values' text at the same offsets, the rest blank
(``JsonValues.feed``), and each value ends a sentence; the sentences keep the answer's
own text, syntax included, since that is what the client is sent.  No I/O.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Callable, Optional

from guardrail.stream.jsontext import JsonValues
from guardrail.stream.settings import Segmenter
from guardrail.stream.textlog import TextLog
from guardrail.types import Sentence

__all__ = ["AnswerReader"]


class AnswerReader:
    def __init__(self, segmenter: Callable[[], Segmenter], json_answer: bool = False):
        self.segmenter = segmenter()
        self.answer = TextLog()     # what the upstream said
        self._json = JsonValues() if json_answer else None
        self.reads = TextLog() if self._json else self.answer
        self._origin = (0, 0)       # answer offset and index of the segmenter's start
        self._count = 0             # sentences given out

    def feed(self, text: str) -> list[Sentence]:
        if self._json is None:
            self.answer.append(text)
            return self._placed(self.segmenter.feed(text)) if text else []
        view, ends = self._json.feed(text)
        out, at = [], 0
        for end in [*ends, len(text)]:
            self.answer.append(text[at:end])
            self.reads.append(view[at:end])
            out += self._placed(self.segmenter.feed(view[at:end]))
            out += self.flush() if end in ends else []
            at = end
        return out

    def flush(self) -> list[Sentence]:
        """The rest of the text fed as sentences.  Feeding may go on (the next part of
        a non-streaming answer): the segmenter starts over, its offsets and indices
        then count from here."""
        out = self._placed(self.segmenter.flush())
        self._origin = (len(self.reads), self._count)
        return out

    def _placed(self, sentences: list[Sentence]) -> list[Sentence]:
        """The segmenter's sentences at their place in the whole answer, with the
        answer's own text (where the segmenter read a JSON answer's values)."""
        at, index = self._origin
        if at or index:
            sentences = [replace(s, index=s.index + index, start=s.start + at,
                                 end=s.end + at) for s in sentences]
        if self._json is not None:
            sentences = [replace(s, text=self.answer.slice(s.start, s.end))
                         for s in sentences]
        self._count += len(sentences)
        return sentences

    def read(self, s: Sentence) -> str:
        return self.reads.slice(s.start, s.end) if self._json else s.text

    def values(self, start: int, end: int) -> Optional[bytes]:
        """None for a plain answer."""
        return None if self._json is None else self._json.of(start, end)

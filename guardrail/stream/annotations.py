"""Citations of an answer whose text guardrail changed: their offsets moved to the text
the client gets.

    part_pieces(texts, verdicts)   each part's sentences as (original, released) pairs
    moved(annotations, pieces)     the annotations with start/end moved to the released
                                   text; one over a sentence that changed is dropped

A ``url_citation`` (chat: ``message.annotations[*].url_citation``; the Responses API:
``output_text.annotations[*]``) points at ``text[start_index:end_index]``.  Once a
sentence before it is redacted those offsets point at other text, or past the end; a
citation of a sentence that was itself redacted or rewritten cites what the client no
longer reads.  One without offsets (a file citation) is kept as it is.  No I/O.
"""

from __future__ import annotations

import copy
from typing import Any, Optional, Sequence

from guardrail.types import SentenceVerdict

__all__ = ["moved", "part_pieces"]

Pieces = list[tuple[str, str]]


def part_pieces(texts: Sequence[str], verdicts: Sequence[SentenceVerdict]) -> list[Pieces]:
    """The sentences of each of ``texts`` (an answer's parts, in order: a sentence never
    spans two) as (original, released); a part past a block has none."""
    out: list[Pieces] = [[] for _ in texts]
    part, room = 0, len(texts[0]) if texts else 0
    for v in verdicts:
        while part < len(texts) - 1 and room <= 0:
            part += 1
            room = len(texts[part])
        out[part].append((v.original, v.released))
        room -= len(v.original)
    return out


def _offsets(annotation: Any) -> Optional[dict]:
    """The object holding the annotation's ``start_index`` and ``end_index``."""
    if not isinstance(annotation, dict):
        return None
    for holder in (annotation, annotation.get(annotation.get("type", ""))):
        if isinstance(holder, dict) and isinstance(holder.get("start_index"), int) \
                and isinstance(holder.get("end_index"), int):
            return holder
    return None


def moved(annotations: Any, pieces: Pieces) -> Any:
    if not isinstance(annotations, list) or all(o == r for o, r in pieces):
        return annotations
    spans, at, to = [], 0, 0  # (original start, end, released start, changed)
    for original, released in pieces:
        spans.append((at, at + len(original), to, original != released))
        at, to = at + len(original), to + len(released)
    out = []
    for a in annotations:
        where = _offsets(a)
        if where is None:
            out.append(a)
            continue
        start, end = where["start_index"], where["end_index"]
        over = [s for s in spans if s[0] < end and s[1] > start] or \
            [s for s in spans if s[0] <= start <= s[1]][:1]
        if not over or any(changed for *_, changed in over):
            continue  # it cites text the client does not get
        shift = over[0][2] - over[0][0]
        a = copy.deepcopy(a)
        where = _offsets(a)
        where["start_index"], where["end_index"] = start + shift, end + shift
        out.append(a)
    return out

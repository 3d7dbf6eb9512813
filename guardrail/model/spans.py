"""Token probabilities -> spans of the response."""

from __future__ import annotations

from typing import Sequence

from guardrail.types import Span


def merge_spans(response: str, offsets: Sequence[tuple[int, int]], probs: Sequence[float],
                threshold: float) -> tuple[Span, ...]:
    """Merge consecutive tokens with probability >= ``threshold`` into spans.

    Offsets are character ranges into ``response`` in token order.  A span runs from
    its first token's start to its last token's end (so the whitespace between words
    of one span is inside it); its confidence is the mean probability of its tokens.
    """
    spans: list[Span] = []
    run: list[int] = []

    def close() -> None:
        if run:
            s, e = offsets[run[0]][0], offsets[run[-1]][1]
            conf = sum(probs[i] for i in run) / len(run)
            spans.append(Span(int(s), int(e), response[s:e], float(conf)))
            run.clear()

    for i, p in enumerate(probs):
        if p >= threshold:
            run.append(i)
        else:
            close()
    close()
    return tuple(spans)

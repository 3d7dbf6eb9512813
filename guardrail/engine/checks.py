"""Helpers every engine shares: window selectors per priority, left-context trimming,
re-indexing a Detection computed on a slice of the response."""

from __future__ import annotations

import dataclasses
from typing import Any

from guardrail.config import SchedulerConfig
from guardrail.types import Detection, Priority


def window_selectors(cfg: SchedulerConfig) -> "dict[Priority, Any]":
    """The window selector of each check priority (``in_flight_windows`` /
    ``final_windows``), sharing one BM25 index cache.  Imports the detector package."""
    from guardrail.model.windows import IndexCache, make_selector

    cache = IndexCache()
    return {Priority.IN_FLIGHT: make_selector(cfg.in_flight_windows, cfg.in_flight_top_k, cache),
            Priority.END_OF_STREAM: make_selector(cfg.final_windows, cfg.final_top_k, cache)}


def trim_left(response: str, start: int, budget: int) -> int:
    """Where the detector input begins: at most ``budget`` characters before ``start``,
    moved forward to a word boundary so the model never sees half a word."""
    cut = start - budget
    if cut <= 0:
        return 0
    while cut < start and not response[cut - 1].isspace():
        cut += 1
    return cut


def shift_detection(det: Detection, full_response: str, offset: int) -> Detection:
    """Re-index a Detection computed on ``full_response[offset:...]`` into the full text."""
    if offset == 0 and det.response == full_response:
        return det
    return dataclasses.replace(
        det, response=full_response, spans=tuple(s.shifted(offset) for s in det.spans),
        token_offsets=tuple((s + offset, e + offset) for s, e in det.token_offsets))

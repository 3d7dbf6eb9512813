"""Helpers every engine shares: window selectors per priority, which exit runs, a
request's target range, and re-indexing a Detection computed on a slice of the
response."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Optional

from guardrail.config import SchedulerConfig
from guardrail.errors import InputError
from guardrail.types import CheckRequest, Detection, Priority


@dataclass(frozen=True)
class Selectors:
    """The window selector of each check priority (``in_flight_windows`` /
    ``final_windows``), and two bounds on the end-of-stream one: ``busy_final`` from
    ``busy_at`` queued sequences on (``final_top_k_under_load`` from the depth ladder's
    first step), and the windows the model runs within ``budget_s``
    (``final_budget_s``) at ``window_work`` layer-tokens a window, never fewer than
    ``least``."""

    in_flight: Any
    final: Any
    busy_final: Any = None
    busy_at: Optional[int] = None
    budget_s: Optional[float] = None
    window_work: int = 0
    least: int = 1
    cache: Any = None

    def __getitem__(self, priority: Priority) -> Any:
        return self.in_flight if priority == Priority.IN_FLIGHT else self.final

    def pick(self, priority: Priority, queued: int, rate: Optional[float] = None,
             drain_s: float = 0.0) -> Any:
        """The selector of a check of ``priority`` prepared while ``queued`` sequences
        wait (in flight and end of stream: streams that end together queue each
        other's passes) and the model runs ``rate`` layer-tokens a second with
        ``drain_s`` seconds of work queued ahead."""
        if priority == Priority.IN_FLIGHT:
            return self.in_flight
        if self.busy_at is not None and queued >= self.busy_at:
            return self.busy_final
        k = self.within_budget(rate, drain_s)
        if k is None or k >= (getattr(self.final, "k", None) or k + 1):
            return self.final
        return capped(self.final, k, self.cache)

    def within_budget(self, rate: Optional[float], drain_s: float = 0.0) -> Optional[int]:
        """Windows an end-of-stream pass reads in what is left of ``budget_s`` after
        ``drain_s`` (None: no budget, or no rate to plan with)."""
        if self.budget_s is None or not rate or self.window_work <= 0:
            return None
        return max(self.least, int(max(0.0, self.budget_s - drain_s) * rate / self.window_work))


def window_selectors(cfg: SchedulerConfig, detector: Any = None) -> Selectors:
    """The selectors of ``cfg``, sharing one BM25 index cache; ``detector``'s depth and
    sequence length price a window for ``final_budget_s``.  Imports the detector
    package."""
    from guardrail.model.bm25 import IndexCache

    cache, k = IndexCache(), cfg.final_top_k_under_load
    final = final_selector(cfg, cache)
    busy = k is not None and bool(cfg.depth_ladder) and (getattr(final, "k", None) or k + 1) > k
    work = getattr(detector, "max_length", 0) * getattr(detector, "n_layers", 0)
    return Selectors(in_flight_selector(cfg, cache), final,
                     capped(final, k, cache) if busy else None,
                     cfg.depth_ladder[0] if busy else None,
                     cfg.final_budget_s, work, k or 1, cache)


def in_flight_selector(cfg: SchedulerConfig, cache: Any) -> Any:
    """``in_flight_windows``: with ``blocks``, one window packed from the most relevant
    passages of a context longer than ``in_flight_top_k`` windows (a shorter one is
    read whole, as ``topk`` reads it)."""
    from guardrail.model.windows import TopBlocks, make_selector

    if cfg.in_flight_windows == "blocks":
        return TopBlocks(1, whole=cfg.in_flight_top_k, tokens=cfg.in_flight_context_tokens,
                         cache=cache)
    return make_selector(cfg.in_flight_windows, cfg.in_flight_top_k, cache)


def final_selector(cfg: SchedulerConfig, cache: Any) -> Any:
    """``final_windows``, with ``all`` and ``own`` bounded by ``final_max_windows`` (the
    top-k selector scores every window of a context that has no more than k)."""
    from guardrail.model.windows import OwnWindows, make_selector

    if cfg.final_windows == "own":
        return OwnWindows(cfg.final_sentence_windows, cfg.final_max_windows, cache=cache)
    if cfg.final_windows == "all" and cfg.final_max_windows is not None:
        return make_selector("topk", cfg.final_max_windows, cache)
    return make_selector(cfg.final_windows, cfg.final_top_k, cache)


def capped(selector: Any, k: int, cache: Any) -> Any:
    """``selector`` reading at most ``k`` windows: an ``own`` selector keeps judging
    each sentence by its own windows; any other becomes the top ``k``."""
    from guardrail.model.windows import make_selector

    if hasattr(selector, "capped"):
        return selector.capped(k)
    return make_selector("topk", k, cache)


def target_end(req: CheckRequest) -> int:
    """Where the request's target ends; an ``InputError`` if its range is empty or
    outside the response, or a sentence start in ``blocks`` lies outside it."""
    end = len(req.response) if req.target_end is None else req.target_end
    if not 0 <= req.target_start < end <= len(req.response):
        raise InputError(f"target range [{req.target_start}, {req.target_end}) is empty or "
                         f"outside the response ({len(req.response)} characters)")
    if any(not req.target_start < b < end for b in req.blocks):
        raise InputError(f"sentence starts {list(req.blocks)} are not all inside the target "
                         f"range [{req.target_start}, {end})")
    return end


def shift_detection(det: Detection, full_response: str, offset: int) -> Detection:
    """Re-index a Detection computed on ``full_response[offset:...]`` into the full text."""
    if offset == 0 and det.response == full_response:
        return det
    return dataclasses.replace(
        det, response=full_response, spans=tuple(s.shifted(offset) for s in det.spans),
        token_offsets=tuple((s + offset, e + offset) for s, e in det.token_offsets))


def normal_exit(detector: Any, layer: Optional[int], what: str,
                error: type[Exception] = ValueError) -> Optional[int]:
    """``layer`` as an engine runs it: None (full depth) for None or any layer at or
    past the detector's depth; else it must be one of the detector's exits."""
    if layer is None or layer >= detector.n_layers:
        return None
    if layer not in detector.exit_layers:
        raise error(f"{what}={layer} is not an exit of the detector (exits "
                    f"{list(detector.exit_layers)}, depth {detector.n_layers})")
    return layer


def shallow_exit(detector: Any, cfg: SchedulerConfig) -> Optional[int]:
    """The exit of in-flight checks: ``scheduler.in_flight_exit``, else the detector's
    deepest early exit (None: full depth, for a detector without exits)."""
    layer = cfg.in_flight_exit if cfg.in_flight_exit is not None else \
        max(detector.exit_layers, default=None)
    return normal_exit(detector, layer, "scheduler.in_flight_exit")

"""Which context windows to score for a response.

A response token counts as supported if *any* scored window supports it (the
hallucination probability is the minimum over windows), so scoring fewer windows
can only make the detector stricter, never let more through.  Selection is
pluggable: score all windows (exact), only the first (plain truncation, the
baseline), or the most relevant ones (see ``guardrail.context``).
"""

from __future__ import annotations

from typing import Protocol, Sequence

from guardrail.detector.inputs import PreparedContext, Window


class WindowSelector(Protocol):
    def select(self, context: PreparedContext, windows: Sequence[Window], question: str,
               response: str) -> list[Window]:
        """Return the windows to score (a non-empty subset, in any order)."""
        ...


class AllWindows:
    """Score every window: exact any-window semantics."""

    name = "all"

    def select(self, context, windows, question, response):
        return list(windows)


class FirstWindow:
    """Score only the first window: what truncating the context to the model does."""

    name = "truncate"

    def select(self, context, windows, question, response):
        return [windows[0]]

"""The judge's evidence about one answer's grounding, and the sentences it settles.

The sentence judge never flags a sentence that stands word for word in the grounding
(``ContextEvidence.copied``) or says one of its lines again (``judge.restates``),
whatever the detector says; so once the evidence is built such a sentence needs no
model call.  No I/O: the evidence is built in a thread, once per grounding.
"""

from __future__ import annotations

import asyncio
from typing import Optional

from guardrail.evidence.features import ContextEvidence, SentenceEvidence
from guardrail.evidence.focus import FocusedEvidence, evidence_for
from guardrail.evidence.judge import restates
from guardrail.types import Grounding


class GroundingEvidence:
    """``soon()``: the evidence, built from the first call on; ``settled(...)``: a check
    done without the model (its result None) for a sentence the evidence settles;
    ``take(...)``: the features ``settled`` read for a sentence it did not settle, so
    that the judge does not read them again."""

    def __init__(self, grounding: Grounding):
        self.grounding = grounding
        self._built: Optional["asyncio.Future[ContextEvidence | FocusedEvidence]"] = None
        self._read: dict[tuple[str, str], SentenceEvidence] = {}

    def soon(self) -> "asyncio.Future[ContextEvidence | FocusedEvidence]":
        """Built off the event loop (a large tool result takes tenths of a second)."""
        if self._built is None:
            g = self.grounding
            self._built = asyncio.ensure_future(
                asyncio.to_thread(evidence_for, g.documents, g.question))
            self._built.add_done_callback(lambda f: f.cancelled() or f.exception())
        return self._built

    def take(self, sentence: str, before: str) -> Optional[SentenceEvidence]:
        return self._read.pop((sentence, before), None)

    def cancel(self) -> None:
        if self._built is not None:
            self._built.cancel()  # its thread finishes; nothing waits for it

    def settled(self, sentence: str, before: str, threshold: Optional[float]
                ) -> "Optional[asyncio.Future[None]]":
        """Only once the evidence is built (no sentence waits for it), and never under
        a policy threshold of 0, which flags every sentence."""
        built = self.soon()
        if threshold is not None and threshold <= 0 or not built.done() \
                or built.cancelled() or built.exception() is not None:
            return None
        ev = built.result()
        if not ev.copied(sentence):
            features = ev.features(sentence, before)
            if not restates(features):
                self._read[sentence, before] = features  # the judge's, after the check
                return None
        done = asyncio.get_running_loop().create_future()
        done.set_result(None)
        return done

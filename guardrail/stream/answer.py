"""``AnswerGuard``: checks one answer (choice 0) sentence by sentence.

Shared by the streaming pipeline and the non-streaming path.  ``feed(text)`` segments
and starts a check task for every finished sentence at once (so checks overlap the
upstream); ``judge(i)`` awaits sentence ``i``'s check and applies the policy (maybe
regenerating); a sentence flagged after an earlier flagged one is confirmed by a second
check against the *supported* answer so far (unflagged sentences and verified rewrites),
and rewrites are checked the same way; ``final_pass()`` runs
the full-depth check over the whole original answer; ``report()`` builds the
``guardrail`` object.  Callers judge sentences strictly in index order.
"""

from __future__ import annotations

import asyncio
import bisect
import time
from dataclasses import dataclass, field, replace
from typing import Callable, Optional, Protocol

from guardrail.config import VerificationConfig
from guardrail.config.scheduler import SchedulerConfig
from guardrail.engine.seam import Verifier
from guardrail.errors import Blocked, DetectorError, GuardrailError, InputError
from guardrail.stream.policy import (Assessment, EffectivePolicy, RegenerateRequest,
                                     Regenerator, apply_policy, assess)
from guardrail.stream.segmenter import SentenceSegmenter
from guardrail.types import (DEFAULT_TENANT, Action, CheckRequest, Detection, Grounding,
                             Priority, Sentence, SentenceVerdict)

SEVERITY = (Action.RELEASE, Action.ANNOTATE, Action.REDACT, Action.REGENERATE, Action.BLOCK)


class Segmenter(Protocol):
    def feed(self, text: str) -> list[Sentence]: ...
    def flush(self) -> list[Sentence]: ...


class StreamObserver(Protocol):
    """Metrics hooks (the server implements them with Prometheus)."""

    def on_sentence(self, action: Action, checked: bool) -> None: ...
    def on_check(self, seconds: float, exit_layer: Optional[int]) -> None: ...


class NullObserver:
    def on_sentence(self, action: Action, checked: bool) -> None:
        pass

    def on_check(self, seconds: float, exit_layer: Optional[int]) -> None:
        pass


class TextLog:
    """Append-only text whose slices cost their own size, not the whole text's: sentence
    checks read a bounded window, so per-token work stays O(1) amortized."""

    def __init__(self) -> None:
        self._pieces: list[str] = []
        self._starts: list[int] = []
        self._len = 0

    def __len__(self) -> int:
        return self._len

    def append(self, text: str) -> None:
        if text:
            self._starts.append(self._len)
            self._pieces.append(text)
            self._len += len(text)

    def slice(self, start: int, end: Optional[int] = None) -> str:
        end = self._len if end is None else min(end, self._len)
        if start >= end:
            return ""
        i = max(0, bisect.bisect_right(self._starts, start) - 1)
        j = bisect.bisect_left(self._starts, end, lo=i)
        return "".join(self._pieces[i:j])[start - self._starts[i]:end - self._starts[i]]

    def tail(self, n: int) -> str:
        return self.slice(max(0, self._len - n))


@dataclass(frozen=True)
class GuardSettings:
    """Everything one request's checks run under."""

    grounding: Grounding
    policy: EffectivePolicy
    verification: VerificationConfig
    stream_id: str
    model: str = ""
    regenerator: Optional[Regenerator] = None
    observer: StreamObserver = field(default_factory=NullObserver)
    segmenter_factory: Callable[[], Segmenter] = SentenceSegmenter
    tenant: str = DEFAULT_TENANT
    """Whose cached and stored contexts the checks may use."""
    left_context_chars: int = SchedulerConfig.model_fields["left_context_chars"].default
    """The verifier's left-context budget (``scheduler.left_context_chars``): how much
    of the answer so far a check and a rewrite prompt get."""


@dataclass
class _Record:
    sentence: Sentence
    task: Optional["asyncio.Task[Detection]"]
    base: int = 0            # answer offset where the check's response text begins
    flagged: bool = False
    verdict: Optional[SentenceVerdict] = None


class AnswerGuard:
    def __init__(self, settings: GuardSettings, verifier: Verifier):
        self.s, self.verifier = settings, verifier
        self.segmenter = settings.segmenter_factory()
        self.records: list[_Record] = []
        self._answer = TextLog()      # what the upstream said (choice 0)
        self._released = TextLog()    # what the client got
        # the answer as far as it was found supported: sentences that were not flagged, and
        # verified rewrites; what later sentences are confirmed against (see _decide)
        self._supported = TextLog()
        self._any_flagged = False
        # a check needs left_context_chars before its sentence; the slack lets the
        # verifier cut at a word boundary inside the window
        self._window = settings.left_context_chars + 256
        self.errors: list[str] = []
        self.unchecked_choices: set[int] = set()
        self.final: Optional[Assessment] = None
        self._final_det: Optional[Detection] = None

    # -- segmentation and check start ---------------------------------------------------
    @property
    def answer(self) -> str:
        return self._answer.slice(0)

    @property
    def released_text(self) -> str:
        return self._released.slice(0)

    def feed(self, text: str) -> list[int]:
        if not text:
            return []
        self._answer.append(text)
        return [self._start(s) for s in self.segmenter.feed(text)]

    def flush(self) -> list[int]:
        return [self._start(s) for s in self.segmenter.flush()]

    def note_other_choices(self, indices: tuple[int, ...]) -> None:
        self.unchecked_choices.update(indices)

    def _start(self, s: Sentence) -> int:
        task, base = None, max(0, s.start - self._window)
        if s.checkable and s.text.strip():
            req = CheckRequest(self.s.grounding, self._answer.slice(base, s.end),
                               s.start - base, s.end - base, self.s.stream_id,
                               Priority.IN_FLIGHT, tenant=self.s.tenant)
            task = asyncio.create_task(self._timed(req))
        self.records.append(_Record(s, task, base))
        return len(self.records) - 1

    async def _timed(self, req: CheckRequest) -> Detection:
        t0 = time.perf_counter()
        det = await self.verifier.verify(req)
        self.s.observer.on_check(time.perf_counter() - t0, det.exit_layer)
        return det

    def check_done(self, i: int) -> bool:
        task = self.records[i].task
        return task is None or task.done()

    # -- verdicts -------------------------------------------------------------------------
    def _failed(self, err: BaseException, what: str) -> None:
        """Fail closed (raise) or open (note it and go on)."""
        if isinstance(err, InputError):
            self.errors.append(f"{what}: not checkable: {err.message}")
            return
        if self.s.verification.on_error == "closed":
            if isinstance(err, GuardrailError):
                raise err
            raise DetectorError(f"{what}: {type(err).__name__}: {err}") from err
        msg = err.message if isinstance(err, GuardrailError) else f"{type(err).__name__}: {err}"
        self.errors.append(f"{what}: failed open: {msg}")

    async def judge(self, i: int) -> SentenceVerdict:
        rec = self.records[i]
        s = rec.sentence
        verdict = SentenceVerdict(s.index, s.text, s.text, Action.RELEASE, 0.0, (), None,
                                  checked=False)
        if rec.task is not None:
            try:
                det = await rec.task
            except asyncio.CancelledError:
                current = asyncio.current_task()
                if current is not None and current.cancelling():
                    raise  # we are being cancelled: never swallow it
                self._failed(DetectorError("the check was cancelled by the verifier"),
                             f"sentence {s.index}")
            except Exception as e:
                self._failed(e, f"sentence {s.index}")
            else:
                verdict = await self._decide(rec, det)
        rec.verdict = verdict
        self._released.append(verdict.released)
        if not rec.flagged or verdict.action is Action.REGENERATE:
            self._supported.append(verdict.released)
        self._any_flagged |= rec.flagged
        self.s.observer.on_sentence(verdict.action, verdict.checked)
        if verdict.action is Action.BLOCK:
            raise Blocked(f"sentence {s.index} is not supported by the context "
                          f"(score {verdict.score:.2f}); the policy blocks the answer",
                          code="unsupported_content")
        return verdict

    async def _decide(self, rec: _Record, det: Detection) -> SentenceVerdict:
        s, p = rec.sentence, self.s.policy
        a = assess(det, s.start - rec.base, s.end - rec.base, p.threshold)
        if a.flagged and self._any_flagged:
            # The in-flight check read the upstream's answer so far, which holds an earlier
            # flagged sentence; an unsupported claim on the left raises the scores of what
            # follows it.  Confirm against the supported answer so far (what the client
            # reads, without the withheld text) before acting.
            a = await self._assess_after(self._supported.tail(self._window), s.text, a)
        rec.flagged = a.flagged
        base = None
        if a.flagged and p.action is Action.REGENERATE:  # answer so far: a bounded tail
            base = RegenerateRequest(self.s.grounding, self._released.tail(self._window), "",
                                     (), 0, model=self.s.model)
        out = await apply_policy(s.text, a, p, regenerator=self.s.regenerator,
                                 recheck=self._recheck, base=base)
        self.errors.extend(f"sentence {s.index}: {n}" for n in out.notes)
        return SentenceVerdict(s.index, s.text, out.released, out.action, a.score, a.spans,
                               a.exit_layer, attempts=out.attempts)

    async def _recheck(self, text: str) -> Assessment:
        """Check a rewrite after the supported answer so far; failure counts as flagged."""
        return await self._assess_after(self._supported.tail(self._window), text,
                                        Assessment(1.0, (), True, 0), what="rewrite check")

    async def _assess_after(self, left: str, text: str, on_failure: Assessment,
                            what: str = "confirming check") -> Assessment:
        """Assess ``text`` checked with ``left`` before it; ``on_failure`` if the check fails."""
        try:
            det = await self._timed(CheckRequest(
                self.s.grounding, left + text, len(left), None, self.s.stream_id,
                Priority.IN_FLIGHT, tenant=self.s.tenant))
        except asyncio.CancelledError:
            raise
        except Exception as e:
            self.errors.append(f"{what} failed: {type(e).__name__}: {e}")
            return on_failure
        return assess(det, len(left), len(left) + len(text), self.s.policy.threshold)

    # -- end of answer --------------------------------------------------------------------
    async def final_pass(self) -> None:
        """Full depth over the whole original answer; annotates every verdict."""
        answer = self.answer
        if not self.s.verification.final_pass or not any(r.task for r in self.records) \
                or not answer.strip():
            return
        try:
            det = await self.verifier.verify(CheckRequest(
                self.s.grounding, answer, 0, None, self.s.stream_id, Priority.END_OF_STREAM,
                tenant=self.s.tenant))
        except asyncio.CancelledError:
            raise
        except Exception as e:
            self._failed(e, "final pass")
            return
        self._final_det = det
        self.final = assess(det, 0, len(answer), self.s.policy.threshold)
        for rec in self.records:
            if rec.verdict is None or not rec.sentence.checkable:
                continue
            s, v = rec.sentence, rec.verdict
            f = assess(det, s.start, s.end, self.s.policy.threshold)
            missed = f.flagged and not rec.flagged and v.released == v.original
            rec.verdict = replace(v, final_score=f.score, final_hallucinated=f.flagged,
                                  final_spans=f.spans, missed_by_shallow=missed)

    async def aclose(self) -> None:
        """Cancel every pending check, tell the verifier, and wait for them to end."""
        tasks = [r.task for r in self.records if r.task is not None]
        pending = [t for t in tasks if not t.done()]
        for task in pending:
            task.cancel()
        self.verifier.abort(self.s.stream_id)
        if pending:
            await asyncio.wait(pending)
        for task in tasks:  # a check nobody judged (the stream ended first) may have failed
            if not task.cancelled():
                task.exception()  # retrieved, so asyncio does not log it as lost

    # -- the guardrail object -------------------------------------------------------------
    def summary(self) -> tuple[bool, int, Action]:
        """(hallucination detected, unsupported span count, most severe action)."""
        verdicts = [r.verdict for r in self.records if r.verdict is not None]
        detected = any(r.flagged for r in self.records) or bool(self.final and self.final.flagged)
        spans = len(self.final.spans) if self.final is not None \
            else sum(len(v.spans) for v in verdicts)
        action = max((v.action for v in verdicts), key=SEVERITY.index, default=Action.RELEASE)
        return detected, spans, action

    def report(self, *, partial: bool = False) -> dict:
        detected, n_spans, action = self.summary()
        det = self._final_det
        return {
            "verified": True,
            "partial": partial,
            "hallucination_detected": detected,
            "action": action.value,
            "span_count": n_spans,
            "policy": self.s.policy.to_json(),
            "sentences": [r.verdict.to_json() for r in self.records if r.verdict is not None],
            "final": None if det is None or self.final is None else {
                "exit_layer": det.exit_layer, "n_layers": det.n_layers,
                "score": round(self.final.score, 4), "hallucinated": self.final.flagged,
                "spans": [sp.to_json() for sp in self.final.spans],
                "context_truncated": det.context_truncated,
                "response_split": det.response_split},
            "missed_by_shallow": [r.verdict.index for r in self.records
                                  if r.verdict is not None and r.verdict.missed_by_shallow],
            "unchecked_choices": sorted(self.unchecked_choices),
            "errors": list(self.errors),
            "stream_id": self.s.stream_id,
        }

"""``AnswerGuard``: the ledger of one answer (choice 0), checked sentence by sentence.

Shared by the streaming pipeline and the non-streaming path, and the one owner of a
sentence's life (``SentenceCheck``: its check, flag and verdict), of the answer's
texts (what the upstream said, what the client got, what was found supported) and of
how much of them a check reads (``TextLog.left_context``); ``AnswerReader`` cuts the
answer into sentences and says how a check reads it (a JSON answer: its values' text):

    feed(text) / flush()   segment; start an in-flight check per finished sentence at
                           once, so checks overlap the upstream -> [SentenceCheck]
    judge(check)           await its check, assess, confirm a flag that follows a flag,
                           apply the (pure) policy, run the regenerate loop if it says so
    final_pass()           the full-depth check over the original answer (``stream.final``)
    report()               the typed ``guardrail`` object

With a sentence judge (``GuardSettings.judge``), a sentence that makes no claim passes
without a check, and every assessment is the judge's (``policy.judged``): its
probability, its flag and the flag's explanation; a sentence that the grounding
settles (``settle.py``: said word for word or line for line) passes without a model call.

A sentence flagged after an earlier flagged one is confirmed by a second check against
the *supported* answer so far (unflagged sentences and verified rewrites), because an
unsupported claim on the left raises the scores of what follows it; rewrites are
checked the same way.  Callers judge sentences strictly in order.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field, replace
from typing import Optional

from guardrail.engine.seam import Verifier
from guardrail.errors import (Blocked, ContextError, DetectorError, GuardrailError,
                              InputError, describe)
from guardrail.evidence.claims import is_claim
from guardrail.evidence.language import AnswerLanguage
from guardrail.stream.policy import (Assessment, Outcome, RegenerateRequest, assess,
                                     decide, judged, redact, withheld)
from guardrail.stream.final import FinalView, as_judged, final_reads, final_view, summary
from guardrail.stream.reading import AnswerReader
from guardrail.stream.regenerate import regenerate
from guardrail.stream.settle import GroundingEvidence
from guardrail.stream.settings import GuardSettings, NullObserver, StreamObserver
from guardrail.stream.textlog import TextLog
from guardrail.types import (Action, CheckRequest, Detection, FinalVerdict, Grounding,
                             Priority, Report, Sentence, SentenceVerdict)

__all__ = ["AnswerGuard", "GuardSettings", "NullObserver", "SentenceCheck", "StreamObserver"]


@dataclass(eq=False)
class SentenceCheck:
    """One sentence's life: its in-flight check, whether it was flagged, its verdict."""

    sentence: Sentence
    task: Optional["asyncio.Future[Optional[Detection]]"]  # None: nothing to check (code,
    # whitespace); a result of None: settled by the grounding's evidence, no model call
    base: int = 0            # answer offset where the check's text begins
    grounding: Optional[Grounding] = None  # what the check reads
    flagged: bool = False
    verdict: Optional[SentenceVerdict] = None
    finished_at: float = field(default_factory=time.perf_counter)  # upstream finished it
    supported_at: Optional[tuple[int, int]] = None  # its range in the supported answer
    cold: bool = False       # its check read part of a context still being encoded
    skipped: Optional[str] = None  # why a claim was not checked: "language"

    @property
    def done(self) -> bool:
        """The check has finished (or there is none): judging it will not wait."""
        return self.task is None or self.task.done()


class AnswerGuard:
    def __init__(self, settings: GuardSettings, verifier: Verifier):
        self.s, self.verifier = settings, verifier
        self.checks: list[SentenceCheck] = []
        self._text = AnswerReader(settings.segmenter_factory, settings.json_answer)
        self._reads = self._text.reads  # the answer (choice 0) as checks read it
        self._released = TextLog()    # what the client got
        self._supported = TextLog()   # unflagged sentences and verified rewrites
        self._supported_reads = TextLog() if settings.json_answer else self._supported
        self._any_flagged = False
        self._budget = settings.left_context_chars
        self._step = settings.left_context_step_chars
        self.errors: list[str] = []
        self.unchecked_choices: set[int] = set()
        self._final: Optional[FinalView] = None
        self._evidence: Optional[GroundingEvidence] = None  # with a judge; per grounding
        self._prefetch: Optional[asyncio.Future] = None
        self.grounding = settings.grounding  # grows when a regenerate hook retrieves
        self.added_documents: list[str] = []
        self._language = AnswerLanguage(settings.grounding.question) \
            if settings.verification.other_languages != "check" else None

    async def _assess(self, det: Detection, start: int, end: int,
                      read_after: Optional[str] = None) -> Assessment:
        """The sentence ``det.response[start:end]`` judged (or token-assessed);
        ``read_after``: the answer its evidence reads before it, where that is not the
        text the model read."""
        threshold = self.s.policy.threshold
        if self.s.judge is None:
            return assess(det, start, end, threshold)
        evidence = self._evidence_for()
        built = await evidence.soon()
        features = evidence.take(det.response[start:end], det.response[:start]) \
            if read_after is None else built.features(det.response[start:end], read_after)
        return judged(det, start, end, self.s.judge, built, threshold, features)

    def _evidence_for(self) -> GroundingEvidence:
        if self._evidence is None or self._evidence.grounding is not self.grounding:
            self._evidence = GroundingEvidence(self.grounding)
        return self._evidence

    # -- segmentation and check start ---------------------------------------------------
    @property
    def answer(self) -> str:
        return self._text.answer.slice(0)

    @property
    def released_text(self) -> str:
        return self._released.slice(0)

    def feed(self, text: str) -> list[SentenceCheck]:
        return [self._start(s) for s in self._text.feed(text)]

    def flush(self) -> list[SentenceCheck]:
        """The rest of the text fed as sentences (``AnswerReader.flush``)."""
        return [self._start(s) for s in self._text.flush()]

    def note_other_choices(self, indices: tuple[int, ...]) -> None:
        self.unchecked_choices.update(indices)

    def _start(self, s: Sentence) -> SentenceCheck:
        task, base, skipped, read = None, 0, None, self._text.read(s)
        if s.checkable and read.strip() and self._language is not None and \
                not self._language.readable(read, self.grounding.documents):
            skipped = "language"  # ``verification.other_languages``: pass or withhold
        elif s.checkable and read.strip() and (self.s.judge is None or is_claim(read)):
            base, text = self._reads.left_context(s.start, s.end, self._budget, self._step)
            settle = self.s.judge is not None and self.s.verification.settle_restated
            settled = settle and self._evidence_for().settled(
                read, text[:s.start - base], self.s.policy.threshold)
            task = settled or self._launch(text, s.start - base)
        check = SentenceCheck(s, task, base, self.grounding, skipped=skipped)
        self.checks.append(check)
        return check

    def _launch(self, text: str, start: int) -> "asyncio.Task[Detection]":
        return asyncio.create_task(self._timed(self._request(text, start)))

    def _request(self, text: str, start: int) -> CheckRequest:
        """An in-flight check of ``text[start:]`` with ``text[:start]`` as left context."""
        return CheckRequest(self.grounding, text, start, len(text), self.s.stream_id,
                            Priority.IN_FLIGHT, tenant=self.s.tenant)

    async def _timed(self, req: CheckRequest) -> Detection:
        t0 = time.perf_counter()
        det = await self.verifier.verify(req)
        self.s.observer.on_check(time.perf_counter() - t0, det.exit_layer)
        return det

    # -- verdicts -------------------------------------------------------------------------
    def _failed(self, err: BaseException, what: str) -> None:
        """Fail closed (raise) or open (note it and go on)."""
        if isinstance(err, InputError) and not isinstance(err, ContextError):
            self.errors.append(f"{what}: not checkable: {err.message}")
            return  # this sentence only (e.g. no token the model reads): released
        if self.s.verification.on_error == "closed":
            if isinstance(err, GuardrailError):
                raise err
            raise DetectorError(f"{what}: {describe(err)}") from err
        self.errors.append(f"{what}: failed open: {describe(err)}")

    async def judge(self, check: SentenceCheck) -> SentenceVerdict:
        s = check.sentence
        verdict = SentenceVerdict(s.index, s.text, s.text, Action.RELEASE, 0.0, (), None,
                                  checked=False, claim=self.s.judge is None or
                                  not s.checkable or is_claim(self._text.read(s)),
                                  skipped=check.skipped)
        if check.skipped:
            self.s.observer.on_skipped(check.skipped)
            if self.s.verification.other_languages == "withhold":  # nothing unread goes out
                verdict = withheld(verdict, self.s.policy,
                                   self._text.values(s.start, s.end))
        if check.task is not None and check.grounding is not self.grounding:
            check.task.cancel()  # started before a rewrite added grounding: read it too
            check.base, text = self._reads.left_context(s.start, s.end, self._budget,
                                                         self._step)
            check.task, check.grounding = self._launch(text, s.start - check.base), \
                self.grounding
        if check.task is not None:
            try:
                det = await check.task
            except asyncio.CancelledError:
                current = asyncio.current_task()
                if current is not None and current.cancelling():
                    raise  # we are being cancelled: never swallow it
                self._failed(DetectorError("the check was cancelled by the verifier"),
                             f"sentence {s.index}")
            except Exception as e:
                self._failed(e, f"sentence {s.index}")
            else:
                if det is None:  # settled by the grounding, no model call (``settle.py``)
                    verdict = replace(verdict, checked=True, claim=True)
                    self.s.observer.on_settled()
                else:
                    check.cold = det.context_truncated
                    verdict = await self._decide(check, det)
        check.verdict = verdict
        self._released.append(verdict.released)
        if not check.flagged or verdict.action is Action.REGENERATE:
            start = len(self._supported)
            self._supported.append(verdict.released)
            if self.s.json_answer:  # what a check reads of it (withheld: nothing)
                self._supported_reads.append(self._text.read(s) if verdict.released == s.text
                                             else " " * len(verdict.released))
            check.supported_at = (start, len(self._supported))
        self._any_flagged |= check.flagged
        self.s.observer.on_sentence(verdict.action, verdict.checked)
        if verdict.action is Action.BLOCK:
            raise Blocked(f"sentence {s.index} is not supported by the context "
                          f"(score {verdict.score:.2f}); the policy blocks the answer",
                          code="unsupported_content")
        return verdict

    async def _decide(self, check: SentenceCheck, det: Detection) -> SentenceVerdict:
        s, p = check.sentence, self.s.policy
        a = await self._assess(det, s.start - check.base, s.end - check.base)
        if a.flagged and self._any_flagged:
            # The in-flight check read the upstream's answer so far, which holds an earlier
            # flagged sentence: confirm against the supported answer so far (what the
            # client reads, without the withheld text) before acting.
            a = await self._assess_after(self._text.read(s), a)
        check.flagged = a.flagged
        out = decide(s.text, a, p, self._text.values(s.start, s.end))
        if out.action is Action.REGENERATE:
            out = await self._regenerate(s.text, a)
        self.errors.extend(f"sentence {s.index}: {n}" for n in out.notes)
        return SentenceVerdict(s.index, s.text, out.released, out.action, a.score, a.spans,
                               a.exit_layer, attempts=out.attempts,
                               explanation=a.explanation if a.flagged else None)

    async def _regenerate(self, text: str, a: Assessment) -> Outcome:
        """The rewrite loop (``stream.regenerate``) with this answer's rechecks, or redaction."""
        p = self.s.policy
        if self.s.regenerator is None:
            return Outcome(Action.REDACT, redact(text, a.spans, p.redact_mode, p.redact_marker))
        _, so_far = self._released.left_context(len(self._released), len(self._released),
                                                self._budget)
        base = RegenerateRequest(self.grounding, so_far, "", (), 0, model=self.s.model)
        return await regenerate(text, a, p, self.s.regenerator, self._recheck, base,
                                self._extend)

    async def _extend(self, documents: tuple[str, ...]) -> Grounding:
        """Add a regenerate hook's documents to the grounding of every later check; raises,
        adding nothing, over the size rule or where the engine cannot prepare them."""
        new = tuple(d for d in dict.fromkeys(documents)
                    if d.strip() and d not in self.grounding.documents)
        if new:
            docs = self.grounding.documents + new
            if self.s.grounding_limit is not None:
                self.s.grounding_limit(docs)
            await self.verifier.warm(docs, tenant=self.s.tenant)  # encoded once, or refused
            self.grounding = replace(self.grounding, context_id=None, documents=docs)
            self.added_documents += new
        return self.grounding

    async def _recheck(self, text: str) -> Assessment:
        """Check a rewrite after the supported answer so far; failure counts as flagged."""
        return await self._assess_after(text, Assessment(1.0, (), True, 0),
                                        what="rewrite check")

    async def _assess_after(self, text: str, on_failure: Assessment,
                            what: str = "confirming check") -> Assessment:
        """Assess ``text`` checked after the supported answer so far; ``on_failure`` if
        the check fails."""
        end = len(self._supported)
        _, left = self._supported_reads.left_context(end, end, self._budget)
        try:
            det = await self._timed(self._request(left + text, len(left)))
        except asyncio.CancelledError:
            raise
        except Exception as e:
            self.errors.append(f"{what} failed: {type(e).__name__}: {e}")
            return on_failure
        # the model reads the supported answer; the evidence's arithmetic reads what the
        # client read, marked sentences too ("... $204.00" marked, then "with the $45
        # fee, the total comes to $259": 204 + 45 = 249), withheld text not
        read = None if self.s.json_answer else \
            self._released.left_context(len(self._released), len(self._released),
                                        self._budget)[1]
        return await self._assess(det, len(left), len(left) + len(text), read)

    # -- end of answer --------------------------------------------------------------------
    async def final_pass(self) -> None:
        """Full depth over the original answer (``stream.final``: at once, or as the
        in-flight checks read it); annotates every verdict."""
        answer = self._reads.slice(0)
        if not self.s.verification.final_pass or not any(c.task for c in self.checks) \
                or not answer.strip():
            return
        reads = final_reads(self.checks, len(answer), self.s.final_by_sentence)
        dets = await asyncio.gather(*(self.verifier.verify(CheckRequest(
            self.grounding, answer[r.base:r.end], r.start, None, self.s.stream_id,
            Priority.END_OF_STREAM, tenant=self.s.tenant, blocks=r.blocks))
            for r in reads), return_exceptions=True)  # each awaited, whichever fails
        for e in dets:
            if isinstance(e, asyncio.CancelledError):
                raise e
        if failed := next((e for e in dets if isinstance(e, BaseException)), None):
            if not isinstance(failed, Exception):
                raise failed
            self._failed(failed, "final pass")
            return
        self._final = final_view(list(zip(reads, dets)), self.s.policy.threshold)
        for r, det in zip(reads, dets):
            for check in (self.checks[i] for i in r.sentences):
                s, v = check.sentence, check.verdict
                f = await self._assess(det, s.start - r.base, s.end - r.base)
                if f.flagged and not check.flagged and v.released == v.original:
                    f = await self._confirm_final(check) or f
                missed = f.flagged and not check.flagged and v.released == v.original
                check.verdict = replace(v, final_score=f.score, final_hallucinated=f.flagged,
                                        final_spans=f.spans, missed_by_shallow=missed,
                                        explanation=v.explanation or f.explanation)
        if self.s.judge is not None:  # the report's ``final`` says what the judge decided
            self._final = as_judged(self._final, self.checks)

    async def _confirm_final(self, check: SentenceCheck) -> Optional[Assessment]:
        """The full-depth pass reads the original answer, so a sentence is also judged
        by withheld text before it and, read at once, by what follows it: a supported
        sentence next to an unsupported one can score high (the model spreads a flag
        over its neighbours).  A flag on a sentence the in-flight check released is therefore
        confirmed once at full depth, reading the *supported* answer up to the
        sentence's end (what the client read, rewrites included, without withheld
        text); None if that check fails (the first verdict stands)."""
        if check.supported_at is None:
            return None
        start, end = check.supported_at
        base, text = self._supported_reads.left_context(start, end, self._budget, self._step)
        try:
            det = await self.verifier.verify(CheckRequest(
                self.grounding, text, start - base, len(text), self.s.stream_id,
                Priority.END_OF_STREAM, tenant=self.s.tenant))
        except asyncio.CancelledError:
            raise
        except Exception as e:
            self.errors.append(f"final confirming check failed: {type(e).__name__}: {e}")
            return None
        return await self._assess(det, start - base, len(text))

    def prefetch(self) -> None:
        """Have the engine prepare the grounding, and the judge its evidence, while the upstream
        writes the first sentence; best effort: a failure is the first check's to report."""
        g = self.grounding
        if g.documents and self._prefetch is None:
            self._prefetch = asyncio.ensure_future(
                self.verifier.warm(g.documents, tenant=self.s.tenant))
            self._prefetch.add_done_callback(lambda f: f.cancelled() or f.exception())
            if self.s.judge is not None:
                self._evidence_for().soon()

    async def aclose(self) -> None:
        """Cancel every pending check, tell the verifier, and wait for them to end."""
        if self._prefetch is not None:
            self._prefetch.cancel()  # the engine's own preparation goes on (shielded)
        if self._evidence is not None:
            self._evidence.cancel()
        tasks = [c.task for c in self.checks if c.task is not None]
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
    @property
    def final(self) -> Optional[Assessment]:
        """The final pass over the answer (None: it did not run or failed)."""
        return None if self._final is None else self._final.assessment

    def report(self, *, partial: bool = False) -> Report:
        detected, n_spans, action = summary(self.checks, self.s.judge is not None,
                                            self.final)
        verdicts = tuple(c.verdict for c in self.checks if c.verdict is not None)
        v = self._final
        final = None if v is None else FinalVerdict(
            v.exit_layer, v.n_layers, v.assessment.score, v.assessment.flagged,
            v.assessment.spans, v.context_truncated, v.response_split)
        return Report(partial, detected, action, n_spans, self.s.policy.to_json(), verdicts,
                      final, tuple(v.index for v in verdicts if v.missed_by_shallow),
                      tuple(sorted(self.unchecked_choices)), tuple(self.errors),
                      self.s.stream_id, tuple(self.added_documents))

"""One request's stream: upstream bytes in, checked SSE bytes out.

    bytes -> deltas (chunks.py: typed Delta) -> AnswerGuard.feed (segmenter; a check task
    per sentence, overlapping the upstream) -> in-order release (AnswerGuard.judge:
    policy, regeneration) -> final full-depth pass -> final chunk with ``guardrail``
    -> [DONE]

Three shapes share the stages:

* ``passthrough_stream``: no grounding; upstream bytes are forwarded unchanged, only
  validated (a malformed or cut stream still ends with an error event and [DONE]).
* ``guarded_stream`` with hold (default): a producer task reads the upstream, segments
  choice 0 and starts a check for each finished sentence; the generator releases the
  queue strictly in order, each sentence after its verdict.  No unchecked text of
  choice 0 reaches the client, not even on errors.
* ``guarded_stream`` without hold: chunks are forwarded at once; verdicts are collected
  in order as they complete and may still block the rest of the stream.

Both end with choice 0's finish chunk carrying the ``guardrail`` report (held until the
final pass), then the usage chunk if the client asked for one, then ``[DONE]``: the
loop of the openai quickstart (``chunk.choices[0]``) never meets an empty ``choices``
it did not ask for.  A ``block`` ends the stream the same way, with
``finish_reason: "content_filter"`` and the (partial) report: clients and routers know
a filtered answer and do not retry it as a server error.

``n>1``: only choice 0 is checked.  Chunks of other choices (allowed only with
``verification.other_choices=pass``) are forwarded unchanged, in order, and listed
as ``unchecked_choices``; with ``reject`` an upstream's extra choice is dropped (in
hold mode, and from every non-streaming answer).  A choice ``index`` that is not a
whole number is a protocol error.  Choice 0's ``logprobs`` are dropped in hold mode (they
describe tokens that may have been rewritten).

Cancellation: the generator's ``finally`` cancels the producer and every pending
check and calls ``verifier.abort(stream_id)``; the caller closes the upstream.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from dataclasses import dataclass, replace
from typing import Any, AsyncIterator, Optional, Union

import anyio

from guardrail.engine.seam import Verifier
from guardrail.errors import Blocked, GuardrailError, UpstreamProtocolError
from guardrail.stream.annotations import moved, part_pieces
from guardrail.stream.answer import AnswerGuard, GuardSettings, SentenceCheck
from guardrail.stream.chunks import (choice_index, content_text, passed_choice,
                                     whole_characters, without_other_choices)
from guardrail.stream.policy import redact
from guardrail.stream.sse import DONE
from guardrail.stream.wire import ChatWire, Wire
from guardrail.types import Action, Delta, Report, SentenceVerdict

CLEANUP_TIMEOUT_S = 5.0  # bound on cancelling checks and the producer at stream end

# -- the guarded stream -----------------------------------------------------------------

@dataclass(frozen=True)
class _Pass:
    chunk: dict
    finishes: bool = False  # carries choice 0's finish_reason


@dataclass(frozen=True)
class _Failed:
    error: Exception


_Item = Union[_Pass, _Failed, SentenceCheck, None]  # None: the end


class _Stream:
    """State of one guarded stream; one small method per stage."""

    def __init__(self, upstream: AsyncIterator[Delta], settings: GuardSettings,
                 verifier: Verifier, wire: Wire):
        self.upstream, self.settings, self.wire = upstream, settings, wire
        self.guard = AnswerGuard(settings, verifier)
        self.queue: asyncio.Queue[_Item] = asyncio.Queue(
            settings.verification.max_sentences_in_flight)
        # the finishing event and everything after it (usage) wait for the final pass:
        # the report rides on the finish, and usage stays last
        self.tail: list[dict] = []

    def _take(self, d: Delta) -> list[SentenceCheck]:
        """Note a delta; the sentences it finishes, their checks started."""
        self.wire.note(d)
        self.guard.note_other_choices(d.other_choices)
        started = self.guard.feed(d.text)
        return started + self.guard.flush() if d.finished else started

    async def produce(self) -> None:
        """Read the upstream, start a check per finished sentence, queue everything."""
        try:
            async for d in self.upstream:
                if self.settings.verification.other_choices == "reject":
                    d = without_other_choices(d)  # the client asked for one (n>1 refused)
                for check in self._take(d):
                    await self.queue.put(check)
                if d.tool_call:  # upstream order: the text before a tool call goes first
                    for check in self.guard.flush():
                        await self.queue.put(check)
                if d.rest is not None:
                    await self.queue.put(_Pass(d.rest, d.finished))
            for check in self.guard.flush():
                await self.queue.put(check)
            await self.queue.put(None)
        except Exception as e:  # delivered in order, after the sentences already queued
            await self.queue.put(_Failed(e))

    async def release_in_order(self) -> AsyncIterator[bytes]:
        while True:
            item = await self.queue.get()
            if item is None:
                return
            if isinstance(item, _Failed):
                raise item.error
            if isinstance(item, _Pass):
                if item.finishes or self.tail:
                    self.tail.append(item.chunk)
                else:
                    yield self.wire.passed(item.chunk)
                continue
            verdict = await self.guard.judge(item)
            event = self._event(item, verdict) if self.settings.sentence_events else None
            out = self.wire.text(verdict.released, event)
            if out:
                yield out

    def _event(self, check: SentenceCheck, v: SentenceVerdict) -> dict:
        """What happened to a released sentence, without the unsupported text itself
        (a regenerated sentence's original comes with its spans redacted)."""
        p = self.settings.policy
        event = {k: v for k, v in v.to_json().items()
                 if k not in ("original", "spans", "final")}
        why = event.get("explanation")
        if isinstance(why, dict) and why.get("basis") == "unlisted" and \
                v.released != v.original:  # its evidence quotes the words withheld
            event["explanation"] = {**why, "evidence": None}
        event["latency_ms"] = round((time.perf_counter() - check.finished_at) * 1000, 1)
        event["redacted_original"] = redact(v.original, v.spans, p.redact_mode,
                                            p.redact_marker) \
            if v.action is Action.REGENERATE else None
        return event

    async def forward_at_once(self) -> AsyncIterator[bytes]:
        """Hold off: forward every chunk now, judge sentences as their checks finish."""
        pending: list[SentenceCheck] = []
        async for d in self.upstream:
            pending += self._take(d)
            if d.tool_call:
                pending += self.guard.flush()
            if not d.chunk:  # text only (a held half character's replacement)
                pass
            elif d.finished or self.tail:
                self.tail.append(d.chunk)
            else:
                yield self.wire.passed(d.chunk)
            while pending and pending[0].done:
                await self._judge_sent(pending.pop(0))
        pending += self.guard.flush()
        for check in pending:
            await self._judge_sent(check)

    async def _judge_sent(self, check: SentenceCheck) -> None:
        """Judge a sentence the client has already; blocked, the report says it was sent
        (what stops is the rest of the stream)."""
        try:
            await self.guard.judge(check)
        except Blocked:
            if check.verdict is not None:
                check.verdict = replace(check.verdict, released=check.sentence.text)
            raise

    def final_chunks(self) -> bytes:
        return self.wire.final(self.tail, self._reported(self.guard.report().to_json()))

    def blocked_chunk(self, err: Blocked) -> bytes:
        report = self.guard.report(partial=True).to_json()
        report["errors"].append(f"blocked: {err.message}")
        return self.wire.blocked(self.tail, self._reported(report))

    def error_bytes(self, err: GuardrailError) -> bytes:
        self.settings.observer.on_error(err.type)
        return self.wire.error(err, self._reported(self.guard.report(partial=True).to_json()))

    def _reported(self, report: dict) -> dict:
        if self.settings.on_report is not None:
            self.settings.on_report(report)
        return report


async def guarded_stream(raw: AsyncIterator[bytes], settings: GuardSettings,
                         verifier: Verifier, wire: Optional[Wire] = None
                         ) -> AsyncIterator[bytes]:
    """Check the answer sentence by sentence; end with the report and [DONE].  ``wire``:
    the client's API (default: chat completions)."""
    wire = wire or ChatWire()
    s = _Stream(wire.deltas(raw), settings, verifier, wire)
    producer: Optional[asyncio.Task] = None
    s.guard.prefetch()
    try:
        if settings.policy.hold:
            producer = asyncio.create_task(s.produce(), name=f"produce-{settings.stream_id}")
            body = s.release_in_order()
        else:
            body = s.forward_at_once()
        async with contextlib.aclosing(body):
            async for out in body:
                yield out
        await s.guard.final_pass()
        yield s.final_chunks() + DONE
    except Blocked as e:
        yield s.blocked_chunk(e) + DONE
    except GuardrailError as e:
        yield s.error_bytes(e) + DONE
    except Exception as e:  # a bug must not leave the client hanging without [DONE]
        yield s.error_bytes(GuardrailError(f"internal error: {type(e).__name__}")) + DONE
        raise
    finally:
        # Shielded: under sse-starlette's (anyio) cancellation every await here would be
        # cancelled again; cleanup must run, bounded.
        with anyio.move_on_after(CLEANUP_TIMEOUT_S, shield=True):
            if producer is not None:
                producer.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await producer
            await s.guard.aclose()


# -- non-streaming ----------------------------------------------------------------------

@dataclass(frozen=True)
class CompletionResult:
    body: dict                        # the completion to return, ``guardrail`` included
    report: Report
    blocked: Optional[Blocked] = None

    @property
    def detected(self) -> bool:
        return self.report.hallucination_detected

    @property
    def span_count(self) -> int:
        return self.report.span_count

    @property
    def action(self) -> Action:
        return self.report.action


@dataclass(frozen=True)
class PartsResult:
    texts: list[str]          # each part's released text
    report: Report
    blocked: Optional[Blocked] = None


async def check_parts(texts: list[str], settings: GuardSettings,
                      verifier: Verifier, other_choices: tuple[int, ...] = ()) -> PartsResult:
    """Check a complete answer made of ``texts`` (parts in order: a sentence never spans
    two), then the full-depth pass; each part's released text, ``""`` for parts after a
    block."""
    guard = AnswerGuard(settings, verifier)
    guard.note_other_choices(other_choices)
    texts = [whole_characters(t) for t in texts]  # a lone surrogate: U+FFFD, as streamed
    starts: list[int] = []
    blocked = None
    try:
        try:
            for text in texts:
                starts.append(len(guard.released_text))
                for check in guard.feed(text) + guard.flush():
                    await guard.judge(check)
            await guard.final_pass()
        except Blocked as e:
            blocked = e
    finally:
        with anyio.move_on_after(CLEANUP_TIMEOUT_S, shield=True):
            await guard.aclose()
    full = guard.released_text
    ends = starts[1:] + [len(full)]
    released = [full[a:b] for a, b in zip(starts, ends)] + [""] * (len(texts) - len(starts))
    return PartsResult(released, guard.report(partial=blocked is not None), blocked)


async def guarded_completion(completion: dict, settings: GuardSettings,
                             verifier: Verifier) -> CompletionResult:
    """Check choice 0 of a complete (non-streaming) answer the same way."""
    choices = completion.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict) \
            or not isinstance(choices[0].get("message"), dict):
        raise UpstreamProtocolError("upstream completion has no choices[0].message")
    content = choices[0]["message"].get("content")
    text, _ = content_text(content)
    texts = [text] if isinstance(content, str) or text else []
    if settings.verification.other_choices == "reject":
        choices = choices[:1]  # an upstream's extra choice is dropped, not passed unchecked
    result = await check_parts(texts, settings, verifier, tuple(
        choice_index(c) or i for i, c in enumerate(choices) if i and isinstance(c, dict)))
    message = {**choices[0]["message"]}
    choice = passed_choice(choices[0], ("index", "logprobs", "finish_reason"))
    if texts:
        message["content"] = released_content(content, result.texts[0])
        if result.texts[0] != text:  # its tokens' logprobs would spell what was withheld
            choice["logprobs"] = None
        if isinstance(content, str) and "annotations" in message:  # citations' offsets
            message["annotations"] = moved(message["annotations"],
                                           part_pieces(texts, result.report.sentences)[0])
    body = {**completion, "choices": [{**choice, "message": message}, *choices[1:]],
            "guardrail": result.report.to_json()}
    if settings.on_report is not None:
        settings.on_report(body["guardrail"])
    return CompletionResult(body, result.report, result.blocked)


def released_content(content: Any, released: str) -> Any:
    """A message's ``content`` with its text replaced by the released text: a string, or
    content parts whose first text part holds it all (the other text parts go; the
    rest, e.g. a reasoning model's thinking, stays in place)."""
    if isinstance(content, str):
        return released
    out, placed = [], False
    for part in content:
        if part.get("type") == "text" and isinstance(part.get("text"), str):
            if not placed:
                out.append({**part, "text": released})
            placed = True
        else:
            out.append(part)
    return out


__all__ = ["CLEANUP_TIMEOUT_S", "CompletionResult", "PartsResult", "check_parts",
           "guarded_completion", "guarded_stream"]

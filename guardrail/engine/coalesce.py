"""In-flight checks of one stream that wait in the queue together run as one check.

A cross-encoder check reads its context windows again for every sentence: most of its
tokens are context, a few are the sentence.  When the model falls behind, a stream's
next sentence arrives while the check of the one before it still waits in the queue;
checking both in one sequence reads the windows once for both, so the backlog shrinks
instead of growing.  Nothing waits longer for it: the joined check keeps the first
check's place in the queue, and only checks that have not reached the model join.

The joined check reads the latest request's text (the answer so far up to its
sentence), its target running from the first joined sentence to the last; each
caller gets the Detection of its own sentence, in its own request's offsets
(:func:`narrow`).  A sentence of a joined check is read with the sentences after it
in view, as the end-of-stream pass reads it (the cross-encoder reads both ways).

The rules are pure functions; :class:`Pending` is a check as the scheduler holds it,
with the checks that joined it.  The scheduler decides when
(``scheduler.coalesce_sentences``).
"""

from __future__ import annotations

import asyncio
import dataclasses
from dataclasses import dataclass, field
from typing import Any, Iterable, Optional

from guardrail.types import CheckRequest, Detection, Priority, Span


@dataclass(frozen=True)
class Joined:
    """What a joined check reads, ``run``, and where each of its sentences starts in
    ``run.response``, in order (``at[0]`` is the first check's, ``at[-1]`` the last's)."""

    run: CheckRequest
    at: tuple[int, ...]

    @classmethod
    def alone(cls, req: CheckRequest) -> "Joined":
        return cls(req, (req.target_start,))


def _end(req: CheckRequest) -> int:
    return len(req.response) if req.target_end is None else req.target_end


def join(waiting: Joined, later: CheckRequest, max_sentences: int) -> Optional[Joined]:
    """``waiting`` extended by ``later``'s sentence, or None when they cannot be one
    check: another grounding, question, tenant or priority, more than
    ``max_sentences``, or texts that are not one answer with only whitespace between
    the last waiting sentence and ``later``'s (so a confirming check, which reads
    another answer so far, never joins a stream's own checks)."""
    run = waiting.run
    if (len(waiting.at) >= max_sentences or later.priority != run.priority
            or later.tenant != run.tenant or later.grounding != run.grounding
            or later.blocks or run.exit_layer != later.exit_layer):
        return None
    mine = run.response[:_end(run)].rstrip()  # a sentence ends with its trailing space
    edge = len(later.response[:later.target_start].rstrip())
    before = later.response[:edge]
    if before.endswith(mine):
        shift = edge - len(mine)      # later's text holds all of the waiting text
    elif mine.endswith(before):
        shift = edge - len(mine)      # the waiting text reaches further back (< 0)
    else:
        return None
    if waiting.at[0] + shift < 0 or not mine or not before:
        return None  # the first waiting sentence starts before later's text
    at = tuple(a + shift for a in waiting.at) + (later.target_start,)
    joined = dataclasses.replace(later, target_start=at[0], target_end=_end(later),
                                 blocks=at[1:])
    return Joined(joined, at)


def narrow(det: Detection, req: CheckRequest, at: int) -> Detection:
    """The joined check's Detection ``det`` (offsets in the joined text) as ``req``'s
    own: the tokens and spans of its sentence, which starts at ``at`` there, in
    ``req.response``'s offsets."""
    end = at + _end(req) - req.target_start
    shift = req.target_start - at
    keep = [i for i, (s, e) in enumerate(det.token_offsets) if at <= s and e <= end]
    spans = tuple(Span(max(s.start, at) + shift, min(s.end, end) + shift,
                       det.response[max(s.start, at):min(s.end, end)], s.confidence)
                  for s in det.spans if s.start < end and s.end > at)
    return dataclasses.replace(
        det, response=req.response, spans=spans,
        token_offsets=tuple((det.token_offsets[i][0] + shift, det.token_offsets[i][1] + shift)
                            for i in keep),
        token_probs=tuple(det.token_probs[i] for i in keep))


@dataclass(eq=False)
class Pending:
    """A check in the scheduler, from ``verify`` to its result."""

    req: CheckRequest
    text: str                    # req.response[:target_end]: what the detector reads
    exit_layer: Optional[int]    # requested; None = full depth
    future: asyncio.Future
    task: Optional[asyncio.Task] = None  # the prepare stage
    prep: Any = None
    probs: list = field(default_factory=list)
    remaining: int = 0
    dropped: bool = False        # read by the model thread: skip its sequences
    taken: bool = False          # a sequence of it went into a forward
    ctx: Any = None              # its prepared context, read whole (None: cold or not yet)
    joined: Optional[Joined] = None  # what it reads when others joined it
    riders: list = field(default_factory=list)  # the checks that joined it, in order
    host: Optional["Pending"] = None  # the check it joined
    order: int = 0               # arrival, among all checks

    async def host_before(self, checks: "Iterable[Pending]") -> Optional["Pending"]:
        """The check this one could join: of its stream's ``checks``, the in-flight one
        that arrived last before it (or the check that one joined), once prepared."""
        prev = max((c for c in checks if c.order < self.order
                    and c.req.priority == Priority.IN_FLIGHT), key=lambda c: c.order, default=None)
        if prev is not None and prev.task is not None and not prev.task.done():
            await asyncio.wait({prev.task})  # it is being prepared (or joining) itself
        return prev and (prev.host or prev)

    def joinable(self, later: "Pending", max_sentences: int) -> Optional[Joined]:
        """What this check would read with ``later``'s sentence joined to it, or None:
        not while the model has it, cold or unprepared, or when :func:`join` says no."""
        if self is later or self.dropped or later.dropped or self.taken or self.ctx is None:
            return None
        return join(self.joined or Joined.alone(self.req), later.req, max_sentences)

    def adopt(self, later: "Pending", joined: Joined, prep: Any) -> None:
        """``later`` joined: this check now reads ``joined.run`` (prepared as ``prep``)."""
        self.prep, self.joined, self.text = prep, joined, joined.run.response[:_end(joined.run)]
        self.probs, self.remaining = [None] * len(prep.sequences), len(prep.sequences)
        self.riders.append(later)
        later.host = self

    def unseat(self) -> list["Pending"]:
        """The riders still waiting, which this check will no longer answer."""
        riders, self.riders = [r for r in self.riders if not r.future.done()], []
        for r in riders:
            r.host = None
        return riders

    def settle(self, fut: "asyncio.Future[Detection]") -> list[Detection]:
        """Hand the outcome of this check's forward to it and to each check that
        joined it (its own sentence's Detection); returns the Detections handed."""
        out = []
        for c, at in zip((self, *self.riders), self.joined.at if self.joined else (None,)):
            if c.future.done():
                continue
            if fut.cancelled():
                c.future.cancel()
            elif fut.exception() is not None:
                c.future.set_exception(fut.exception())
            else:
                try:
                    d = fut.result() if at is None else narrow(fut.result(), c.req, at)
                except Exception as e:  # never leave a caller waiting for its timeout
                    c.future.set_exception(e)
                    continue
                out.append(d)
                c.future.set_result(d)
        return out

    def fail(self, exc: BaseException) -> None:
        for c in (self, *self.riders):
            if not c.future.done():
                c.future.set_exception(exc)

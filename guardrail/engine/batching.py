"""The scheduler's work queue: model sequences waiting for a forward, and how batches are cut.

A plain data structure (no asyncio, no threads, no clock of its own) so that the
scheduling policy is tested directly and the scheduler stays about plumbing.

Sequences wait in *lanes*, one per ``(priority, exit layer)``, because one forward
runs one exit.  The next lane is chosen by rules 1-3, a batch cut by rule 4:

1. in-flight lanes before end-of-stream lanes: a stream waits on them to release a
   sentence, while end-of-stream passes are throughput work;
2. starvation-free: after ``eos_every`` consecutive batches taken while end-of-stream
   work was waiting, the next batch is end-of-stream work, however busy streaming is;
3. among lanes of one class, the lane whose oldest sequence is oldest;
4. fair share: when several checks wait in a lane, a batch takes at most an equal
   share of its room from each (their oldest sequences), so one check's hundreds of
   windows delay the others by one batch, not by all of them;
5. end-of-stream batches are small (``eos_batch_tokens``): the model thread runs one
   batch at a time, and in-flight checks queued behind a full-depth batch wait for all
   of it.

A batch is cut from a lane around its *oldest* sequence (so nothing waits forever):
the sequences closest to it in length join while ``count * longest`` stays within the
token budget, which keeps padding low without starving long or short sequences.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Iterable, Mapping, Optional, Sequence

from guardrail.types import Priority

LaneKey = tuple[Priority, Optional[int]]  # (priority, exit layer; None = full depth)


@dataclass(eq=False)
class Item:
    """One model sequence of one check."""

    job: Any        # the check it belongs to; compared by identity
    index: int      # position of the sequence among the check's sequences
    seq: Any        # the model input (anything with ``len``)
    length: int     # tokens
    layers: int     # layers the forward will run (cost of one token)
    order: int      # arrival order, for fairness
    enqueued: float  # arrival time (the caller's clock)


@dataclass(frozen=True)
class Batch:
    """Sequences that go through the model together, at one exit."""

    priority: Priority
    exit_layer: Optional[int]
    items: tuple[Item, ...]

    @property
    def padded_tokens(self) -> int:
        return len(self.items) * max((i.length for i in self.items), default=0)

    @property
    def real_tokens(self) -> int:
        return sum(i.length for i in self.items)


class WorkQueue:
    """Lanes of waiting sequences with the batch-cutting policy described above."""

    def __init__(self, *, max_batch_tokens: int, max_batch_size: int, eos_every: int,
                 eos_batch_tokens: Optional[int] = None):
        eos_batch_tokens = max_batch_tokens if eos_batch_tokens is None else eos_batch_tokens
        if min(max_batch_tokens, max_batch_size, eos_every, eos_batch_tokens) < 1:
            raise ValueError(f"max_batch_tokens ({max_batch_tokens}), max_batch_size "
                             f"({max_batch_size}), eos_every ({eos_every}) and "
                             f"eos_batch_tokens ({eos_batch_tokens}) must be >= 1")
        self.max_batch_tokens = max_batch_tokens
        self.eos_batch_tokens = eos_batch_tokens
        self.max_batch_size = max_batch_size
        self.eos_every = eos_every
        self._lanes: dict[LaneKey, list[Item]] = {}
        self._order = itertools.count()
        self._count = {p: 0 for p in Priority}
        self._per_job: dict[int, int] = {}  # id(job) -> waiting sequences (drop's shortcut)
        self._work = 0     # sum of length * layers over waiting items
        self._streak = 0   # batches taken in a row while end-of-stream work waited
        # answer blocks: the exit of each check waiting or in a forward, by the key it
        # keeps its answer so far under (``shallower_under_load``)
        self.keeping: dict[str, Optional[int]] = {}

    # -- filling and dropping ----------------------------------------------------------
    def push(self, job: Any, priority: Priority, exit_layer: Optional[int],
             seqs: Sequence[Any], layers: int, now: float) -> None:
        lane = self._lanes.setdefault((priority, exit_layer), [])
        for i, seq in enumerate(seqs):
            lane.append(Item(job, i, seq, len(seq), layers, next(self._order), now))
            self._work += len(seq) * layers
            if getattr(seq, "keep", None) is not None:
                self.keeping[seq.keep] = exit_layer
        self._count[priority] += len(seqs)
        if seqs:
            self._per_job[id(job)] = self._per_job.get(id(job), 0) + len(seqs)

    def replace(self, job: Any, seqs: Sequence[Any]) -> None:
        """``job``'s waiting sequences become ``seqs``, in its lane, at its place and with
        its arrival (a check that now checks more, ``engine.coalesce``); all of them must
        still wait there."""
        key, lane = next((k, lane) for k, lane in self._lanes.items()
                         if any(it.job is job for it in lane))
        mine = [it for it in lane if it.job is job]
        first = lane.index(mine[0])
        self.ran(mine)
        self._forget(key[0], mine)
        new = [Item(job, i, seq, len(seq), mine[0].layers, mine[0].order, mine[0].enqueued)
               for i, seq in enumerate(seqs)]
        rest = [it for it in lane if it.job is not job]
        self._set_lane(key, rest[:first] + new + rest[first:])
        for it in new:
            self._work += it.length * it.layers
            if getattr(it.seq, "keep", None) is not None:
                self.keeping[it.seq.keep] = key[1]
        self._count[key[0]] += len(new)
        if new:
            self._per_job[id(job)] = len(new)

    def ran(self, items: Iterable[Item]) -> None:
        """A forward of ``items`` ended: what they keep is kept (or never will be)."""
        for it in items:
            self.keeping.pop(getattr(it.seq, "keep", None), None)

    def drop(self, job: Any) -> int:
        """Remove every waiting sequence of ``job``; returns how many there were."""
        if id(job) not in self._per_job:
            return 0  # the common case: a finished check has nothing left here
        removed = 0
        for key in list(self._lanes):
            lane = self._lanes[key]
            keep = [it for it in lane if it.job is not job]
            if len(keep) != len(lane):
                self.ran(it for it in lane if it.job is job)
                self._forget(key[0], (it for it in lane if it.job is job))
                removed += len(lane) - len(keep)
                self._set_lane(key, keep)
        return removed

    # -- inspection ----------------------------------------------------------------------
    def __len__(self) -> int:
        return sum(self._count.values())

    def queued(self, priority: Priority) -> int:
        """Waiting sequences of one priority class."""
        return self._count[priority]

    @property
    def work(self) -> int:
        """Waiting tokens weighted by the layers they will run (for drain estimates)."""
        return self._work

    @property
    def tokens(self) -> int:
        return sum(it.length for lane in self._lanes.values() for it in lane)

    # -- the policy ----------------------------------------------------------------------
    def next_lane(self) -> Optional[LaneKey]:
        """The lane the next batch comes from (rules 1-3 of the module docstring)."""
        eos_waiting = self._count[Priority.END_OF_STREAM] > 0
        if eos_waiting and self._streak >= self.eos_every:
            return self._oldest(Priority.END_OF_STREAM)
        for priority in sorted(Priority):
            key = self._oldest(priority)
            if key is not None:
                return key
        return None

    def wait_time(self, key: LaneKey, now: float, max_wait: float) -> float:
        """Seconds until the lane should be cut: 0 when a full batch waits or its oldest
        sequence has waited ``max_wait``; otherwise the time left to fill up."""
        lane = self._lanes[key]
        longest = max(it.length for it in lane)
        if len(lane) >= self.max_batch_size or len(lane) * longest >= self._budget(key):
            return 0.0
        return max(0.0, lane[0].enqueued + max_wait - now)

    def take(self, key: LaneKey) -> Batch:
        """Cut one batch from the lane, around its oldest sequence, with at most a fair
        share of it from any one check (rule 4)."""
        lane, budget = self._lanes[key], self._budget(key)
        by_len = sorted(self._fair_share(lane, budget), key=lambda it: (it.length, it.order))
        anchor = min(range(len(by_len)), key=lambda i: by_len[i].order)
        lo = hi = anchor
        longest = by_len[anchor].length
        while hi - lo + 1 < self.max_batch_size:
            options = []
            if lo > 0:
                options.append(by_len[lo - 1])
            if hi + 1 < len(by_len):
                options.append(by_len[hi + 1])
            options.sort(key=lambda it: (abs(it.length - by_len[anchor].length), it.order))
            for cand in options:
                if (hi - lo + 2) * max(longest, cand.length) <= budget:
                    break
            else:
                break
            longest = max(longest, cand.length)
            if lo > 0 and cand is by_len[lo - 1]:
                lo -= 1
            else:
                hi += 1
        chosen = by_len[lo:hi + 1]
        picked = {id(it) for it in chosen}
        self._set_lane(key, [it for it in lane if id(it) not in picked])
        self._forget(key[0], chosen)
        eos_waiting = self._count[Priority.END_OF_STREAM] > 0
        if key[0] == Priority.END_OF_STREAM or not eos_waiting:
            self._streak = 0
        else:
            self._streak += 1
        return Batch(key[0], key[1], tuple(chosen))

    # -- internals -------------------------------------------------------------------------
    def _budget(self, key: LaneKey) -> int:
        """A lane's batch token budget (rule 5)."""
        return self.eos_batch_tokens if key[0] == Priority.END_OF_STREAM \
            else self.max_batch_tokens

    def _fair_share(self, lane: list[Item], budget: int) -> list[Item]:
        """The candidates of the next batch: each check's oldest sequences, at most an
        equal share of what fits one batch (by the oldest sequence's length), so a
        check with hundreds of windows cannot hold the lane while others wait."""
        jobs = {id(it.job) for it in lane}
        if len(jobs) == 1:
            return lane
        oldest = lane[0]
        fit = min(self.max_batch_size, max(1, budget // max(oldest.length, 1)))
        share = max(1, -(-fit // len(jobs)))
        taken: dict[int, int] = {}
        out = []
        for it in lane:  # lanes are kept in arrival order
            n = taken.get(id(it.job), 0)
            if n < share:
                out.append(it)
                taken[id(it.job)] = n + 1
        return out


    def _oldest(self, priority: Priority) -> Optional[LaneKey]:
        keys = [k for k in self._lanes if k[0] == priority]
        return min(keys, key=lambda k: self._lanes[k][0].order, default=None)

    def _set_lane(self, key: LaneKey, items: list[Item]) -> None:
        if items:
            self._lanes[key] = items
        else:
            del self._lanes[key]

    def _forget(self, priority: Priority, items: Iterable[Item]) -> None:
        for it in items:
            self._count[priority] -= 1
            self._work -= it.length * it.layers
            left = self._per_job[id(it.job)] - 1
            if left:
                self._per_job[id(it.job)] = left
            else:
                del self._per_job[id(it.job)]


def shallower_under_load(ladder: Sequence[Optional[int]], requested: Optional[int],
                         queued: int, thresholds: Sequence[int], seqs: Sequence = (),
                         keeping: Mapping[str, Optional[int]] = MappingProxyType({}),
                         deepens: bool = False) -> Optional[int]:
    """Adaptive depth: one step down ``ladder`` (exits, shallow to full depth = None)
    from ``requested`` per threshold that ``queued`` in-flight sequences reach, never
    below the first exit.  A check whose sequences read an answer so far kept at a
    shallower exit (answer blocks: ``seqs[i].prefix.depth``) runs there: going deeper
    would read the whole answer again, which costs more than the deeper layers save.
    So does one whose answer so far a check still queued will keep (``keeping``: the
    exit of each queued check by the key it keeps under; ``seqs[i].lookup``): under
    load a stream's next sentence is prepared before the check before it has run.
    Unless the engine ``deepens`` a shallower answer so far (runs only the missing
    layers over it, ``model.queries``): then load alone sets the exit."""
    steps = sum(queued >= t for t in thresholds)
    i = max(0, list(ladder).index(requested) - steps)
    if deepens:
        return ladder[i]
    kept = [s.prefix.depth for s in seqs if getattr(s, "prefix", None) is not None]
    kept += [keeping[s.lookup] for s in seqs if getattr(s, "prefix", None) is None
             and getattr(s, "lookup", None) in keeping]
    kept = [d for d in kept if d in ladder and d is not None]
    if kept:
        i = min(i, list(ladder).index(min(kept)))
    return ladder[i]

"""The scheduler's queue policy, without asyncio: lanes, priority, starvation, cutting."""

from __future__ import annotations

import pytest

from guardrail.engine.batching import WorkQueue
from guardrail.types import Priority

IF, EOS = Priority.IN_FLIGHT, Priority.END_OF_STREAM


class Seq:
    def __init__(self, n: int):
        self.n = n

    def __len__(self) -> int:
        return self.n


def q(**kw) -> WorkQueue:
    return WorkQueue(**{"max_batch_tokens": 100, "max_batch_size": 8, "eos_every": 2, **kw})


def test_in_flight_lanes_come_first_then_oldest_lane():
    wq = q()
    wq.push("e", EOS, None, [Seq(5)], 6, now=0.0)
    wq.push("a", IF, 4, [Seq(5)], 4, now=1.0)
    wq.push("b", IF, 2, [Seq(5)], 2, now=2.0)
    assert wq.next_lane() == (IF, 4)          # in-flight before the older end-of-stream
    wq.take((IF, 4))
    assert wq.next_lane() == (IF, 2)
    wq.take((IF, 2))
    assert wq.next_lane() == (EOS, None)


def test_end_of_stream_gets_a_batch_after_eos_every_in_flight_batches():
    wq = q(max_batch_size=1, eos_every=2)
    wq.push("e", EOS, None, [Seq(5), Seq(5)], 6, now=0.0)
    wq.push("i", IF, 4, [Seq(5)] * 6, 4, now=0.0)
    order = []
    while len(wq):
        order.append(wq.take(wq.next_lane()).priority)
    assert order == [IF, IF, EOS, IF, IF, EOS, IF, IF]


def test_batch_is_cut_around_the_oldest_sequence_by_length_under_the_budget():
    wq = q(max_batch_tokens=60, max_batch_size=8)
    lengths = [30, 5, 6, 29, 7, 31, 20]        # the oldest is 30 tokens long
    for i, n in enumerate(lengths):
        wq.push(f"j{i}", IF, 2, [Seq(n)], 2, now=float(i))
    batch = wq.take((IF, 2))
    # count * longest <= 60: the anchor (30) takes its nearest neighbour in length (29)
    assert sorted(it.length for it in batch.items) == [29, 30]
    assert batch.padded_tokens == 60 and batch.real_tokens == 59
    rest = wq.take((IF, 2))                    # next anchor: the 5-token one; 6 and 7 fit
    assert sorted(it.length for it in rest.items) == [5, 6, 7]   # 4 x 20 would not
    assert [it.length for it in wq.take((IF, 2)).items] == [31]   # 2 x 31 > 60
    assert [it.length for it in wq.take((IF, 2)).items] == [20]
    assert len(wq) == 0


def test_anchor_alone_over_budget_still_runs():
    wq = q(max_batch_tokens=10)
    wq.push("big", IF, 2, [Seq(50), Seq(3)], 2, now=0.0)
    assert [it.length for it in wq.take((IF, 2)).items] == [50]
    assert [it.length for it in wq.take((IF, 2)).items] == [3]


def test_drop_removes_only_that_jobs_sequences_and_keeps_counters():
    wq = q()
    a, b = object(), object()
    wq.push(a, IF, 4, [Seq(3), Seq(4)], 4, now=0.0)
    wq.push(b, IF, 4, [Seq(5)], 4, now=0.0)
    wq.push(a, EOS, None, [Seq(2)], 6, now=0.0)
    assert (wq.queued(IF), wq.queued(EOS), wq.work) == (3, 1, 4 * 12 + 12)
    assert wq.drop(a) == 3
    assert (wq.queued(IF), wq.queued(EOS), wq.work, wq.tokens) == (1, 0, 20, 5)
    assert [it.job for it in wq.take(wq.next_lane()).items] == [b]
    assert wq.next_lane() is None and wq.drop(a) == 0


def test_wait_time_zero_when_full_or_old_enough():
    wq = q(max_batch_tokens=100, max_batch_size=3)
    wq.push("a", IF, 2, [Seq(10)], 2, now=1.0)
    assert wq.wait_time((IF, 2), now=1.001, max_wait=0.004) == pytest.approx(0.003)
    assert wq.wait_time((IF, 2), now=1.010, max_wait=0.004) == 0.0
    wq.push("b", IF, 2, [Seq(10), Seq(10)], 2, now=1.001)
    assert wq.wait_time((IF, 2), now=1.001, max_wait=0.004) == 0.0   # max_batch_size reached


def test_invalid_limits_are_rejected():
    with pytest.raises(ValueError, match="eos_every"):
        WorkQueue(max_batch_tokens=10, max_batch_size=1, eos_every=0)


def test_a_check_with_many_sequences_shares_each_batch_with_the_others():
    """A final pass over a huge context (many windows) arrives first; a small check of
    another stream arrives after it.  The small one rides in the very first batch
    instead of waiting behind every window of the big one."""
    wq = q(max_batch_tokens=80, max_batch_size=8)
    wq.push("big", EOS, None, [Seq(10)] * 40, 6, now=0.0)
    wq.push("small", EOS, None, [Seq(10)] * 2, 6, now=1.0)
    first = wq.take((EOS, None))
    jobs = [it.job for it in first.items]
    assert jobs.count("small") == 2 and jobs.count("big") == 4   # 8 fit; an equal share each
    assert first.padded_tokens <= 80
    second = wq.take((EOS, None))  # alone now: the big check gets whole batches again
    assert [it.job for it in second.items] == ["big"] * 8
    assert len(wq) == 40 - 4 - 8


def test_one_check_alone_is_cut_as_before():
    wq = q(max_batch_tokens=80, max_batch_size=8)
    wq.push("only", EOS, None, [Seq(10)] * 20, 6, now=0.0)
    assert len(wq.take((EOS, None)).items) == 8


def test_end_of_stream_batches_keep_to_their_own_smaller_budget():
    """A full-depth batch holds the model thread: in-flight checks queued behind it
    wait for all of it, so end-of-stream batches are cut small."""
    wq = q(max_batch_tokens=1000, eos_batch_tokens=250)
    for name in "abcd":
        wq.push(name, EOS, None, [Seq(100)], 6, now=0.0)
        wq.push(name, IF, 4, [Seq(100)], 4, now=0.0)
    assert len(wq.take((IF, 4)).items) == 4          # 400 tokens: within 1000
    assert wq.wait_time((EOS, None), now=0.0, max_wait=1.0) == 0.0  # 4 x 100 > 250: full
    assert [len(wq.take((EOS, None)).items) for _ in range(2)] == [2, 2]
    one = q(max_batch_tokens=1000, eos_batch_tokens=250)
    one.push("long", EOS, None, [Seq(600)], 6, now=0.0)  # one sequence however long
    assert len(one.take((EOS, None)).items) == 1
    with pytest.raises(ValueError, match="eos_batch_tokens"):
        q(eos_batch_tokens=0)

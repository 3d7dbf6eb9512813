"""Training sequences for Parallel Context Windows (``guardrail.model.pcw``).

Each example becomes windows + query, concatenated with the PCW mask, so the model
learns exactly what it runs at serving time.  Two things differ from the
cross-encoder's sequences:

* a long context keeps at most ``max_windows`` windows, the ones sharing the most
  tokens with the response (the rest would only cost time; at serving time every
  window is read);
* with probability ``distractors`` an example also gets 1..``max_distractors``
  windows cut from *other* examples' contexts.  Serving reads tens to hundreds of
  windows of which one or two hold the evidence; a model trained only on its own
  two windows would spread its attention over unrelated ones at 32K.  Window order
  does not matter to PCW (every window sits at the same positions and sees only
  itself), so distractors simply join the list.  With ``similar`` > 0 that share of
  an example's distractors comes from the windows of other sources that share the
  rarest tokens with its question and context (``similar_windows``): retrieval puts
  such documents beside the evidence, and random ones are easy to tell apart.

A model with answer blocks (``det.answer == "sentences"``) reads the answer
block-causally by sentence, as a stream's checks do when each keeps the answer so far
for the next (``guardrail.model.prefixes``).  Its training queries get a new block at
each sentence start kept with probability ``keep_cut``, and with probability
``whole_answer`` none: at serving time a check that finds no kept prefix reads the
answer so far as one block and its sentence as the next, and the end-of-stream pass
may read a whole answer at once.
"""

from __future__ import annotations

import random
from collections import Counter, defaultdict
from typing import Sequence

import numpy as np

from guardrail.errors import InputError
from guardrail.model.detector import DetectInput
from guardrail.model.inputs import Tokenized, token_labels
from guardrail.train.perturb import split_sentences


def answer_cuts(response: str, r: Tokenized, rng: random.Random, keep_cut: float = 0.7,
                whole_answer: float = 0.2) -> list[int]:
    """Answer token indices where training blocks begin: sentence starts, each kept
    with probability ``keep_cut``; none with probability ``whole_answer``."""
    if rng.random() < whole_answer:
        return []
    cuts, pos = [], 0
    for sentence in split_sentences(response):
        at = response.find(sentence, pos)
        if at < 0:
            continue
        pos = at + len(sentence)
        cut = int(np.searchsorted(r.offsets[:, 0], at))
        if 0 < cut < len(r) and rng.random() < keep_cut:
            cuts.append(cut)
    return cuts


def similar_windows(windows: Sequence[np.ndarray], owners: Sequence[str],
                    queries: Sequence[np.ndarray], query_owners: Sequence[str], *,
                    keys: int = 32, top: int = 32, max_df: int = 64) -> list[list[int]]:
    """Per query, the indices of at most ``top`` windows of other owners that share its
    rarest tokens, best first, none weighing less than half the best.

    A window's weight for a query is the summed idf (over ``windows``) of the query's
    ``keys`` rarest token ids that it holds (none held by more than ``max_df`` windows:
    common words single out nothing), so it reads an inverted index of short postings
    instead of scoring every window.  Ties go to the earlier window.
    """
    df: Counter = Counter()
    postings: dict[int, list[int]] = defaultdict(list)
    for i, ids in enumerate(windows):
        for t in np.unique(ids).tolist():
            df[t] += 1
            postings[t].append(i)
    n = len(windows)
    out = []
    for ids, owner in zip(queries, query_owners):
        held = [t for t in np.unique(ids).tolist() if 1 < df.get(t, 0) <= min(max_df, n - 1)]
        held = sorted(held, key=lambda t: (df[t], t))[:keys]
        score: Counter = Counter()
        for t in held:
            weight = np.log(n / df[t])
            for i in postings[t]:
                if owners[i] != owner:
                    score[i] += weight
        ranked = sorted(score.items(), key=lambda p: (-p[1], p[0]))[:top]
        out.append([i for i, w in ranked if w >= ranked[0][1] / 2])
    return out


def encode_pcw(det, examples: Sequence, *, distractors: float = 0.0, max_distractors: int = 8,
               max_windows: int = 6, seed: int = 13, similar: float = 0.0) -> tuple[list, dict]:
    """``(sequences, counts)`` for ``train_detector`` / ``train_exits``."""
    rng = random.Random(seed)
    counts = {"sequences": 0, "with_distractors": 0, "similar_distractors": 0, "cut_windows": 0,
              "skipped_long_response": 0, "empty": 0, "answer_blocks": 0}
    prepared = []
    for ex in examples:
        if not ex.response.strip() or not ex.context.strip():
            counts["empty"] += 1
            continue
        try:
            ctx, _, q, r, pieces = det.inputs(DetectInput(ex.context, ex.question, ex.response))
        except InputError:  # no token the model can read
            pieces = ()
        if len(pieces) != 1:  # a response that needs splitting is left out
            counts["skipped_long_response"] += 1
            continue
        prepared.append((ex, ctx, q, r))
    pool, owners = [], []
    for ex, ctx, _, _ in prepared:
        for w in det.windows(ctx):
            pool.append(det._window_ids(ctx.tokens, w))
            owners.append(ex.source_id)
    near = similar_windows(pool, owners, [np.concatenate([q.ids, ctx.tokens.ids])
                                          for _, ctx, q, _ in prepared],
                           [ex.source_id for ex, _, _, _ in prepared]) \
        if pool and similar > 0 and distractors > 0 else [[] for _ in prepared]
    seqs = []
    for (ex, ctx, q, r), close in zip(prepared, near):
        windows = det.windows(ctx)
        if len(windows) > max_windows:
            wanted = set(r.ids.tolist())
            windows = sorted(windows, key=lambda w: -len(wanted.intersection(
                ctx.tokens.ids[w.start:w.end].tolist())))[:max_windows]
            counts["cut_windows"] += 1
        extra = []
        if pool and rng.random() < distractors:
            k = rng.randint(1, max_distractors)
            picked = rng.sample(close, min(len(close), round(k * similar)))
            extra = [pool[i] for i in picked]
            extra += [pool[rng.randrange(len(pool))] for _ in range(k - len(picked))]
            counts["with_distractors"] += 1
            counts["similar_distractors"] += len(picked)
        labels = token_labels(r.offsets, ex.spans)
        cuts = answer_cuts(ex.response, r, rng) if det.answer_blocks else []
        counts["answer_blocks"] += len(cuts) + 1 if det.answer_blocks else 0
        seqs.append(det.training_sequence(ctx.tokens, windows, q, r, (0, len(r)), 0,
                                          np.asarray(labels), extra, cuts))
    counts["sequences"] = len(seqs)
    return seqs, counts

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
  itself), so distractors simply join the list.

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


def encode_pcw(det, examples: Sequence, *, distractors: float = 0.0, max_distractors: int = 8,
               max_windows: int = 6, seed: int = 13) -> tuple[list, dict]:
    """``(sequences, counts)`` for ``train_detector`` / ``train_exits``."""
    rng = random.Random(seed)
    counts = {"sequences": 0, "with_distractors": 0, "cut_windows": 0,
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
    pool = [det._window_ids(ctx.tokens, w) for _, ctx, _, _ in prepared
            for w in det.windows(ctx)]
    seqs = []
    for ex, ctx, q, r in prepared:
        windows = det.windows(ctx)
        if len(windows) > max_windows:
            wanted = set(r.ids.tolist())
            windows = sorted(windows, key=lambda w: -len(wanted.intersection(
                ctx.tokens.ids[w.start:w.end].tolist())))[:max_windows]
            counts["cut_windows"] += 1
        extra = []
        if pool and rng.random() < distractors:
            extra = [pool[rng.randrange(len(pool))] for _ in range(rng.randint(1, max_distractors))]
            counts["with_distractors"] += 1
        labels = token_labels(r.offsets, ex.spans)
        cuts = answer_cuts(ex.response, r, rng) if det.answer_blocks else []
        counts["answer_blocks"] += len(cuts) + 1 if det.answer_blocks else 0
        seqs.append(det.training_sequence(ctx.tokens, windows, q, r, (0, len(r)), 0,
                                          np.asarray(labels), extra, cuts))
    counts["sequences"] = len(seqs)
    return seqs, counts

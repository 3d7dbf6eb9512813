"""Distillation from a stronger teacher detector: soft token labels.

A teacher (all-mpnet-base-v2 fine-tuned by ``scripts/train-teacher``, or any detector)
reads each training example as it is served, the whole context with every window, and
gives each response token its hallucination probability.  The student has a tokenizer
of its own, so the teacher's tokens are mapped through character offsets: a student
token takes the largest probability of the teacher tokens it overlaps (a hallucinated
word piece makes its token hallucinated), and a token that overlaps none has no soft
label.  The student then learns from the data's labels and the teacher's together
(``TrainConfig.distill``, see ``train.train_detector``).

Teacher probabilities are kept in a JSON-lines file keyed by a hash of the example's
text, so a resumed or repeated run does not compute them again.

The teacher may also be the student's own starting weights, scoring only some data sets
(``only``): those keep what the model already does on them while it learns the rest
from labels ("learning without forgetting", Li and Hoiem, 2017).  That is a replay of a
data set one can no longer fetch, through the model that was trained on it.
"""

from __future__ import annotations

import hashlib
import json
import logging
from pathlib import Path
from typing import Optional, Sequence

import numpy as np

log = logging.getLogger(__name__)

TeacherOutput = tuple[np.ndarray, np.ndarray]  # offsets [n, 2], probabilities [n]


def example_key(ex) -> str:
    text = "\x1f".join((ex.context, ex.question, ex.response))
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


def teacher_outputs(teacher, examples: Sequence, cache: Optional[Path] = None,
                    batch: int = 8, only: Sequence[str] = ()) -> list[Optional[TeacherOutput]]:
    """The teacher's token offsets and probabilities for each example (None where it
    scored none: an empty context or response, or, with ``only``, a data set whose name
    starts with none of those prefixes), read from ``cache`` where there and appended to
    it as they are computed."""
    from guardrail.model import DetectInput

    done: dict[str, TeacherOutput] = {}
    if cache is not None and cache.exists():
        for line in cache.read_text().splitlines():
            row = json.loads(line)
            done[row["key"]] = (np.asarray(row["offsets"], np.int64).reshape(-1, 2),
                                np.asarray(row["probs"], np.float32))
    prefixes = tuple(only)
    keys = [example_key(ex) if not prefixes or ex.dataset.startswith(prefixes) else None
            for ex in examples]
    todo: list[int] = []
    claimed: set[str] = set()
    for i, (k, ex) in enumerate(zip(keys, examples)):  # each text once (repeats share it)
        if k is None or k in done or k in claimed:
            continue
        if ex.context.strip() and ex.response.strip():
            claimed.add(k)
            todo.append(i)
    log.info("teacher: %d examples, %d to score", len(examples), len(todo))
    sink = cache.open("a") if cache is not None else None
    try:
        for n, start in enumerate(range(0, len(todo), batch)):
            idx = todo[start:start + batch]
            found = teacher.detect_batch([DetectInput(examples[i].context, examples[i].question,
                                                      examples[i].response) for i in idx])
            for i, d in zip(idx, found):
                out = (np.asarray(d.token_offsets, np.int64).reshape(-1, 2),
                       np.asarray(d.token_probs, np.float32))
                done[keys[i]] = out
                if sink is not None:
                    sink.write(json.dumps({"key": keys[i], "offsets": out[0].tolist(),
                                           "probs": [round(float(p), 4) for p in out[1]]})
                               + "\n")
            if n % 50 == 0:
                log.info("teacher: %d / %d scored", min(start + batch, len(todo)), len(todo))
                if sink is not None:
                    sink.flush()
    finally:
        if sink is not None:
            sink.close()
    return [done.get(k) if k is not None else None for k in keys]


def soft_labels(offsets: np.ndarray, teacher: TeacherOutput) -> np.ndarray:
    """Per student token (character ``offsets`` ``[n, 2]``), the largest teacher
    probability among the teacher tokens it overlaps; NaN where it overlaps none."""
    t_off, t_p = teacher
    out = np.full(len(offsets), np.nan, np.float32)
    if not len(t_off):
        return out
    for i, (s, e) in enumerate(np.asarray(offsets).reshape(-1, 2)):
        hit = (t_off[:, 0] < max(e, s + 1)) & (t_off[:, 1] > s)
        if hit.any():
            out[i] = t_p[hit].max()
    return out

"""The answer so far, encoded once: a check's query keys and values, kept for the next.

A Parallel Context Windows model trained with *answer blocks* (``"pcw": {"answer":
"sentences"}`` in its ``guardrail.json``) reads the answer block-causally by sentence:
a sentence's tokens attend to every context window, the question and the sentences
before it, never to a later one.  So the keys and values of the question and of the
sentences checked so far do not change when the next sentence arrives.  A check keeps
them (:class:`PrefixStates`), keyed by its context and the exact token ids of question
and answer up to its sentence's end; the next check of the same answer finds them and
runs only its own sentence's tokens, reading the context's cached windows and these.

The key is the content, as in a prefix cache: nothing is registered or released per
stream.  A stream's checks go sentence by sentence, each finding the one before it; a
stream that ends stops asking, and the byte bound of the ``StateCache`` holding the
entries drops the oldest.  An entry holds the layers its check ran (its exit): a deeper
check finds too few and runs its whole query again, which it then keeps.

An entry also holds what its layers handed on at each exit up to its own (``hidden``:
the input of that layer for every kept token) and its blocks (``segments``), so the
end-of-stream pass can *resume* the check from its exit to full depth
(``queries.forward_queries``): the layers below the exit are not run again.  A check
at exit 2 that read an answer so far kept at exit 4 finds that one's layer-2 input
there, so a stream whose exits moved under load can still be resumed.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Optional

import numpy as np
import torch


@dataclass(frozen=True, eq=False)
class PrefixStates:
    key: str
    n_tokens: int                   # query positions kept: question, [SEP], answer so far
    keys: tuple[torch.Tensor, ...]  # per layer run, [heads, n_tokens, head_dim]
    values: tuple[torch.Tensor, ...]
    probs: np.ndarray               # the answer tokens' probabilities, as checked
    exit_layer: int                 # the exit those probabilities came from
    hidden: Optional[dict[int, torch.Tensor]] = None  # layer -> its input, [n_tokens, hidden]
    segments: Optional[np.ndarray] = None       # the kept tokens' blocks (``queries.QUERY``...)

    @property
    def resumable(self) -> bool:
        """Whether a deeper pass can start at layer ``depth`` from this entry."""
        return self.hidden is not None and self.depth in self.hidden \
            and self.segments is not None

    @property
    def depth(self) -> int:
        """Layers whose keys and values are kept."""
        return len(self.keys)

    @property
    def nbytes(self) -> int:
        hidden = () if self.hidden is None else tuple(self.hidden.values())
        return sum(t.numel() * t.element_size() for t in (*self.keys, *self.values, *hidden)) \
            + self.probs.nbytes

    def layer(self, i: int) -> tuple[torch.Tensor, torch.Tensor]:
        return self.keys[i], self.values[i]


def prefix_key(context_key: str, question_ids: np.ndarray, answer_ids: np.ndarray) -> str:
    """The key of a query's states: its context, its question and answer token ids."""
    h = hashlib.blake2b(digest_size=16)
    h.update(context_key.encode())
    for part in (question_ids, answer_ids):
        h.update(b"\x00")
        h.update(np.asarray(part, np.int64).tobytes())
    return h.hexdigest()

"""Input building: ``[CLS] context [SEP] question [SEP] response [SEP]``.

Context, question and response are tokenized separately (no special tokens, with
offsets) and assembled by hand, so that

* a context is tokenized once and reused for every sentence (``PreparedContext``),
* a context longer than the window is cut into overlapping windows, each paired
  with the same question and response piece,
* a response longer than the room left is split into consecutive pieces
  (never silently dropped),
* labels exist only on response tokens (everything else is -100).

Token types: a tokenizer/model with two or more token types gets 0 for context and
question and 1 for the response; a model without token types (ModernBERT) gets none.
"""

from __future__ import annotations

import functools
import hashlib
import io
import json
import unicodedata
from dataclasses import dataclass, field
from typing import Optional, Sequence

import numpy as np

from guardrail.errors import ContextError, InputError

IGNORE = -100


def clean_text(text: str) -> str:
    """Make text safe for the tokenizer while keeping every character offset.

    Lone surrogates (which cannot be encoded) and control characters other than
    whitespace become U+FFFD / a space, one character for one, so spans found in the
    cleaned text index the original text unchanged.
    """
    if not isinstance(text, str):
        raise InputError(f"expected text, got {type(text).__name__}")
    if text.isprintable() or all(c.isprintable() or c in "\n\t\r" for c in text):
        return text
    out = []
    for c in text:
        if c in "\n\t\r" or c.isprintable():
            out.append(c)
        elif 0xD800 <= ord(c) <= 0xDFFF:
            out.append("\ufffd")
        elif unicodedata.category(c) in ("Cc", "Cf", "Cs", "Co", "Cn"):
            out.append(" ")
        else:
            out.append(c)
    return "".join(out)


@dataclass(frozen=True)
class Tokenized:
    ids: np.ndarray       # int32 [n]
    offsets: np.ndarray   # int32 [n, 2], character offsets into the text

    def __len__(self) -> int:
        return int(self.ids.shape[0])


def readable(tokenizer, text: str) -> str:
    """``text`` with each pictograph the tokenizer knows nothing of (an emoji, a dingbat:
    its ``[UNK]``) as a space, one for one, so offsets stay put.  An unknown token is
    nothing the detector was trained to read past: "330 metres tall in Paris. 🗼" scored
    0.25 where the sentence alone scored 0.05, and "Paris🗼" was one ``[UNK]``.  Other
    unknown characters (a currency sign such as ₪) stay what the model was trained on."""
    if text.isascii() or getattr(tokenizer, "unk_token_id", None) is None:
        return text
    return "".join(" " if not c.isascii() and unicodedata.category(c) == "So"
                   and _unknown(tokenizer, c) else c for c in text)


@functools.lru_cache(maxsize=8192)
def _unknown(tokenizer, c: str) -> bool:
    ids = tokenizer(c, add_special_tokens=False)["input_ids"]
    return bool(ids) and all(i == tokenizer.unk_token_id for i in ids)


def tokenize(tokenizer, text: str) -> Tokenized:
    if not text:
        return Tokenized(np.zeros(0, np.int32), np.zeros((0, 2), np.int32))
    enc = tokenizer(readable(tokenizer, text), add_special_tokens=False,
                    return_offsets_mapping=True,
                    return_attention_mask=False, return_token_type_ids=False)
    ids = np.asarray(enc["input_ids"], dtype=np.int32)
    offsets = np.asarray(enc["offset_mapping"], dtype=np.int32).reshape(-1, 2)
    keep = offsets[:, 1] > offsets[:, 0]  # drop zero-width tokens
    return Tokenized(ids[keep], offsets[keep])


@dataclass(frozen=True)
class PreparedContext:
    """A grounding context tokenized once; windows are cut from it on demand."""

    key: str
    text: str
    tokens: Tokenized
    tokenizer_name: str
    parts: tuple[tuple[int, int, bool], ...] = ()
    """Each document's character range in ``text`` and whether it is a tool result
    (empty: not known, e.g. a context stored by an earlier version)."""
    sources: tuple[str, ...] = ()
    """Where two or more documents are tool results, each document as it was given
    (before rendering), one per part: what a sentence's names are looked up in."""

    @property
    def n_tokens(self) -> int:
        return len(self.tokens)

    def to_bytes(self) -> bytes:
        """Serialise without pickle (it may travel through a shared cache)."""
        buf = io.BytesIO()
        np.savez(buf, ids=self.tokens.ids, offsets=self.tokens.offsets,
                 meta=np.frombuffer(json.dumps({"key": self.key, "text": self.text,
                                                "tokenizer": self.tokenizer_name,
                                                "parts": self.parts,
                                                "sources": self.sources}).encode(),
                                    dtype=np.uint8))
        return buf.getvalue()

    @classmethod
    def from_bytes(cls, data: bytes) -> "PreparedContext":
        with np.load(io.BytesIO(data), allow_pickle=False) as z:
            meta = json.loads(z["meta"].tobytes().decode())
            return cls(meta["key"], meta["text"], Tokenized(z["ids"], z["offsets"]),
                       meta["tokenizer"], tuple((a, b, bool(t))
                                                for a, b, t in meta.get("parts", ())),
                       tuple(meta.get("sources", ())))

    def token_range(self, start: int, end: int) -> tuple[int, int]:
        """The tokens of the characters ``[start, end)`` of ``text``."""
        starts = self.tokens.offsets[:, 0]
        return int(np.searchsorted(starts, start)), int(np.searchsorted(starts, end))


def context_key(documents: Sequence[str], tokenizer_name: str) -> str:
    """A prepared context's cache key (in-process and Redis).  ``readable`` salts it: a
    context tokenized before it read emoji as spaces is not reused."""
    h = hashlib.sha256(tokenizer_name.encode() + b"\x00unknown-as-space")
    for d in documents:
        h.update(b"\x00doc\x00" + d.encode("utf-8", "surrogatepass"))
    return h.hexdigest()


def join_documents(documents: Sequence[str]) -> str:
    return "\n\n".join(d.strip() for d in documents if d and d.strip())


def document_parts(documents: Sequence[str], tools: Sequence[bool] = ()
                   ) -> tuple[tuple[int, int, bool], ...]:
    """Where each document stands in ``join_documents(documents)`` and whether it is a
    tool result (``tools``, one per document; none given: none is)."""
    out, pos = [], 0
    for i, d in enumerate(documents):
        d = d.strip() if d else ""
        if d:
            out.append((pos, pos + len(d), bool(tools[i]) if i < len(tools) else False))
            pos += len(d) + 2
    return tuple(out)


def prepare_context(tokenizer, documents: str | Sequence[str], tokenizer_name: str = "",
                    max_tokens: Optional[int] = None, tools: Sequence[bool] = (),
                    sources: Sequence[str] = ()) -> PreparedContext:
    """``documents`` joined and tokenized; ``tools``: which of them are tool results;
    ``sources``: the documents as given, where ``documents`` are rendered.  The key is
    that of the documents as given, as the engine's prepared-context cache keys them
    (a context read back from Redis under another key is taken for a damaged one)."""
    docs = [documents] if isinstance(documents, str) else list(documents)
    text = clean_text(join_documents(docs))
    if not text.strip():
        raise ContextError("the context is empty: there is nothing to check the response "
                           "against", code="context_empty")
    toks = tokenize(tokenizer, text)
    if max_tokens is not None and len(toks) > max_tokens:
        raise ContextError(f"the context has {len(toks)} tokens, more than the configured "
                           f"maximum of {max_tokens}", code="context_too_large")
    parts = document_parts(docs, tools)
    given = [d for d in (sources or docs) if d and d.strip()]
    key = context_key(list(sources) or docs, tokenizer_name)  # as the engine keys it
    return PreparedContext(key, text, toks, tokenizer_name,
                           parts, tuple(given) if sum(t for *_, t in parts) >= 2 else ())


@dataclass(frozen=True)
class Window:
    """A token range ``[start, end)`` of the prepared context, or, packed, the token
    ranges ``pieces`` (within it, in context order) read one after another.
    ``serves``: the character ranges of the checked text whose tokens this window
    judges (empty: all of them; ``model.windows.OwnWindows``)."""

    index: int
    start: int
    end: int
    pieces: tuple[tuple[int, int], ...] = ()
    serves: tuple[tuple[int, int], ...] = ()

    def take(self, ids: np.ndarray) -> np.ndarray:
        """The window's tokens of the context's ``ids``."""
        if not self.pieces:
            return ids[self.start:self.end]
        return np.concatenate([ids[a:z] for a, z in self.pieces])

    @property
    def size(self) -> int:
        return sum(z - a for a, z in self.pieces) if self.pieces else self.end - self.start


def cut_windows(n_tokens: int, size: int, overlap: int) -> list[Window]:
    """Cover ``n_tokens`` with windows of ``size`` tokens overlapping by ``overlap``."""
    if size <= 0:
        raise ValueError("window size must be positive")
    if n_tokens <= size:
        return [Window(0, 0, n_tokens)]
    stride = max(1, size - min(overlap, size // 2))
    starts = list(range(0, n_tokens - size, stride)) + [n_tokens - size]
    return [Window(i, s, s + size) for i, s in enumerate(starts)]


@dataclass(frozen=True)
class Sequence_:
    """One model input: a context window + question + one response piece."""

    input_ids: np.ndarray        # int64 [L]
    token_type_ids: Optional[np.ndarray]
    response_slice: slice        # positions of the response piece within input_ids
    piece: int                   # which response piece
    window: int                  # which context window
    labels: Optional[np.ndarray] = None  # [L] with IGNORE outside the response
    soft: Optional[np.ndarray] = None    # [L] a teacher's probabilities, NaN where none

    def __len__(self) -> int:
        return int(self.input_ids.shape[0])


def window_minimum(response: Tokenized, sequences: Sequence[Sequence_],
                   probs: Sequence[np.ndarray], windows: Sequence[Window] = ()) -> np.ndarray:
    """Each response token's hallucination probability from the ``probs`` of the
    response piece in each of ``sequences``: the minimum over the windows that judge
    the token (a window judges the tokens that start in its ``serves``, every token
    when it has none), or over every window for a token no window names."""
    n = len(response)
    every, own = np.ones(n, np.float32), np.ones(n, np.float32)
    judged = np.zeros(n, bool)
    piece_start: list[int] = []
    offset = 0
    for seq in sequences:
        if seq.piece == len(piece_start):
            piece_start.append(offset)
            offset += seq.response_slice.stop - seq.response_slice.start
    serves = {w.index: w.serves for w in windows if w.serves}
    starts = np.asarray(response.offsets, np.int64).reshape(-1, 2)[:, 0]
    for seq, p in zip(sequences, probs):
        s = slice(piece_start[seq.piece], piece_start[seq.piece] + len(p))
        every[s] = np.minimum(every[s], p)
        mine = np.ones(len(p), bool)
        if seq.window in serves:
            mine[:] = False
            for a, z in serves[seq.window]:
                mine |= (starts[s] >= a) & (starts[s] < z)
        own[s] = np.where(mine, np.minimum(own[s], p), own[s])
        judged[s] |= mine
    return np.where(judged, own, every)


@dataclass
class InputBuilder:
    """Knows the tokenizer's special tokens and the window geometry."""

    tokenizer: object
    max_length: int
    use_token_types: bool
    max_question_tokens: int = 64
    min_context_tokens: int = 128
    window_overlap: int = 64
    cls_id: int = field(init=False)
    sep_id: int = field(init=False)

    def __post_init__(self):
        tok = self.tokenizer
        cls_id = tok.cls_token_id if tok.cls_token_id is not None else tok.bos_token_id
        sep_id = tok.sep_token_id if tok.sep_token_id is not None else tok.eos_token_id
        if cls_id is None or sep_id is None:
            raise ValueError("the tokenizer has neither [CLS]/[SEP] nor BOS/EOS tokens")
        self.cls_id, self.sep_id = int(cls_id), int(sep_id)
        if self.max_length < self.min_context_tokens + 16:
            raise ValueError(f"max_length {self.max_length} is too small")

    def question_tokens(self, question: str) -> Tokenized:
        q = tokenize(self.tokenizer, clean_text(question))
        n = self.max_question_tokens
        return q if len(q) <= n else Tokenized(q.ids[:n], q.offsets[:n])

    def response_room(self, n_question: int) -> int:
        """Most response tokens one sequence can take, leaving room for context."""
        return self.max_length - 4 - n_question - self.min_context_tokens

    def split_response(self, response: Tokenized, n_question: int) -> list[tuple[int, int]]:
        room = self.response_room(n_question)
        n = len(response)
        if n <= room:
            return [(0, n)]
        return [(s, min(s + room, n)) for s in range(0, n, room)]

    def build(self, context: Tokenized, window: Window, question: Tokenized,
              response: Tokenized, piece: tuple[int, int], piece_index: int,
              token_labels: Optional[np.ndarray] = None) -> Sequence_:
        c = window.take(context.ids)
        q = question.ids
        r = response.ids[piece[0]:piece[1]]
        ids = np.concatenate([[self.cls_id], c, [self.sep_id], q, [self.sep_id], r,
                              [self.sep_id]]).astype(np.int64)
        if len(ids) > self.max_length:
            raise AssertionError(f"built a sequence of {len(ids)} > {self.max_length} tokens")
        r0 = 3 + len(c) + len(q)
        types = None
        if self.use_token_types:
            types = np.zeros(len(ids), np.int64)
            types[r0:r0 + len(r) + 1] = 1
        labels = None
        if token_labels is not None:
            labels = np.full(len(ids), IGNORE, np.int64)
            labels[r0:r0 + len(r)] = token_labels[piece[0]:piece[1]]
        return Sequence_(ids, types, slice(r0, r0 + len(r)), piece_index, window.index, labels)

    def context_size(self, n_question: int, n_piece: int) -> int:
        return self.max_length - 4 - n_question - n_piece


def token_labels(offsets: np.ndarray, spans: Sequence[tuple[int, int]]) -> np.ndarray:
    """1 for tokens overlapping any hallucinated character span, else 0."""
    labels = np.zeros(len(offsets), np.int64)
    for s, e in spans:
        labels |= ((offsets[:, 0] < e) & (offsets[:, 1] > s)).astype(np.int64)
    return labels

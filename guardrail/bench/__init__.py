"""Benchmarks: the model, the stream and the quality, measured side by side.

    model.py    checks/s per sequence length x batch size x exit, raw backbone vs our check,
                peak RSS of a loaded detector, cold vs cached context preparation
    stream.py   fake upstream + the real proxy on loopback, N concurrent streams: release
                delay, pass-through overhead, batching, naive baseline and ablations
                (with stream_workload.py, stream_proxy.py, stream_clients.py and
                stream_delays.py: workloads, proxy process, load driver, analysis)
    quality.py  ``evaluate`` on every shared data set at every exit, one table
    report.py   JSON, matplotlib PNGs and the markdown page (``guardrail bench all``)

This module holds what they share: how a timing is summarised, a target that is
reached or missed, and the machine description recorded in every JSON.  Speed-ups
are always ratios of medians measured in the same run, with the configurations
interleaved (round-robin per repetition) so machine noise hits all of them alike.
"""

from __future__ import annotations

import datetime as _dt
import math
import os
import platform
import subprocess
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Callable, Optional, Sequence

SCHEMA_VERSION = 1


def percentile(values: Sequence[float], q: float) -> float:
    """Linear-interpolated percentile (``q`` in 0..100); NaN for no values."""
    xs = sorted(values)
    if not xs:
        return math.nan
    pos = (len(xs) - 1) * q / 100.0
    lo, hi = math.floor(pos), math.ceil(pos)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


@dataclass(frozen=True)
class Timing:
    """Per-call wall time of one measured thing, in milliseconds."""

    n: int
    median_ms: float
    p90_ms: float
    mean_ms: float
    min_ms: float
    max_ms: float

    @classmethod
    def of(cls, seconds: Sequence[float]) -> "Timing":
        if not seconds:
            raise ValueError("no samples to summarise")
        ms = [s * 1000.0 for s in seconds]
        return cls(len(ms), round(percentile(ms, 50), 4), round(percentile(ms, 90), 4),
                   round(sum(ms) / len(ms), 4), round(min(ms), 4), round(max(ms), 4))

    def to_json(self) -> dict:
        return asdict(self)


def interleaved(fns: dict[str, Callable[[], object]], *, warmup: int, repeats: int
                ) -> dict[str, Timing]:
    """Time every function ``repeats`` times, round-robin, after ``warmup`` untimed rounds.

    Interleaving puts every configuration under the same background load, so their
    ratio stays meaningful on a busy machine; the order rotates each round so none
    always runs right after the same neighbour.
    """
    names = list(fns)
    samples: dict[str, list[float]] = {k: [] for k in names}
    for r in range(warmup + repeats):
        shift = r % len(names) if names else 0
        for name in names[shift:] + names[:shift]:
            t0 = time.perf_counter()
            fns[name]()
            dt = time.perf_counter() - t0
            if r >= warmup:
                samples[name].append(dt)
    return {k: Timing.of(v) for k, v in samples.items()}


def ratio(num: Optional[float], den: Optional[float]) -> Optional[float]:
    """``num / den`` rounded, None when either is missing or ``den`` is not positive."""
    if num is None or den is None or not den > 0 or math.isnan(num):
        return None
    return round(num / den, 4)


@dataclass(frozen=True)
class Target:
    """One claim of the issue, checked against a measured value.

    ``direction`` says which side passes: ``">="`` (at least ``limit``) or ``"<="``.
    ``by`` is how far from the limit the value is, as a factor (value / limit).
    """

    name: str
    value: Optional[float]
    limit: float
    direction: str
    unit: str = ""
    note: str = ""

    @property
    def reached(self) -> Optional[bool]:
        if self.value is None or math.isnan(self.value):
            return None
        return self.value >= self.limit if self.direction == ">=" else self.value <= self.limit

    @property
    def by(self) -> Optional[float]:
        return ratio(self.value, self.limit)

    def to_json(self) -> dict:
        return {"name": self.name, "value": None if self.value is None else round(self.value, 4),
                "limit": self.limit, "direction": self.direction, "unit": self.unit,
                "reached": self.reached, "by": self.by, "note": self.note}


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.lower().startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _git_commit() -> Optional[str]:
    root = Path(__file__).resolve().parents[2]
    try:
        out = subprocess.run(["git", "-C", str(root), "rev-parse", "--short", "HEAD"],
                             capture_output=True, text=True, timeout=5)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None


def machine_info(device: Optional[str] = None) -> dict:
    """What the numbers were measured on; recorded in every JSON."""
    import psutil
    import torch
    import transformers

    import guardrail

    dev = device or ("cuda" if torch.cuda.is_available() else "cpu")
    info = {
        "date": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "cpu": _cpu_model(),
        "logical_cores": os.cpu_count(),
        "physical_cores": psutil.cpu_count(logical=False),
        "memory_gib": round(psutil.virtual_memory().total / 2**30, 1),
        "load_average": [round(x, 2) for x in os.getloadavg()] if hasattr(os, "getloadavg")
        else None,
        "platform": platform.platform(),
        "python": platform.python_version(),
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "torch_threads": torch.get_num_threads(),
        "device": dev,
        "gpu": torch.cuda.get_device_name(0) if dev.startswith("cuda") and
        torch.cuda.is_available() else None,
        "guardrail": getattr(guardrail, "__version__", None),
        "commit": _git_commit(),
    }
    return info


# -- text to measure on ------------------------------------------------------------------

DATA_ENV = "GUARDRAIL_DATA_DIR"

_SUBJECTS = ("The northern bridge", "The city library", "The harbour museum", "The old mill",
             "The river station", "The east tower", "The county archive", "The glass factory")
_VERBS = ("was built in", "was renovated in", "opened to the public in", "was extended in")
_PEOPLE = ("Anna Keller", "Marek Novak", "Lucia Ferreira", "Tomas Berg", "Ines Duarte",
           "Pieter Laan", "Sofia Marin", "Jonas Weber")


def find_data_dir(explicit: Optional[str | os.PathLike] = None) -> Optional[Path]:
    """The shared data directory: ``explicit`` (None when it does not exist), else
    ``$GUARDRAIL_DATA_DIR`` or ``../shared/data`` next to the working directory or the
    source checkout."""
    if explicit is not None:  # named: it or nothing (so a run can be made without data)
        return Path(explicit) if Path(explicit).is_dir() else None
    candidates = [os.environ.get(DATA_ENV), Path.cwd().parent / "shared" / "data",
                  Path(__file__).resolve().parents[2].parent / "shared" / "data"]
    for c in candidates:
        if c and Path(c).is_dir():
            return Path(c)
    return None


def filler_documents(n: int, seed: int = 0) -> list[str]:
    """Synthetic documents of numbered, named facts (used when no data directory exists)."""
    import random

    rng = random.Random(seed)
    docs = []
    for d in range(n):
        sents = [f"{rng.choice(_SUBJECTS)} of district {d * 7 + i} {rng.choice(_VERBS)} "
                 f"{rng.randint(1850, 2020)} under {rng.choice(_PEOPLE)}, at a cost of "
                 f"{rng.randint(2, 900)} million." for i in range(12)]
        docs.append(" ".join(sents))
    return docs


def bench_documents(data_dir: Optional[Path], limit: int = 400) -> tuple[list[str], str]:
    """Distinct real grounding documents (RAGTruth passages) and where they came from;
    synthetic filler when the data directory is absent or unreadable."""
    if data_dir is not None:
        path = data_dir / "ragtruth_qa_test_subset" / "derived_ragtruth_format"
        if path.is_dir():
            from guardrail.train.data import load_any

            seen: dict[str, str] = {}
            for ex in load_any(path):
                if ex.context.strip():
                    seen.setdefault(ex.source_id, ex.context)
            if seen:
                return list(seen.values())[:limit], str(path)
    return filler_documents(64), "synthetic filler"


__all__ = ["SCHEMA_VERSION", "bench_documents", "filler_documents", "find_data_dir", "Target", "Timing", "interleaved", "machine_info", "percentile",
           "ratio"]


GENERATED_SECTIONS = ("Machine", "Targets", "Model", "Stream", "Quality", "Reproduce")


def kept_sections(page: Path) -> list[str]:
    """The ``## `` sections of an existing benchmark page that ``render_page`` does not
    generate (e.g. the soak, written from ``soak.json`` by hand), to keep them when the
    page is written again."""
    if not page.exists():
        return []
    out = []
    for chunk in page.read_text().split("\n## ")[1:]:
        title = chunk.split("\n", 1)[0].strip()
        if not title.startswith(GENERATED_SECTIONS):
            out.append("## " + chunk.rstrip())
    return out


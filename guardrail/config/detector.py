"""Settings of the detector: which model, on which processor, in which number format."""

from __future__ import annotations

from typing import Literal, Optional

from pydantic import BaseModel, ConfigDict, Field


class DetectorConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True, frozen=True)

    model: Optional[str] = None
    """A local path, a Hugging Face id, or a shipped model: "default" (None), "pcw"."""
    device: Optional[str] = Field(None, pattern=r"^(cpu|cuda(:\d+)?|mps|xpu(:\d+)?)$")
    """Torch device (``cpu``, ``cuda``, ``cuda:1``); None picks CUDA when available."""
    dtype: Literal["auto", "float32", "bfloat16"] = "auto"
    """Weights' number format; auto: bfloat16 on CUDA and on CPUs that multiply it natively
    (AVX-512 BF16, AMX), else float32 (docs/context-states.md, "bfloat16 weights")."""

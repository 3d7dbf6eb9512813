"""Where a model is and what it runs on: the models shipped inside the package, a name
or path checked before anything loads, the torch device and attention kernel."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Optional

import torch

from guardrail.errors import ModelLoadError

DEFAULT_MODEL = Path(__file__).resolve().parent.parent / "models" / "default"
# models shipped inside the package, by the short name ``detector.model`` may give
SHIPPED_MODELS = {"default": DEFAULT_MODEL, "pcw": DEFAULT_MODEL.parent / "pcw"}


def model_source(name_or_path: "Optional[str | os.PathLike]") -> "str | Path":
    """Where a model is: a shipped model by name (None: the default), else the path
    or Hugging Face id as given."""
    if name_or_path is None:
        return DEFAULT_MODEL
    return SHIPPED_MODELS.get(str(name_or_path), name_or_path)


def pick_device(device: Optional[str]) -> torch.device:
    """``device``, or CUDA when there is one; a CUDA device this torch cannot see is a
    :class:`ModelLoadError`, not torch's assertion at the first tensor."""
    if not device:
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    dev = torch.device(device)
    if dev.type == "cuda" and (dev.index or 0) >= torch.cuda.device_count():
        raise ModelLoadError(f"device {device!r}: this torch sees {torch.cuda.device_count()} "
                             f"CUDA devices (CUDA build: {torch.version.cuda or 'no'})")
    return dev


def model_path(name_or_path: "Optional[str | os.PathLike]") -> Path:
    """:func:`model_source` as a path, checked: a shipped model that is missing, or a
    path (absolute, relative, or of more than two parts) that names nothing, is a
    :class:`ModelLoadError`.  Anything else may be a Hugging Face id."""
    path = Path(model_source(name_or_path))
    if str(name_or_path or "default") in SHIPPED_MODELS and not (path / "config.json").exists():
        raise ModelLoadError(f"the shipped model {str(name_or_path or 'default')!r} is missing "
                             f"at {path}; reinstall guardrail")
    if not path.exists() and (path.is_absolute() or str(name_or_path).startswith(
            (".", "~")) or len(path.parts) > 2):
        raise ModelLoadError(f"cannot load detector model {str(name_or_path)!r}: "
                             "no such directory (and not a Hugging Face id)")
    return path


def pick_attention(device: torch.device) -> str:
    """flash-attn 2 on CUDA when it is installed, else PyTorch SDPA (fused kernels on CPU too)."""
    if device.type == "cuda":
        try:
            import flash_attn  # noqa: F401
            return "flash_attention_2"
        except ImportError:
            pass
    return "sdpa"

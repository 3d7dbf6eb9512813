"""Building the engine ``verification.engine`` names; torch is imported here, lazily."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional

from guardrail.config import GuardrailConfig
from guardrail.engine.local import LocalVerifier
from guardrail.engine.seam import Verifier

if TYPE_CHECKING:
    from guardrail.contexts import ContextStore
    from guardrail.engine.prepared import PreparedContextCache


def load_detector(config: GuardrailConfig) -> Any:
    """The configured detector (torch is imported here, not at module import)."""
    from guardrail.model import Detector
    from guardrail.model.states import StateCache

    det = Detector.from_pretrained(config.detector.model, device=config.detector.device,
                                   dtype=model_dtype(config.detector.dtype,
                                                     config.detector.device))
    if hasattr(det, "states"):  # a Parallel Context Windows model keeps encoded contexts
        import torch

        det.states = StateCache(config.cache.states_max_bytes)
        name = config.cache.states_dtype
        if name == "auto":
            bf16 = det.device.type == "cuda" or torch.ops.mkldnn._is_mkldnn_bf16_supported()
            name = "bfloat16" if bf16 else "float32"
        det.state_dtype = getattr(torch, name)
    return det


def model_dtype(name: str, device: Optional[str]) -> Any:
    """The torch dtype ``detector.dtype`` names on ``device`` (None: CUDA if any)."""
    import torch

    from guardrail.model.sources import pick_device

    if name != "auto":
        return getattr(torch, name)
    if pick_device(device).type == "cuda":
        return torch.bfloat16
    native = [getattr(torch.cpu, f, lambda: False)
              for f in ("_is_avx512_bf16_supported", "_is_amx_tile_supported")]
    return torch.bfloat16 if any(f() for f in native) else torch.float32


def load_local_verifier(config: GuardrailConfig) -> LocalVerifier:
    """A ``LocalVerifier`` around the configured detector (``guardrail check``, demo)."""
    return LocalVerifier(load_detector(config), config.scheduler,
                         model_name=config.detector.model or "default")


def build_verifier(config: GuardrailConfig, *, detector: Any = None,
                   contexts: "Optional[PreparedContextCache]" = None,
                   store: "Optional[ContextStore]" = None) -> Verifier:
    """The verifier ``verification.engine`` names, around ``detector`` (default: the
    configured one, loaded here).  The scheduler uses ``contexts`` (default: its own
    in-process cache) and resolves bare context ids with ``store``."""
    detector = detector if detector is not None else load_detector(config)
    name = config.detector.model or "default"
    if config.verification.engine == "local":
        return LocalVerifier(detector, config.scheduler, model_name=name)
    from guardrail.engine.scheduler import Scheduler

    return Scheduler(detector, config.scheduler, contexts=contexts, store=store,
                     model_name=name)

"""The detector at serving time: inputs, windows, spans, and the encoder's layer loop.

Token-level hallucination detection with early exits; imports torch.
"""

from guardrail.model.detector import DetectInput, Detector, PreparedInput
from guardrail.model.encoder import EarlyExitModel, ExitAdapter
from guardrail.model.inputs import PreparedContext
from guardrail.model.pcw import PcwDetector  # registers attention "pcw" with Detector
from guardrail.model.sources import DEFAULT_MODEL

__all__ = ["DEFAULT_MODEL", "DetectInput", "Detector", "EarlyExitModel", "ExitAdapter",
           "PcwDetector", "PreparedContext", "PreparedInput"]

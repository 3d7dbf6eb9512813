"""Token-level hallucination detection with early exits."""

from guardrail.detector.detector import DEFAULT_MODEL, DetectInput, Detector, PreparedInput
from guardrail.detector.inputs import PreparedContext
from guardrail.detector.model import EarlyExitModel, ExitAdapter

__all__ = ["DEFAULT_MODEL", "DetectInput", "Detector", "EarlyExitModel", "ExitAdapter",
           "PreparedContext", "PreparedInput"]

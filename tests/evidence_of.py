"""What the evidence makes of one sentence against one grounding, for the evidence tests:
the basis a flag would rest on, and the numbers the grounding does not hold."""

from guardrail.evidence.features import ContextEvidence
from guardrail.evidence.judge import basis


def basis_of(context: str, sentence: str) -> str:
    return basis(ContextEvidence.build([context]).features(sentence))


def missing_texts(context: str, sentence: str) -> list[str]:
    """The numbers missing, as the sentence writes them."""
    ev = ContextEvidence.build([context]).features(sentence)
    return [sentence[n.start:n.end] for n in ev.missing_numbers]


def missing_values(context: str, sentence: str) -> list[float]:
    return [n.value for n in ContextEvidence.build([context]).features(sentence).missing_numbers]

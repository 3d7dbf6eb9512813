"""The sentence-level decision: is this sentence supported, and if not, why.

The proxy acts on sentences, so it decides on sentences.  ``SentenceJudge`` is a small
logistic model over the detector's token probabilities inside the sentence and the
evidence features of ``features.py`` (values found: numbers, times, dates, counts;
content words found, the best context line, names, negation, a value of another record,
nothing anchored in the context at all), one per exit layer, fitted by ``guardrail judge
fit`` on data the detector never trained on and shipped in the model's
``guardrail.json`` under ``"judge"``.  Its threshold is chosen for the proxy's first
goal: supported text passes untouched.  One piece of evidence is a rule rather than a
weight: a value that the sentence's closest context line states otherwise ("completed
in 1950" against "completed in 1889") is flagged (``SentenceJudge.decide``).

Every flag is explained (HaluGate's explainer, as a label rather than a second model):

* ``contradicted`` — the context speaks of the same thing and says otherwise: a field
  or the closest line holding another value of the sort the sentence states, a value
  the context holds for another record (``record_gap``), values swapped between
  records, a value the context lacks in a sentence that names one of its lines
  (``ABOUT_LINE``) or answers a question asking for a value ("When was it built?"),
  or the sentence standing in that line and still flagged (a negation the line does
  not share, words it relates otherwise);
* ``unverifiable`` — the context does not speak of it: a value, a negation or words
  that no one line of it is about (RAGTruth's "baseless info", VitaminC's "not enough
  info"), an extra a tool result does not list, a general claim;

with a severity (``high``: a changed value, or probability >= 0.9; ``medium`` >= 0.75;
``low`` otherwise) and the context line the sentence was closest to.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Literal, Mapping, Optional, Sequence

from guardrail.evidence.claims import is_claim
from guardrail.evidence.features import ContextEvidence, SentenceEvidence
from guardrail.types import Explanation

FEATURES = ("p_max", "p_mean", "p_frac", "logit_p_max", "has_number", "number_missing",
            "number_missing_share", "word_precision", "best_line_recall", "name_missing",
            "negation_mismatch", "structured", "log_words", "p_max_x_number_missing",
            "p_max_x_word_gap", "p_max_x_structured", "no_context_numbers_x_number",
            "record_gap", "values_all_found", "unanchored", "field_changed", "field_agreed",
            "line_value_changed", "flag_changed", "values_swapped", "general_claim",
            "unlisted_extra")
FIRST_FEATURES = FEATURES[:17]
"""What a judge fitted before ``record_gap`` reads (its JSON names no features)."""

_LINE_CHANGED = FEATURES.index("line_value_changed")
_FLAG_CHANGED = FEATURES.index("flag_changed")
_SWAPPED = FEATURES.index("values_swapped")
_GENERAL = FEATURES.index("general_claim")
_EXTRA = FEATURES.index("unlisted_extra")
RULES = ("line_value_changed", "flag_changed", "values_swapped", "general_claim",
         "unlisted_extra")
FITTED_FEATURES = tuple(f for f in FEATURES if f not in RULES)
"""What ``guardrail judge fit`` weighs; a changed value, a yes/no field said the other
way round, values swapped between the records a sentence names, a general claim beside
a tool result and an extra the result does not list are rules (``decide``)."""
_YES_NO = re.compile(r":\s*(?:true|false|yes|no)\s*$", re.I)

Kind = Literal["contradicted", "unverifiable"]
Severity = Literal["low", "medium", "high"]


def feature_vector(ev: SentenceEvidence, probs: Sequence[float], structured: bool
                   ) -> list[float]:
    """The judge's inputs for one sentence (order: ``FEATURES``)."""
    p_max = max(probs, default=0.0)
    p_mean = sum(probs) / len(probs) if probs else 0.0
    p_frac = sum(p >= 0.5 for p in probs) / len(probs) if probs else 0.0
    p = min(max(p_max, 1e-4), 1 - 1e-4)
    miss = float(bool(ev.missing_numbers))
    # nothing of it stands in the context: no value found, no name found
    anchored = len(ev.missing_numbers) < ev.n_numbers or ev.missing_names < ev.n_names
    gap = 1.0 - ev.word_precision
    return [p_max, p_mean, p_frac, math.log(p / (1 - p)), float(ev.n_numbers > 0), miss,
            len(ev.missing_numbers) / ev.n_numbers if ev.n_numbers else 0.0,
            ev.word_precision, ev.best_line_recall, float(ev.missing_names > 0),
            float(ev.negation_mismatch), float(structured), math.log1p(ev.n_words),
            p_max * miss, p_max * gap, p_max * float(structured),
            float(ev.n_numbers > 0 and not ev.context_has_numbers), ev.record_gap,
            float(ev.n_numbers > 0 and not ev.missing_numbers),
            0.0 if anchored else 1.0 - ev.word_precision,
            float(ev.field_changed is not None), float(ev.field_agreed),
            float(ev.line_changed is not None),
            float(ev.field_changed is not None and bool(_YES_NO.search(ev.field_changed))),
            float(ev.swapped), float(ev.general), float(ev.extra is not None)]


ABOUT_LINE = {"structured": 0.5, "prose": 0.75}
"""The share of a sentence's content words that one line of its grounding must hold for
the sentence to speak of what that line says (its precision over the whole grounding
at least 0.6 as well).  A tool result's line is one field, so half of the words is
already that field; a passage's line is a sentence that shares half of an added
detail's words as easily.  Measured on the data's own kinds (docs/model-card.md,
"What a flag is called"): RAGTruth's training split for prose, the hand-written sets
of part A and B and the generated training family for tool results."""


def explain(ev: SentenceEvidence, prob: float, structured: bool = False,
            asks_value: bool = False) -> Explanation:
    """Why a flagged sentence is flagged.  ``asks_value``: its question asks for a value
    (``claims.asks_value``), so a value the grounding lacks answers it otherwise."""
    # a value the sentence says it worked out and no rule reproduces is unverified
    # arithmetic, not a value the grounding states otherwise
    lacks = bool(ev.missing_numbers) and ev.context_has_numbers and not ev.works_out
    said_otherwise = ev.record_gap > 0 or ev.field_changed is not None \
        or ev.line_changed is not None or ev.swapped
    names_line = ev.best_line_recall >= ABOUT_LINE["structured" if structured else "prose"] \
        and not ev.works_out
    about_it = names_line and ev.word_precision >= 0.6
    why = basis(ev)  # what usually happens, or an extra not listed: no value said otherwise
    # a negation or a value the grounding lacks contradicts it only where the sentence
    # speaks of one of its lines ("An adult ticket costs 41.2 euros" of the adult
    # ticket's record: its unit and verb are no field's words) or the value answers what
    # was asked ("completed in 1950" to "When was it built?"); elsewhere the grounding
    # says nothing of it
    kind: Kind = "contradicted" if (said_otherwise or about_it
                                     or lacks and (names_line or asks_value)) \
        and why not in ("general", "unlisted") else "unverifiable"
    changed = lacks or said_otherwise
    severity: Severity = "high" if changed or prob >= 0.9 else \
        "medium" if prob >= 0.75 else "low"
    evidence = f"not listed: {ev.extra}" if why == "unlisted" else \
        ev.field_changed or ev.line_changed or ev.best_line
    return Explanation(kind, severity, evidence, why, "structured" if structured else "prose")


def basis(ev: SentenceEvidence) -> str:
    """What a flag of the sentence rests on (``types.BASES``, strongest first)."""
    if ev.field_changed is not None or ev.line_changed is not None or ev.swapped:
        return "value_changed"
    if ev.record_gap > 0:
        return "other_record"
    if ev.general:
        return "general"
    if ev.extra is not None:
        return "unlisted"
    if ev.missing_numbers:
        return "value_worked_out" if ev.works_out else "value_missing"
    return "negation" if ev.negation_mismatch else "words"


def restates(ev: SentenceEvidence) -> bool:
    """The sentence says one line of the grounding again (``restated.py``: its words
    and numbers in that line, in order, negated alike), and nothing else speaks against
    it: no value the grounding lacks or holds for another record, no field or line
    that states one of its values otherwise."""
    return ev.restated and not ev.missing_numbers and not ev.record_gap \
        and ev.field_changed is None and ev.line_changed is None


@dataclass(frozen=True)
class Head:
    """One exit's logistic model over ``features`` (names from ``FEATURES``; a judge
    fitted on fewer features than today's keeps reading just those)."""

    mean: tuple[float, ...]
    scale: tuple[float, ...]
    weights: tuple[float, ...]
    bias: float
    threshold: float
    features: tuple[str, ...] = FEATURES

    def __post_init__(self) -> None:
        unknown = set(self.features) - set(FEATURES)
        if unknown:
            raise ValueError(f"the judge reads unknown features {sorted(unknown)}; refit it "
                             "with `guardrail judge fit`")
        n = len(self.features)
        if not len(self.mean) == len(self.scale) == len(self.weights) == n:
            raise ValueError(f"a judge head needs {n} means, scales and weights")
        object.__setattr__(self, "_use", tuple(FEATURES.index(f) for f in self.features))

    def prob(self, x: Sequence[float]) -> float:
        """``x``: every feature of ``FEATURES``, in order."""
        z = self.bias + sum(w * (x[i] - m) / s for w, i, m, s in
                            zip(self.weights, self._use, self.mean, self.scale))
        return 1.0 / (1.0 + math.exp(-max(-40.0, min(40.0, z))))

    def to_json(self) -> dict:
        return {"mean": list(self.mean), "scale": list(self.scale),
                "weights": list(self.weights), "bias": self.bias, "threshold": self.threshold}

    @classmethod
    def from_json(cls, d: Mapping, features: Sequence[str] = FEATURES) -> "Head":
        return cls(tuple(map(float, d["mean"])), tuple(float(s) or 1.0 for s in d["scale"]),
                   tuple(map(float, d["weights"])), float(d["bias"]), float(d["threshold"]),
                   tuple(features))


@dataclass(frozen=True)
class Judgement:
    """The judge's decision on one sentence."""

    prob: float
    flagged: bool
    claim: bool
    explanation: Optional[Explanation]
    evidence: Optional[SentenceEvidence]


class SentenceJudge:
    """Heads per exit layer; a check that exited at a layer without its own head uses
    the head of the nearest deeper layer (else the deepest).

    Tool results and prose get heads of their own where the judge has both
    (``structured_heads`` decide sentences grounded in a structured context): what
    gives a sentence away differs (a value missing from a record vs a paraphrase of
    a passage), and so does the threshold that keeps 95 % of the supported ones."""

    def __init__(self, heads: Mapping[int, Head],
                 structured_heads: Optional[Mapping[int, Head]] = None):
        if not heads:
            raise ValueError("a judge needs at least one head")
        self.heads = dict(sorted(heads.items()))
        self.structured_heads = dict(sorted((structured_heads or {}).items()))

    @classmethod
    def from_json(cls, d: Mapping) -> "SentenceJudge":
        features = tuple(d.get("features", FIRST_FEATURES))
        return cls({int(k): Head.from_json(v, features) for k, v in d["heads"].items()},
                   {int(k): Head.from_json(v, features)
                    for k, v in d.get("structured_heads", {}).items()})

    def to_json(self) -> dict:
        every = [*self.heads.values(), *self.structured_heads.values()]
        features = {h.features for h in every}
        if len(features) != 1:
            raise ValueError("every head of a judge reads the same features")
        out = {"features": list(features.pop()),
               "heads": {str(k): h.to_json() for k, h in self.heads.items()}}
        if self.structured_heads:
            out["structured_heads"] = {str(k): h.to_json()
                                       for k, h in self.structured_heads.items()}
        return out

    def head(self, layer: int, structured: bool = False) -> Head:
        heads = self.structured_heads if structured and self.structured_heads else self.heads
        for k, h in heads.items():
            if k >= layer:
                return h
        return heads[max(heads)]

    def decide(self, x: Sequence[float], layer: int, structured: bool,
               threshold: Optional[float] = None) -> tuple[float, bool]:
        """The probability that a claim is unsupported, from its features ``x``
        (``FEATURES``), and whether it is flagged.  A value that the sentence's closest
        context line states otherwise ("completed in 1950" against "completed in 1889")
        reaches the head's threshold whatever the head says: the calibration data hold
        few such sentences, and a head fitted on them weighs it lightly.  So does a
        yes/no field of a tool result that the sentence names and says the other way
        round ("It includes a checked bag." for ``checked_bag_included: false``): on 20
        sets of hand-written tool turns, 20 such sentences were wrong and one right.  And
        so do two values or more that the sentence gives each to a record it names while
        another record it names holds them ("the back door lock is at 18%, the front
        door's at 64%", the two swapped): on 33 sets, 3 such sentences, all wrong.  And
        so does a general claim beside a tool result that holds fewer than half of its
        words ("Refunds like this usually take three to five business days."): what
        usually happens is no record's; measured in docs/model-card.md ("A general
        claim beside a tool result").  And so does an extra that the sentence adds to
        what a tool result lists ("The repair also comes with a one-year guarantee.")
        where the result names fewer than half of its words (extras.py)."""
        head = self.head(layer, structured)
        prob = head.prob(x)
        if x[_LINE_CHANGED] > 0.5 or x[_FLAG_CHANGED] > 0.5 or x[_SWAPPED] > 0.5 \
                or x[_GENERAL] > 0.5 or x[_EXTRA] > 0.5:
            prob = max(prob, head.threshold)
        return prob, prob >= (head.threshold if threshold is None else threshold)

    def judge(self, evidence: ContextEvidence, sentence: str, probs: Sequence[float],
              layer: int, threshold: Optional[float] = None, before: str = "",
              features: Optional[SentenceEvidence] = None) -> Judgement:
        """``threshold`` (the policy's) overrides the head's own; ``before`` is the
        answer up to the sentence (what "It" refers to); ``features``: the sentence's
        ``evidence.features(sentence, before)`` where the caller has them already."""
        if not is_claim(sentence):
            return Judgement(0.0, False, False, None, None)
        ev = features if features is not None else evidence.features(sentence, before)
        # word for word from the grounding, or one of its lines said again: nothing to
        # doubt (only threshold 0 flags it)
        if evidence.copied(sentence) or restates(ev):
            prob, flagged = 0.0, threshold is not None and threshold <= 0.0
        else:
            prob, flagged = self.decide(feature_vector(ev, probs, evidence.structured), layer,
                                        evidence.structured, threshold)
        why = explain(ev, prob, evidence.structured, evidence.asks_value) if flagged else None
        return Judgement(prob, flagged, True, why, ev)

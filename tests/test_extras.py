"""An extra a sentence adds to what a tool result lists (``evidence/extras.py``): read,
explained and stopped as a rule of the judge, in tool results only."""

import json

import pytest

from guardrail.config.policy import PolicyConfig
from guardrail.evidence.extras import unlisted
from guardrail.evidence.features import ContextEvidence
from guardrail.evidence.judge import Head, SentenceJudge
from guardrail.types import Explanation

REPAIR = json.dumps({"repair_id": "CR-2210", "item": "longcase clock",
                     "work": "movement overhaul", "price_cents": 42000,
                     "case_included": True, "collection_date": "2025-04-11",
                     "parts": [{"name": "mainspring", "cost_cents": 6500},
                               {"name": "suspension spring", "cost_cents": 1200}]})


def _stems(context: str) -> frozenset[str]:
    return ContextEvidence.build([context], "").stems


@pytest.mark.parametrize("sentence, extra", [
    ("The repair also comes with a one-year guarantee on the movement.",
     "a one-year guarantee on the movement"),
    ("The price also covers collection and delivery by van, so you needn't carry it.",
     "collection and delivery by van"),
    ("They also offer free cleaning of the dial.", "free cleaning of the dial"),
    ("You'll also get access to a courtesy phone line while it is away.",
     "a courtesy phone line"),
])
def test_an_extra_the_result_names_nothing_of_is_unlisted(sentence, extra):
    assert unlisted(sentence, _stems(REPAIR)) == extra


@pytest.mark.parametrize("sentence", [
    "The overhaul also includes the case.",                  # ``case_included: true``
    "The price also covers a new mainspring and a suspension spring.",  # its parts
    "The repair comes with a one-year guarantee on the movement.",  # no "also": no extra
    "It also gets along with the other clocks.",             # no extra given
    "You can also get 12 ounces for $6.99.",                 # a size and a price: values
    "The price also includes a $65 mainspring.",
    "It also comes with free access at no extra charge.",    # words of any perk alone
])
def test_an_extra_the_result_lists_or_no_extra_at_all_is_not(sentence):
    assert unlisted(sentence, _stems(REPAIR)) is None


def _judge() -> SentenceJudge:
    # a head that would pass everything: only the rule can flag
    return SentenceJudge({4: Head((0.0,), (1.0,), (0.0,), -20.0, 0.5, ("p_max",))})


def test_the_judge_stops_an_unlisted_extra_beside_a_tool_result_as_unverifiable():
    ev = ContextEvidence.build([REPAIR], "What does the clock repair cost?")
    j = _judge().judge(ev, "The repair also comes with a one-year guarantee on the movement.",
                       [0.01], 4)
    assert j.flagged and j.evidence.extra == "a one-year guarantee on the movement"
    assert j.explanation == Explanation("unverifiable", "low",
                                        "not listed: a one-year guarantee on the movement",
                                        "unlisted", "structured")
    assert not _judge().judge(ev, "The overhaul also includes the case.", [0.01], 4).flagged


def test_prose_grounding_reads_no_extra():
    """A passage tells of things a record would list in fields; the rule stays with tool
    results, where what is listed is all there is."""
    prose = ("The workshop overhauled the longcase clock's movement for $420, "
             "including its case, and it can be collected on April 11.")
    ev = ContextEvidence.build([prose], "")
    j = _judge().judge(ev, "The repair also comes with a one-year guarantee.", [0.01], 4)
    assert j.evidence.extra is None and not j.flagged


def test_a_policy_may_name_the_basis():
    policy = PolicyConfig(by_basis={"structured.unlisted": "annotate"})
    assert policy.by_basis == {"structured.unlisted": "annotate"}
    with pytest.raises(ValueError, match="unknown basis"):
        PolicyConfig(by_basis={"structured.unlisted_extra": "annotate"})

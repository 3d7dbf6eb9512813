"""A general claim beside a tool result ("Refunds usually take three to five business
days."): claims.general, read through ContextEvidence, the judge's rule, its basis and
`guardrail check` with the real detector."""

import json

import pytest
from typer.testing import CliRunner

from guardrail.cli import app
from guardrail.evidence.claims import general
from guardrail.evidence.features import ContextEvidence
from guardrail.evidence.judge import FEATURES, Head, SentenceJudge, basis, explain
from guardrail.types import BASIS_KEYS

REFUND = json.dumps({"refund_id": "RF-2231", "order_id": "A-1043", "amount_cents": 4200,
                     "status": "approved", "approved_at": "2025-03-04T14:30:00",
                     "method": "card", "card_last4": "4821"})
GENERAL = "Refunds like this usually take three to five business days to reach your card."


@pytest.mark.parametrize("sentence", [
    GENERAL, "Spring boxes tend to sell out by midday.", "Offers are typically made by phone.",
    "As a rule, waitlisted riders are emailed the evening before.",
    "Advisories are normally lifted after two clean samples.",
    "Maintenance crews often clear faults like these within a day.",
    # what most of a kind do
    "Most patients with chronic back pain notice improvement within three or four sessions.",
    "Many groups on the boat tip the crew about 20% of the trip price."])
def test_what_usually_happens_is_a_general_claim(sentence):
    assert general(sentence)


@pytest.mark.parametrize("sentence", [
    # what most of the records were or did
    "Most boats were paid $5.25 a pound, though Osprey II got $5.40.",
    "Most items arrived as ordered.", "Most eggs graded large at 62%.",
    "Most customers went for the basic $10 shine.", "Most of the lots are organic."])
def test_what_most_of_the_records_did_is_not(sentence):
    assert not general(sentence)


TRAIL = json.dumps({"trail": "Windle Crag Scramble", "length_km": 9.4,
                    "typical_duration_min": 375, "dogs_allowed": True, "parking_spaces": 10})


def test_what_most_do_in_the_tool_result_s_values_is_the_result_s():
    def said(sentence):
        return ContextEvidence.build([TRAIL]).features(sentence).general
    assert not said("Most walkers finish the Windle Crag Scramble in 6 hours 15 minutes.")
    assert said("Most walkers stop for lunch at the summit cairn.")
    assert said("Most walkers tip their guide about 10%.")  # a percentage is no record's


@pytest.mark.parametrize("sentence", [
    "The UV clarifier is running normally.", "Last night's firing finished normally.",
    "The refund was approved on March 4.", "How often should I water it?",
    "Squat is the lift you've trained most often, with 22 sessions."])
def test_a_state_a_frequency_asked_or_a_report_is_not(sentence):
    assert not general(sentence)


def test_only_beside_a_tool_result_that_lacks_most_of_its_words():
    assert ContextEvidence.build([REFUND]).features(GENERAL).general
    # a tool result that says it (a note) supports it; prose says what usually happens
    noted = json.loads(REFUND) | {"note": "Card refunds usually take three to five business "
                                          "days to reach the card."}
    assert not ContextEvidence.build([json.dumps(noted)]).features(GENERAL).general
    prose = ("Refund RF-2231 for order A-1043 was approved on March 4, 2025 and paid back "
             "to the card ending 4821.")
    assert not ContextEvidence.build([prose]).features(GENERAL).general


def test_the_judge_flags_it_as_unverifiable_whatever_its_head_says():
    n = len(FEATURES)
    judge = SentenceJudge({4: Head((0.0,) * n, (1.0,) * n, (0.0,) * n, -6.0, 0.7)})
    got = judge.judge(ContextEvidence.build([REFUND]), GENERAL, [0.01], 4)
    assert got.flagged and got.prob == pytest.approx(0.7)
    assert got.explanation.kind == "unverifiable"
    assert got.explanation.basis == "general" and basis(got.evidence) == "general"
    assert explain(got.evidence, 0.7, structured=True).kind == "unverifiable"
    assert "structured.general" in BASIS_KEYS
    right = judge.judge(ContextEvidence.build([REFUND]), "The refund was approved.", [0.01], 4)
    assert not right.flagged


def test_check_redacts_it_and_passes_the_report_it_follows():
    runner = CliRunner()
    answer = "Your refund RF-2231 for order A-1043 was approved. " + GENERAL
    r = runner.invoke(app, ["check", "--context", REFUND, "-q", "Where is my refund?",
                            "-a", answer, "--json"])
    assert r.exit_code == 1, r.output
    first, last = json.loads(r.stdout)["sentences"]
    assert first["action"] == "release" and first["released"] == first["original"]
    assert last["action"] == "redact" and last["released"] != last["original"]
    assert last["explanation"]["basis"] == "general"
    assert last["explanation"]["kind"] == "unverifiable"

"""guardrail.evidence: structured contexts rendered without losing a value, the evidence
features, the sentence judge and its explanation, and what the policy does with them."""

from __future__ import annotations

import json
import math

import pytest

from guardrail.evidence.claims import is_claim
from guardrail.evidence.features import ContextEvidence, numbers
from guardrail.evidence.judge import (FEATURES, FIRST_FEATURES, FITTED_FEATURES, Head,
                                      SentenceJudge, explain, feature_vector)
from guardrail.evidence.render import render, written_date
from guardrail.stream.policy import EffectivePolicy, Outcome, decide, judged
from guardrail.types import BASES, Action, Detection, Explanation, Span

TOOL = {"name": "Eiffel Tower", "city": "Paris", "completed": 1889, "height_m": 330,
        "opened": "1889-03-31", "lit": True, "closed": None, "visitors": 1234567,
        "share_foreign": 0.25, "architect": {"firstName": "Gustave", "lastName": "Eiffel"},
        "tags": ["iron", "landmark"], "tickets": [{"kind": "adult", "price_eur": 29.4},
                                                   {"kind": "child", "price_eur": 7.4}]}


def _leaves(value):
    if isinstance(value, dict):
        for v in value.values():
            yield from _leaves(v)
    elif isinstance(value, list):
        for v in value:
            yield from _leaves(v)
    else:
        yield value


@pytest.mark.parametrize("indent", [None, 2])
def test_json_renders_every_value_on_a_line_that_points_back_into_the_original(indent):
    text = json.dumps(TOOL, indent=indent)
    r = render(text)
    assert r.format == "json" and r.structured
    for leaf in _leaves(TOOL):
        literal = json.dumps(leaf)
        assert any(literal.strip('"') in line.text or str(leaf) in line.text
                   for line in r.lines), leaf
    for line in r.lines:
        if line.source is not None:
            s, e = line.source
            assert text[s:e].strip('"') in line.text or text[s:e] in ("true", "null")
    lines = r.text.split("\n")
    assert "height m: 330" in lines and "architect > first name: Gustave" in lines
    assert "opened: 1889-03-31 (March 31, 1889)" in lines
    # a record stays together, opened by its position
    i = lines.index("tickets 2 of 2:")
    assert lines[i + 1:i + 3] == ["tickets 2 > kind: child", "tickets 2 > price eur: 7.4"]


def test_tables_prose_and_odd_json_render_deterministically():
    table = "| City | Temp (C) |\n|---|---|\n| Paris | 21 |\n| Rome | 25.5 |"
    assert render(table).text == "city: Paris; temp (c): 21\ncity: Rome; temp (c): 25.5"
    prose = "The tower is 330 m tall.\n\nIt opened in 1889."
    assert render(prose).format == "text" and not render(prose).structured
    assert render("[1, 2, 3]").text == "1\n2\n3"
    assert render("{}").text == "(empty)"
    assert render("{not json").format == "text"
    deep = "[" * 100 + "]" * 100
    assert render(deep).structured  # rendered up to a depth, never a RecursionError
    assert render(json.dumps(TOOL)).text == render(json.dumps(TOOL)).text
    assert written_date("2024-03-01T14:30:00Z") == "March 1, 2024, 14:30 UTC"
    assert written_date("2024-03-01T14:30:15Z") == "March 1, 2024, 14:30:15 UTC"
    assert written_date("2024-02-30") is None
    # a month: "last serviced in September 2024" for ``last_serviced: 2024-09``
    assert written_date("2024-09") == "September 2024"
    assert written_date("2024-13") is None and written_date("1200-10") is None
    ev = ContextEvidence.build([json.dumps({"last_serviced": "2024-09", "running": True})])
    assert not ev.features("It was last serviced in September 2024.").missing_numbers
    assert ev.features("It was last serviced in October 2024.").field_changed
    # a month stands for no day of it: the session on March 18 is still that record's
    month = json.dumps({"month": "2025-03", "sessions": [
        {"date": "2025-03-04", "tutor": "Hannah Cole", "paid": True},
        {"date": "2025-03-11", "tutor": "Dev Patel", "paid": True},
        {"date": "2025-03-18", "tutor": "Hannah Cole", "paid": False}]})
    got = ContextEvidence.build([month]).features(
        "The session on March 18 with Hannah Cole has been paid.")
    assert got.field_changed is not None


def test_a_log_lines_timestamp_is_a_date_and_a_time_an_answer_reads_out():
    """Common Log Format ("12/Mar/2024:14:02:11 +0000"): "March 12" and "2:02 p.m." are
    in it; its pieces are no numbers of their own (12, 14, 02, 11)."""
    line = '203.0.113.9 - - [12/Mar/2024:14:02:11 +0000] "POST /login HTTP/1.1" 401 512'
    assert [(n.kind, n.value) for n in numbers(line)][0] == ("date", 20240312.0)
    ev = ContextEvidence.build([line])
    for said in ("The failed login happened on March 12 at 2:02 p.m.",
                 "It returned a 401 at 14:02 on 12 March 2024."):
        assert ev.features(said).missing_numbers == (), said
    assert [n.value for n in ev.features("It failed on March 13.").missing_numbers] == [313.0]


def test_numbers_are_read_the_way_answers_write_them():
    got = [(n.value, n.percent, n.hedged) for n in
           numbers("About 1.2 million people, 25% of them, paid $1,234.50; it is 330 m tall.")]
    assert got == [(1.2e6, False, True), (25.0, True, False), (1234.5, False, False),
                   (330.0, False, False)]


@pytest.mark.parametrize("sentence,claim", [
    ("Here is what I found:", False),
    ("Let me know if you need anything else.", False),
    ("Would you like more details?", False),
    ("Sure!", False),
    ("Here are the flights I found for Monday:", False),
    ("From the tool response:", False),
    ("Open hotels in Lisbon:", False),
    ("The Eiffel Tower was completed in 1889.", True),
    ("Sure, the tower was designed by Gustave Eiffel.", True),
    ("Here is the weather in Paris: 21 degrees and sunny.", True),
    # caveats about the data, not claims about the world
    ("These figures come from the tool and could be out of date.", False),
    ("Prices are subject to change.", False),
    ("Fares may change without notice.", False),
    ("Please verify with the airline before you travel.", False),
    ("I recommend checking the official site.", False),
    ("Double-check with the provider before relying on these values.", False),
    ("Check with the front desk before you arrive.", False),
    ("Verify the rates directly with the hotel.", False),
    ("Check-in opens in the main lobby.", True),      # a noun, not advice
    ("Confirmed bookings cannot be moved.", True),
    ("Checking accounts earn no interest.", True),
    ("It can change lanes automatically.", True),
    ("It may change colour in the sun and fade.", True),
    ("The data may have changed to 12 seats.", True),  # a value: checked
    # offers to do more
    ("Let me know if you'd like me to draft a reply in German.", False),
    ("Want me to book the earlier train for you?", False),
    ("If you'd like, I can compare them with the Lyon offices as well.", False),
    ("If you'd like a window seat, the Lyon train has them.", True),
    # an offer asked as a question, whatever it names; unless it says why
    ("Want me to retry it to the account ending 6789 instead?", False),
    ("Would you like the $49 plan, which includes 5 seats?", True),
    # a lead-in to a list that names what follows
    ("Here's the Payments Primary rotation (times are Berlin time):", False),
    ("The rotation is handled by the Payments team in Berlin:", True),
    # the assistant's own next step, before a tool call, and small talk
    ("I'll look up your order now.", False),
    ("Let me pull up the latest tracking details.", False),
    ("Okay, I'm going to search the knowledge base for that.", False),
    ("Good question!", False),
    ("Enjoy your dinner!", False),                     # a wish
    ("Have a great trip!", False),
    ("Safe travels!", False),
    ("Enjoy the 20% discount on your next order!", True),  # a value: checked
    ("Enjoy free shipping on every order.", True),         # said, not wished
    ("Enjoy your free upgrade to business class!", True),  # a wish that says more
    ("Happy customers rated it highly!", True),
    ("Let me check: your order shipped yesterday.", True),  # what follows is a claim
    ("Let me pull up the tracking details, which show it was delivered.", True),
    ("I'll look up order 4471.", True),                      # a value: checked
    ("I will call the airline's rebooking desk for you, which closes at noon.", True),
    ("Good questions were asked at the Senate hearing.", True),
])
def test_a_sentence_without_a_claim_needs_no_check(sentence, claim):
    assert is_claim(sentence) is claim


def test_features_find_values_whatever_the_wording():
    ev = ContextEvidence.build([json.dumps(TOOL)], "Tell me about the Eiffel Tower.")
    assert ev.structured
    ok = ev.features("About 1.2 million people visit, 25% of them from abroad.")
    assert ok.n_numbers == 2 and ok.missing_numbers == ()
    bad = ev.features("The Eiffel Tower was completed in 1950.")
    assert [n.value for n in bad.missing_numbers] == [1950.0]
    assert explain(bad, 0.8).kind == "contradicted" and explain(bad, 0.8).severity == "high"
    away = ev.features("It is located in Lyon next to a famous bakery.")
    assert away.missing_names == 1 and explain(away, 0.8).kind == "unverifiable"
    assert explain(away, 0.95).severity == "high" and explain(away, 0.6).severity == "low"


@pytest.mark.parametrize("sentence, changed", [
    ("It was completed in 1950.", True),            # a year for a year
    ("It is 500 metres tall.", True),                # metres for metres
    ("It was completed in 1889 and is 324 metres tall.", True),
    ("About 9 million people visit it each year.", False),  # hedged: a rounding, maybe
    ("5. Climb the stairs for 15 minutes.", False),  # a list item's number is no value
    ("Climb the stairs at step 7.", False),          # bare numbers: of what sort?
    ("It is 330 metres tall.", False),               # supported
    ("It was completed in 1889 after 3 years of work.", False),  # a value added
    ("It is 330 metres tall and 125 metres wide.", False),        # 330 stated: added
    ("Its restaurant seats 200 guests.", False),     # no line of it
])
def test_a_value_changed_in_its_closest_prose_line_is_told_from_one_added(sentence, changed):
    line = "It was completed in 1889 and is 330 metres tall."
    visits = "About 7 million people visit it each year."
    steps = "Step 3: climb the stairs for 15 minutes."
    ev = ContextEvidence.build([f"The Eiffel Tower is in Paris. {line} {visits}\n{steps}"], "")
    got = ev.features(sentence)
    assert (got.line_changed is not None) == changed
    if changed:
        assert got.line_changed in (line, visits)
        assert explain(got, 0.6) == Explanation("contradicted", "high", got.line_changed,
                                                "value_changed", "prose")
        x = feature_vector(got, [0.1], False)
        assert x[FEATURES.index("line_value_changed")] == 1.0


def _head(weight_on: str, weight: float, threshold: float = 0.5) -> Head:
    n = len(FEATURES)
    w = [0.0] * n
    w[FEATURES.index(weight_on)] = weight
    return Head((0.0,) * n, (1.0,) * n, tuple(w), -1.0, threshold)


def _detection(response: str, prob: float) -> Detection:
    words, pos, offsets = response.split(" "), 0, []
    for w in words:
        offsets.append((pos, pos + len(w)))
        pos += len(w) + 1
    return Detection(response, (), tuple(offsets), (prob,) * len(offsets), 0.5, 4, 6)


def test_a_changed_value_is_flagged_whatever_the_head_says():
    """``decide``: a head fitted on data with few such sentences (here: one that reads
    only p_max) still flags a value its closest line states otherwise, explained; an
    operator's threshold above the head's still rules."""
    ev = ContextEvidence.build(["The tower is in Paris. It was completed in 1889."], "")
    judge = SentenceJudge({4: _head("p_max", 4.0, threshold=0.8)})
    bad = judge.judge(ev, "It was completed in 1950.", [0.01], 4)
    assert bad.flagged and bad.prob == pytest.approx(0.8)
    assert bad.explanation == Explanation("contradicted", "high",
                                          "It was completed in 1889.", "value_changed", "prose")
    assert not judge.judge(ev, "It was completed in 1889.", [0.01], 4).flagged
    assert not judge.judge(ev, "It was completed in 1950.", [0.01], 4, threshold=0.9).flagged
    assert FITTED_FEATURES == tuple(f for f in FEATURES if f not in (
        "line_value_changed", "flag_changed", "values_swapped", "general_claim",
        "unlisted_extra"))


def test_a_yes_no_field_said_the_other_way_round_is_flagged_whatever_the_head_says():
    """``decide``: "It includes a checked bag." for ``checked_bag_included: false`` is
    flagged at the head's threshold even by a head that reads only p_max, explained by
    the field's line; said as the result has it, or a field with a value other than yes
    or no, the rule stays out of it."""
    tool = json.dumps({"flight_no": "SK701", "checked_bag_included": False,
                       "seats_left": 22})
    ev = ContextEvidence.build([tool], "")
    judge = SentenceJudge({4: _head("p_max", 4.0, threshold=0.8)})
    bad = judge.judge(ev, "It includes a checked bag.", [0.01], 4)
    assert bad.flagged and bad.prob == pytest.approx(0.8)
    assert bad.explanation.kind == "contradicted"
    assert "checked bag included: false" in bad.explanation.evidence
    assert not judge.judge(ev, "It doesn't include a checked bag.", [0.01], 4).flagged
    x = feature_vector(ev.features("There are 23 seats left."), [0.01], True)
    assert x[FEATURES.index("flag_changed")] == 0.0


def test_the_judge_round_trips_and_refuses_another_feature_set():
    judge = SentenceJudge({4: _head("number_missing", 4.0), 6: _head("p_max", 4.0)})
    again = SentenceJudge.from_json(json.loads(json.dumps(judge.to_json())))
    assert again.heads == judge.heads
    assert judge.head(2) is judge.heads[4] and judge.head(6) is judge.heads[6]
    with pytest.raises(ValueError, match="unknown features"):
        SentenceJudge.from_json({**judge.to_json(), "features": ["p_max", *FEATURES[1:-1],
                                                                 "sentiment"]})
    with pytest.raises(ValueError, match="means, scales and weights"):
        SentenceJudge.from_json({**judge.to_json(), "features": ["p_max"]})


def test_a_judge_fitted_on_fewer_features_reads_just_those():
    """A judge from before ``record_gap`` (its JSON names 17 features) keeps working."""
    n = len(FIRST_FEATURES)
    w = [0.0] * n
    w[FIRST_FEATURES.index("number_missing")] = 4.0
    old = {"features": list(FIRST_FEATURES), "heads": {"4": {
        "mean": [0.0] * n, "scale": [1.0] * n, "weights": w, "bias": -1.0, "threshold": 0.5}}}
    head = SentenceJudge.from_json(old).head(4)
    x = [0.0] * len(FEATURES)
    x[FEATURES.index("record_gap")] = 100.0  # a feature it never read changes nothing
    assert head.prob(x) == pytest.approx(1 / (1 + math.exp(1.0)))
    x[FEATURES.index("number_missing")] = 1.0
    assert head.prob(x) == pytest.approx(1 / (1 + math.exp(-3.0)))


def test_judged_flags_a_changed_value_and_redacts_just_that_value():
    ev = ContextEvidence.build([json.dumps(TOOL)], "When was it completed?")
    judge = SentenceJudge({4: _head("number_missing", 4.0)})
    text = "The Eiffel Tower was completed in 1950."
    a = judged(_detection(text, 0.2), 0, len(text), judge, ev)
    assert a.flagged and a.explanation.kind == "contradicted"
    assert [(s.start, s.end) for s in a.spans] == [(34, 38)]
    policy = EffectivePolicy(Action.REDACT, None, True, "spans", "[x]", 0)
    assert decide(text, a, policy).released == "The Eiffel Tower was completed in [x]."
    fine = "The Eiffel Tower was completed in 1889."
    assert not judged(_detection(fine, 0.9), 0, len(fine), judge, ev).flagged
    lead = "Here is what I found:"
    none = judged(_detection(lead, 0.99), 0, len(lead), judge, ev)
    assert not none.flagged and not none.claim


def test_policy_acts_by_kind_of_flag():
    ev = ContextEvidence.build([json.dumps(TOOL)], "")
    judge = SentenceJudge({4: _head("p_max", 8.0)})
    policy = EffectivePolicy(Action.REDACT, None, True, "spans", "[x]", 0,
                             by_kind=(("unverifiable", Action.ANNOTATE),))
    away = "It is located in Lyon next to a famous bakery."
    a = judged(_detection(away, 0.95), 0, len(away), judge, ev)
    assert a.explanation.kind == "unverifiable"
    assert decide(away, a, policy).action is Action.ANNOTATE
    changed = "The Eiffel Tower was completed in 1950."
    b = judged(_detection(changed, 0.95), 0, len(changed), judge, ev)
    assert decide(changed, b, policy).action is Action.REDACT


@pytest.mark.parametrize("sentence, basis", [
    ("The Eiffel Tower was completed in 1950.", "value_changed"),
    ("An adult ticket costs 41.2 euros.", "value_missing"),
    ("Adult and child tickets together cost 41.2 euros.", "value_worked_out"),
    # its height field holds an operand, not the value it says it worked out
    ("With its antennas, that brings the height to 338 m.", "value_worked_out"),
    ("The Eiffel Tower is not in Paris.", "negation"),
    ("It is located in Lyon next to a famous bakery.", "words"),
])
def test_a_flag_says_what_it_rests_on(sentence, basis):
    """The explanation's basis, strongest evidence first: a value stated otherwise,
    a value the grounding lacks, one a sentence says it worked out (a wrong total here),
    a negation, else the model and the words."""
    ev = ContextEvidence.build([json.dumps(TOOL)], "")
    judge = SentenceJudge({4: _head("p_max", 8.0)})
    a = judged(_detection(sentence, 0.95), 0, len(sentence), judge, ev)
    assert a.flagged and a.explanation.basis == basis
    assert a.explanation.to_json()["basis"] == basis
    assert basis in BASES and a.explanation.grounding == "structured"


def test_a_value_beside_the_quantities_a_tool_result_holds_is_worked_out():
    """Against a tool result, a value it lacks in a sentence that states quantities it
    holds (the operands, "$30", "$20") rests on ``value_worked_out``: over the older
    hand-written sets such claims are mostly correct (docs/model-card.md).  A date or time
    beside it names which record, and an identifier's digits are no quantity; against prose
    nothing changes."""
    from guardrail.evidence.judge import basis

    tickets = json.dumps({"show": "Harbour Lights", "date": "2025-08-14",
                          "prices": {"adult_usd": 30, "child_usd": 20}, "seats_left": 12})
    ev = ContextEvidence.build([tickets], "")
    worked = ev.features("Two adult tickets at $30 and one child ticket at $20 are $85.")
    assert worked.works_out and basis(worked) == "value_worked_out"
    dated = ev.features("The show on August 14 costs $85 a ticket.")
    assert not dated.works_out and basis(dated) == "value_missing"
    coded = ev.features("Booking HL-30 for the show costs $85 a ticket.")  # an id's digits
    assert not coded.works_out
    prose = ContextEvidence.build(["Adult tickets cost $30 and child tickets $20."], "")
    said = prose.features("Two adult tickets at $30 and one child ticket at $20 are $85.")
    assert basis(said) == "value_missing"


def test_another_records_value_against_a_tool_result_is_marked_by_default():
    """A flag resting on ``other_record`` (a value found only in another record than the
    one the sentence seems to be about) falls mostly on correct sentences: the default
    policy marks it against a tool result and redacts it against prose; ``by_basis: {}``
    redacts it."""
    from dataclasses import replace

    from guardrail.config import GuardrailConfig
    from guardrail.stream.policy import resolve_policy

    judge = SentenceJudge({4: _head("p_max", 8.0)})
    tool = ContextEvidence.build([json.dumps(TOOL)], "")
    plain = "An adult ticket costs 41.2 euros."
    flagged = judged(_detection(plain, 0.95), 0, len(plain), judge, tool)
    on_tool = replace(flagged, explanation=replace(flagged.explanation, basis="other_record"))
    on_prose = replace(on_tool, explanation=replace(on_tool.explanation, grounding="prose"))
    default = resolve_policy(GuardrailConfig())
    assert decide(plain, on_tool, default) == Outcome(Action.ANNOTATE, plain)
    assert decide(plain, on_prose, default).action is Action.REDACT
    cfg = GuardrailConfig.model_validate({"policy": {"by_basis": {}}})
    assert decide(plain, on_tool, resolve_policy(cfg)).action is Action.REDACT


def test_another_records_value_ranks_below_a_changed_one_above_a_missing_one():
    from dataclasses import replace

    from guardrail.evidence.judge import basis
    ev = ContextEvidence.build([json.dumps(TOOL)], "")
    words = ev.features("It is located in Lyon next to a famous bakery.")
    missing = ev.features("Adult and child tickets together cost 41.2 euros.")
    changed = ev.features("The Eiffel Tower was completed in 1950.")
    assert basis(replace(words, record_gap=0.5)) == "other_record"
    assert basis(replace(missing, record_gap=0.5)) == "other_record"
    assert basis(replace(changed, record_gap=0.5)) == "value_changed"
    assert basis(replace(words, negation_mismatch=True)) == "negation"


def test_policy_acts_by_basis_before_kind():
    """``policy.by_basis`` picks the action of a flag by what it rests on, before
    ``by_kind``: a price the grounding does not hold is marked and sent as written,
    a changed year is still redacted, and a flag of neither basis follows its kind."""
    ev = ContextEvidence.build([json.dumps(TOOL)], "")
    judge = SentenceJudge({4: _head("p_max", 8.0)})
    policy = EffectivePolicy(Action.REDACT, None, True, "spans", "[x]", 0,
                             by_kind=(("contradicted", Action.BLOCK),),
                             by_basis=(("value_missing", Action.ANNOTATE),))
    total = "An adult ticket costs 41.2 euros."
    a = judged(_detection(total, 0.95), 0, len(total), judge, ev)
    assert a.explanation.kind == "contradicted"
    assert decide(total, a, policy) == Outcome(Action.ANNOTATE, total)
    changed = "The Eiffel Tower was completed in 1950."
    b = judged(_detection(changed, 0.95), 0, len(changed), judge, ev)
    assert decide(changed, b, policy).action is Action.BLOCK
    plain = EffectivePolicy(Action.REDACT, None, True, "spans", "[x]", 0)
    assert decide(total, a, plain).action is Action.REDACT
    assert policy.to_json()["by_basis"] == {"value_missing": "annotate"}


def test_policy_by_basis_can_name_the_form_of_the_grounding():
    """``structured.value_missing`` acts on a value a tool result lacks and leaves the
    same basis against prose to the policy's action; the qualified key comes first."""
    judge = SentenceJudge({4: _head("p_max", 8.0)})
    tool = ContextEvidence.build([json.dumps(TOOL)], "")
    prose = ContextEvidence.build(["The Eiffel Tower is in Paris. Tickets are sold at the "
                                   "south pillar."], "")
    total = "An adult ticket costs 41.2 euros."
    on_tool = judged(_detection(total, 0.95), 0, len(total), judge, tool)
    on_prose = judged(_detection(total, 0.95), 0, len(total), judge, prose)
    assert on_tool.explanation.grounding == "structured"
    assert on_prose.explanation.grounding == "prose"
    assert on_tool.explanation.basis == on_prose.explanation.basis == "value_missing"
    policy = EffectivePolicy(Action.REDACT, None, True, "spans", "[x]", 0,
                             by_basis=(("structured.value_missing", Action.ANNOTATE),))
    assert decide(total, on_tool, policy).action is Action.ANNOTATE
    assert decide(total, on_prose, policy).action is Action.REDACT
    both = EffectivePolicy(Action.REDACT, None, True, "spans", "[x]", 0,
                           by_basis=(("structured.value_missing", Action.ANNOTATE),
                                     ("value_missing", Action.BLOCK)))
    assert decide(total, on_tool, both).action is Action.ANNOTATE
    assert decide(total, on_prose, both).action is Action.BLOCK


def test_a_worked_out_value_no_rule_reproduces_is_unverifiable_and_marked_by_default():
    """A sentence that says it worked a value out ("together", "comes to") and gives one
    the tool result lacks rests on ``value_worked_out``: unverified arithmetic, not a
    value stated otherwise, so ``unverifiable``.  The default policy sends it as written
    and marks it against a tool result, and redacts it against prose and when the
    operator sets ``by_basis`` to ``{}``; a plain value the tool result lacks is still
    redacted."""
    from dataclasses import replace

    from guardrail.config import GuardrailConfig
    from guardrail.stream.policy import resolve_policy

    judge = SentenceJudge({4: _head("p_max", 8.0)})
    tool = ContextEvidence.build([json.dumps(TOOL)], "")
    prose = ContextEvidence.build(["The Eiffel Tower is in Paris. Tickets are sold at the "
                                   "south pillar."], "")
    total = "Adult and child tickets together cost 41.2 euros."
    plain = "An adult ticket costs 41.2 euros."
    a = judged(_detection(total, 0.95), 0, len(total), judge, tool)
    assert a.flagged and a.explanation.basis == "value_worked_out"
    assert a.explanation.kind == "unverifiable" and a.explanation.severity == "high"
    b = judged(_detection(plain, 0.95), 0, len(plain), judge, tool)
    assert b.explanation.basis == "value_missing" and b.explanation.kind == "contradicted"
    c = judged(_detection(total, 0.95), 0, len(total), judge, prose)
    assert c.explanation.basis == "value_worked_out" and c.explanation.grounding == "prose"
    default = resolve_policy(GuardrailConfig())
    assert decide(total, a, default) == Outcome(Action.ANNOTATE, total)
    assert decide(plain, b, default).action is Action.REDACT
    assert decide(total, c, default).action is Action.REDACT
    cfg = GuardrailConfig.model_validate({"policy": {"by_basis": {}}})
    assert decide(total, a, resolve_policy(cfg)).action is Action.REDACT
    # naming only the basis it refines acts on it too; naming it comes first
    wider = EffectivePolicy(Action.REDACT, None, True, "spans", "[x]", 0,
                            by_basis=(("value_missing", Action.BLOCK),))
    assert decide(total, a, wider).action is Action.BLOCK
    both = replace(wider, by_basis=(("value_missing", Action.BLOCK),
                                    ("structured.value_worked_out", Action.RELEASE)))
    assert decide(total, a, both).action is Action.RELEASE


def test_feature_vector_matches_the_feature_names():
    ev = ContextEvidence.build(["The tower is 330 m tall."], "").features("It is 330 m.")
    assert len(feature_vector(ev, [0.1, 0.9], False)) == len(FEATURES)
    assert len(feature_vector(ev, [], True)) == len(FEATURES)


# -- the answer, judged: a lead-in is never checked, a flag is explained ----------------

async def test_a_judged_stream_skips_lead_ins_and_explains_its_flags():
    from dataclasses import replace

    from scripted import ScriptedVerifier
    from test_pipeline import answer_stream, collect, content, events, raw, settings

    from guardrail.stream.pipeline import guarded_stream

    judge = SentenceJudge({6: _head("p_max", 8.0, threshold=0.5)})
    s = replace(settings(), judge=judge)
    v = ScriptedVerifier(bad=("1950",))
    pieces = ["Here is what", " I found:\n\n", "The tower is in", " Paris.", " It was built in",
              " 1950."]
    out = events(await collect(guarded_stream(raw(answer_stream(pieces)), s, v)))
    assert content(out) == "Here is what I found:\n\nThe tower is in Paris. It was built in [unsupported]."
    checked = {r.response[r.target_start:r.target_end].strip() for r in v.requests}
    assert "Here is what I found:" not in checked  # no model call for a lead-in
    report = next(e["guardrail"] for e in out if isinstance(e, dict) and "guardrail" in e)
    lead, paris, built = report["sentences"]
    assert lead["claim"] is False and lead["checked"] is False
    assert paris["explanation"] is None and paris["action"] == "release"
    assert built["explanation"]["kind"] in ("contradicted", "unverifiable")
    assert built["explanation"]["severity"] == "high"
    assert report["span_count"] == 1 and report["hallucination_detected"] is True


async def test_the_final_object_says_what_the_judge_decided_at_full_depth():
    """With a judge, the report's ``final`` agrees with its sentences and with
    ``hallucination_detected``: a token score over the detector's threshold that the
    judge passes is no flag there either (it was ``hallucinated: true`` beside
    ``hallucination_detected: false``), and a sentence the judge flags gives its spans
    in answer offsets."""
    from dataclasses import replace

    from scripted import ScriptedVerifier
    from test_pipeline import answer_stream, collect, events, raw, settings

    from guardrail.stream.pipeline import guarded_stream

    async def report(judge, bad, last=" 1950."):
        s = replace(settings(), judge=judge)
        out = events(await collect(guarded_stream(
            raw(answer_stream(["The tower is in", " Paris.", " It was built in", last])),
            s, ScriptedVerifier(bad=(bad,)))))
        return next(e["guardrail"] for e in out if isinstance(e, dict) and "guardrail" in e)

    # the detector scores "Paris" (which the grounding holds) high; the judge passes it
    passes = await report(SentenceJudge({6: _head("p_max", -8.0)}), "Paris", " 1889.")
    assert passes["hallucination_detected"] is False
    assert passes["final"]["hallucinated"] is False and passes["final"]["spans"] == []
    assert not any(x["final"]["hallucinated"] for x in passes["sentences"])
    flags = await report(SentenceJudge({6: _head("p_max", 8.0, threshold=0.5)}), "1950")
    assert flags["hallucination_detected"] is True and flags["final"]["hallucinated"] is True
    answer = "The tower is in Paris. It was built in 1950."
    assert [answer[x["start"]:x["end"]] for x in flags["final"]["spans"]] == \
        [x["text"] for x in flags["final"]["spans"]] and flags["final"]["spans"]


def test_a_negative_value_is_found_written_as_its_size():
    """``"rent_change_pct": -10.2`` is what "down 10.2 percent" says."""
    ev = ContextEvidence.build([json.dumps({"rent_change_pct": -10.2, "rooms": 3})], "")
    for sentence in ("The rent is down 10.2 percent on last year.",
                     "The rent fell 10.2% over the past year.",
                     "The rent change was -10.2%."):
        assert ev.features(sentence).missing_numbers == (), sentence
    assert [n.value for n in ev.features("The rent fell 12.4%.").missing_numbers] == [12.4]
    assert [n.value for n in ev.features("It has -3 rooms.").missing_numbers] == [-3.0]


def test_a_count_in_words_is_checked_against_the_records():
    ev = ContextEvidence.build([json.dumps([{"title": t} for t in ("A", "B", "C")])], "")
    assert [n.value for n in ev.features("The lookup returned four events.").missing_numbers] \
        == [4.0]
    assert ev.features("The lookup returned three events.").missing_numbers == ()
    assert ev.features("Two of them are today.").n_numbers == 0  # "two of": not a count


def test_one_stem_for_a_word_and_its_endings():
    from guardrail.evidence.features import stem
    assert {stem(w) for w in ("change", "changes", "changed", "changing")} == {"chang"}
    assert {stem(w) for w in ("price", "prices", "priced")} == {"pric"}
    assert stem("the") == "the" and stem("here") == "here"


def test_query_rows_render_as_records_keyed_by_their_columns():
    text = json.dumps({"columns": [{"name": "name", "type": "text"}, {"name": "revenue_cents"}],
                       "rows": [["Northwind Traders", 1843250], ["Kessler GmbH", 1102475]]})
    lines = render(text).text.split("\n")
    assert lines[-6:] == ["rows 1 of 2:", "rows 1 > name: Northwind Traders",
                          "rows 1 > revenue cents: 1843250", "rows 2 of 2:",
                          "rows 2 > name: Kessler GmbH", "rows 2 > revenue cents: 1102475"]
    ev = ContextEvidence.build([text])
    assert ev.features("Northwind Traders brought in $18,432.50.").missing_numbers == ()
    assert ev.features("Northwind Traders brought in $11,024.75.").record_gap > 0.0
    # rows that do not fit their columns stay as they are
    odd = json.dumps({"columns": ["a", "b"], "rows": [[1, 2, 3]]})
    assert "rows 1: 3" in render(odd).text


def test_values_swapped_between_the_records_a_sentence_names_are_flagged():
    """``decide``: two values each given to the named record that lacks it, while the
    other named record holds it, reach the head's threshold whatever the head says;
    the values said right, or one value alone misplaced, stay the head's to weigh."""
    labs = json.dumps({"results": [
        {"analyte": "Glucose", "value": 112, "unit": "mg/dL"},
        {"analyte": "BUN", "value": 14, "unit": "mg/dL"},
        {"analyte": "Creatinine", "value": 0.91, "unit": "mg/dL"},
        {"analyte": "eGFR", "value": 81, "unit": "mL/min"}]})
    ev = ContextEvidence.build([labs], "")
    judge = SentenceJudge({4: _head("p_max", 4.0, threshold=0.8)})
    bad = judge.judge(ev, "Your creatinine is 81 mg/dL and your eGFR is 0.91.", [0.01], 4)
    assert bad.flagged and bad.prob == pytest.approx(0.8)
    assert bad.explanation.kind == "contradicted" and bad.explanation.severity == "high"
    assert not judge.judge(ev, "Your creatinine is 0.91 mg/dL and your eGFR is 81.",
                           [0.01], 4).flagged
    one = ev.features("Your creatinine is 81 mg/dL and your eGFR is 81.")
    assert not one.swapped and not judge.judge(
        ev, "Your creatinine is 81 mg/dL and your eGFR is 81.", [0.01], 4).flagged


TRIPS = ("trip_id,start_time,start_station,bike_type,distance_mi,duration_min,fare_usd\n"
         "T-1,2024-09-02 08:04,Union Station,classic,3.4,22,0.00\n"
         "T-2,2024-09-07 10:15,\"Union Station, north\",ebike,5.8,47,7.05\n"
         "T-3,2024-09-15 09:30,Confluence Park,ebike,8.7,78,11.70\n")


def test_csv_and_tsv_render_as_records_a_row_each():
    r = render(TRIPS)
    assert r.format == "csv" and r.structured
    lines = r.text.split("\n")
    assert len(lines) == 3
    assert lines[1] == ("trip id: T-2; start time: 2024-09-07 10:15 (September 7, 2024, "
                        "10:15); start station: Union Station, north; bike type: ebike; "
                        "distance mi: 5.8; duration min: 47; fare usd: 7.05")
    assert TRIPS[r.lines[2].source[0]:r.lines[2].source[1]].startswith("T-3,")
    assert render(TRIPS.replace(",", "\t")).text.split("\n")[0].startswith("trip id: T-1; ")
    # prose with commas, or a header of values, is no table
    prose = "Paris, the capital, is large.\nRome, too, is old.\nBerlin, in turn, is new."
    assert render(prose).format == "text"
    assert render("1,2,3\n4,5,6\n7,8,9").format == "text"
    assert render("a,b\n1,2,3\n4,5").format == "text"    # rows of other lengths


SESSIONS = ("booking_id,member,date,start,end,room,paid\n"
            "DR-1,Ines Marsh,2025-05-06,10:00,12:00,Darkroom A,true\n"
            "DR-2,Tomas Reyes,2025-05-06,12:30,15:30,Darkroom B,true\n"
            "DR-3,Priya Nand,2025-05-07,13:00,14:00,Darkroom A,false\n"
            "DR-4,Gus Adler,2025-05-08,09:00,11:30,Darkroom B,false\n")


def test_a_csv_with_no_plain_number_column_reads_as_records_by_its_dates_and_times():
    """A log of bookings holds dates, times and yes/no values, no plain number: read as
    text up to 9125b10, its row count and its unpaid rows were values the
    grounding lacked ("four bookings", "Two bookings are still unpaid")."""
    r = render(SESSIONS)
    assert r.format == "csv" and r.text.split("\n")[2].startswith("booking id: DR-3; ")
    ev = ContextEvidence.build([SESSIONS])
    assert ev.features("There are four darkroom bookings this week.").missing_numbers == ()
    assert [n.value for n in ev.features("There are six darkroom bookings this week.")
            .missing_numbers] == [6]
    # lines of prose that happen to hold a date and a time each are still prose
    notes = ("Ines called, on 2025-05-06, at 10:00, about the enlarger\n"
             "Tomas called, on 2025-05-06, at 12:30, about chemicals\n"
             "Priya called, on 2025-05-07, at 13:00, about her booking\n")
    assert render(notes).format == "text"


def test_a_bare_carriage_return_in_a_line_is_prose_not_an_error():
    """Grounding text with a carriage return inside a line (old Mac line ends, text
    pasted from a web page) made the CSV reader raise, and every check of it failed
    ("new-line character seen in unquoted field")."""
    text = "First line, here.\nSecond\rline, here.\nThird line, here."
    assert render(text).format == "text"
    assert ContextEvidence.build([text]).features("The second line is here.").n_words > 0


def test_a_csv_rows_values_are_read_as_records():
    ev = ContextEvidence.build([TRIPS])
    # the sum of a column over the rows, and a row's own values
    assert ev.features("Across your trips you rode 17.9 miles.").missing_numbers == ()
    assert ev.features("Your longest ride was 8.7 miles, taking 78 minutes.").missing_numbers \
        == ()
    assert [n.value for n in ev.features("You rode 19.7 miles.").missing_numbers] == [19.7]
    # a worked-out value said again in other units (arithmetic.py)
    assert ev.features("In all you rode 17.9 miles, or 28.8 km.").missing_numbers == ()
    assert [n.value for n in ev.features("In all you rode 17.9 miles, or 31.5 km.")
            .missing_numbers] == [31.5]


def test_a_missing_number_beside_a_detector_span_elsewhere_redacts_the_sentence():
    """The detector's one span on another word ("bill") would leave the value the
    context lacks ($18.50) visible beside the marker: both spans go, so the sentence."""
    ev = ContextEvidence.build([json.dumps({"callout_fee_usd": 95.0, "labor_usd": 60.0,
                                            "total_usd": 213.5})], "")
    judge = SentenceJudge({4: _head("number_missing", 4.0)})
    text = "The bill came to $213.50: a $95 fee, $60 for labor and $48.50 for the keys."
    det = _detection(text, 0.2)
    at = text.index("bill")
    det = Detection(text, (Span(at, at + 4, "bill", 0.9),), det.token_offsets,
                    det.token_probs, 0.5, 4, 6)
    a = judged(det, 0, len(text), judge, ev)
    assert a.flagged and {(s.start, s.end) for s in a.spans} == {
        (at, at + 4), (text.index("$48.50"), text.index("$48.50") + 6)}
    policy = EffectivePolicy(Action.REDACT, None, True, "spans", "[x]", 0)
    assert decide(text, a, policy).released == "[x]"
    # the detector's span on the number itself stays the one span
    at = text.index("48.50")
    det = Detection(text, (Span(at, at + 5, "48.50", 0.9),), det.token_offsets,
                    det.token_probs, 0.5, 4, 6)
    a = judged(det, 0, len(text), judge, ev)
    assert decide(text, a, policy).released == text.replace("$48.50", "[x]")  # sign and all


def test_a_state_said_as_what_it_is_not_rather_than_is_negated():
    """Observed: "The carriage is open rather than covered." against ``covered: false``
    read as saying it is covered."""
    ev = ContextEvidence.build([json.dumps({"carriage": {"covered": False, "seats": 4}})], "")
    assert ev.features("The carriage is open rather than covered.").field_changed is None
    assert ev.features("The carriage is covered rather than open.").field_changed is not None
    assert ev.features("The carriage is covered.").field_changed is not None


def test_a_state_said_lost_or_lacking_is_negated():
    """Observed: "TGHU 310945-6 has lost its power connection, so it isn't reporting any
    temperatures." against ``power_connected: false`` read as saying it is connected."""
    ev = ContextEvidence.build([json.dumps({"units": [
        {"container": "TGHU 310945-6", "power_connected": False, "setpoint_c": 5.0},
        {"container": "MSKU 604211-3", "power_connected": True, "setpoint_c": 13.3}]})], "")
    for said in ("TGHU 310945-6 has lost its power connection, so it isn't reporting.",
                 "TGHU 310945-6 is without a power connection."):
        assert ev.features(said).field_changed is None, said
    assert ev.features("TGHU 310945-6 has its power connection.").field_changed is not None
    assert ev.features("MSKU 604211-3 has lost its power connection.").field_changed \
        is not None
    # a key that itself says lost
    well = ContextEvidence.build([json.dumps({"well": "GW-2", "lost_circulation_zone": True})])
    assert well.features("The well has a lost-circulation zone.").field_changed is None


def test_a_total_with_its_unit_is_no_other_value_of_one_records_field():
    """Observed: "Between them they're bringing 585 kg of apples" (four bookings named in
    the sentence before) was read as giving the first booking's ``apples_kg: 120``
    another value.  A total said as one ("between them", "in total", "overall") gives no
    record's field a value, with its unit as without; one the records do not make is a
    value the grounding lacks."""
    ev = ContextEvidence.build([json.dumps({"press_day": "2024-10-05", "bookings": [
        {"member": "R. Okafor", "apples_kg": 120, "status": "confirmed"},
        {"member": "J. Lindqvist", "apples_kg": 95, "status": "confirmed"},
        {"member": "M. Harcourt", "apples_kg": 210, "status": "cancelled"}]})], "")
    f = ev.features("Between them they're bringing 585 kg of apples.",
                    "Okafor and Lindqvist have confirmed. ")
    assert f.field_changed is None and [n.value for n in f.missing_numbers] == [585.0]
    assert ev.features("R. Okafor is bringing 150 kg of apples.").field_changed is not None


def test_a_total_the_grounding_holds_as_a_key_is_that_fields_value():
    """"The total came to 429 EUR" against ``total_eur: 249.9`` says the total field
    otherwise: no worked-out value, still redacted by default; "Together the items come
    to" a wrong sum is worked out (no key ``together``)."""
    from guardrail.evidence.claims import works_out
    from guardrail.evidence.judge import basis

    said = "The total came to 429 EUR."
    at = said.index("429")
    assert works_out(said, at, at + 3) and not works_out(said, at, at + 3, {"total"})
    order = json.dumps({"order_id": "A-1042", "items": [
        {"sku": "KB-201", "qty": 1, "price_eur": 129.9},
        {"sku": "MS-88", "qty": 2, "price_eur": 60.0}], "total_eur": 249.9})
    ev = ContextEvidence.build([order])
    assert basis(ev.features(said)) == "value_missing"
    assert basis(ev.features("Together the items come to €289.90.")) == "value_worked_out"


@pytest.mark.parametrize("sentence, value, worked", [
    ("Together the two rooms come to $697.", "$697", True),
    ("Parts add up to $269, and labor is 3 hours.", "$269", True),
    ("Parts add up to $269, and labor is 3 hours.", "3 hours", False),  # its own part
    ("Since you paid a $100 deposit, so you're owed $150.", "$150", True),
    ("Your reserve is $47,000, so take the offer.", "$47,000", False),  # "so" after it
    ("It leaves from Terminal 2.", "2", False),
    ("R. Okafor is bringing 150 kg of apples.", "150", False),
    ("In 2023 it launched 47 times, eight more than the year before.", "eight", True),
    ("Maternity is 28 flat sheets short of par.", "28", True),
    ("There are 87 days left before it expires.", "87", True),
    ("Yellow should last for roughly 20 more pages.", "20", False),
    ("It tops out at 533 m above sea level.", "533", False),
    ("Dinner is served at 6:30 PM, so call ahead.", "6:30 PM", False),
    ("Missing one would leave you at 75%.", "75%", True),
    ("The order weighs 2,000 pounds, or roughly 907 kg.", "907", True),
    ("It eased from 18.4 bar to 17.0 bar, a drop of 1.4 bar.", "1.4", True),
    ("Sales rose 12%, an increase of $4,300 on May.", "$4,300", True),
    ("There is a gap of 3 metres between the posts.", "3", False),
    ("Its fall of snow was 30 cm.", "30", False),
    ("Her winning margin over second place was 5.5 points.", "5.5", True),
    ("She won by a winning margin of 2 lengths.", "2", True),
    ("The margin is 5 cm on each side.", "5", False),
    ("Ravi is second on 98.3, which puts Ana 44.3 points clear.", "44.3", True),
    ("The path stays 2 metres clear of the hedge.", "2", True),
    ("The press has run 465 hours since then.", "465", True),
    ("The press has run 465 hours since 2019.", "465", False),
    # a value of a case put ("would", "'d"): what it would come to, worked out
    ("At that rate, a print of 200 grams would cost $20.", "$20", True),
    ("If those 28 sell at the same price, they'd bring in $392.", "$392", True),
    ("If you change a pair of tickets, that would be $6 in fees.", "$6", True),
    ("The class costs $40 and would suit beginners.", "$40", False),  # after the value
    ("If her session goes ahead, that rises to $1,075.", "$1,075", True),
])
def test_a_sentence_says_where_it_worked_a_value_out(sentence, value, worked):
    """``works_out``: the part of the sentence holding the value says it was worked out,
    by a word before it that leads to a result, one after it that compares, or a total
    anywhere in its part."""
    from guardrail.evidence.claims import works_out

    at = sentence.index(value)
    assert works_out(sentence, at, at + len(value)) is worked

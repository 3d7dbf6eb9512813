"""guardrail.evidence.language, and the answer's ledger acting on it: a sentence, or a
grounding, in a language the detector does not read passes unchecked and says so
(``verification.other_languages``); English, with foreign names, titles, codes and
abbreviations, is checked as before.  The end-to-end test through the real server is
in test_e2e_proxy.py."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from scripted import ScriptedVerifier
from test_pipeline import settings

from guardrail.evidence.language import (AnswerLanguage, grounding_english, read,
                                         sentence_english)
from guardrail.stream.answer import AnswerGuard
from guardrail.stream.pipeline import guarded_completion
from guardrail.types import Grounding, Priority

OTHER = [  # sentences an assistant would write in another language
    "Der Eiffelturm wurde von 1887 bis 1889 gebaut und ist 330 Meter hoch.",
    "La tour Eiffel a été construite entre 1887 et 1889 pour l'Exposition universelle.",
    "La Torre Eiffel fue construida entre 1887 y 1889 para la Exposición Universal.",
    "La Torre Eiffel è stata costruita tra il 1887 e il 1889 ed è alta 330 metri.",
    "A Torre Eiffel foi construída entre 1887 e 1889 e tem 330 metros de altura.",
    "De Eiffeltoren werd gebouwd tussen 1887 en 1889 en is 330 meter hoog.",
    "Eiffeltornet byggdes mellan 1887 och 1889 och är 330 meter högt.",
    "Wieża Eiffla jest wysoka na 330 metrów i nie była budowana przez 10 lat.",
    "Menara Eiffel adalah menara besi yang dibangun dari tahun 1887 untuk pameran itu.",
    "埃菲尔铁塔于1887年至1889年建造，高330米。",
    "エッフェル塔は1887年から1889年にかけて建設されました。",
    "에펠탑은 1887년부터 1889년까지 건설되었습니다.",
    "Эйфелева башня была построена в 1887–1889 годах.",
    "برج إيفل بني بين عامي 1887 و1889.",
    "मैंने आपका ऑर्डर 12 मार्च को भेज दिया है।",
    "Ο Πύργος του Άιφελ χτίστηκε από το 1887 έως το 1889.",
]

ENGLISH = [  # English, with what trips a naive reading: names, titles, codes, units
    "The Eiffel Tower was built from 1887 to 1889.",
    "Victor Hugo wrote Le Comte de Monte-Cristo.",
    "The flight to Los Angeles departs at 9:40 from gate B12.",
    "Your order ships from the NE warehouse in Des Moines.",
    "The restaurant 北京烤鸭 is open until 10 pm.",
    "It costs 12 EUR per person, est. 40 minutes.",
    "La Paz is the capital of Bolivia.",
    "Ingrid speaks no, en and de.",
]


@pytest.mark.parametrize("text", OTHER)
def test_another_language_is_read_as_such(text):
    assert read(text).english is False


@pytest.mark.parametrize("text", ENGLISH)
def test_english_with_foreign_names_codes_and_units_is_english(text):
    assert sentence_english(read(text), read("What can you tell me?")) is True


def test_a_sentence_that_does_not_tell_takes_the_language_around_it():
    short = read("Er ist 330 Meter hoch.")  # two function words: not enough alone
    assert short.english is None
    assert sentence_english(short, read("Wann wurde der Eiffelturm gebaut?")) is False
    assert sentence_english(short, read("When was the Eiffel Tower built?")) is True
    assert sentence_english(read("Gustave Eiffel."), read("")) is True  # nothing: checked


def test_a_grounding_mostly_in_another_language_is_not_english():
    german = ("Der Eiffelturm ist ein 330 Meter hoher Eisenfachwerkturm in Paris. Er wurde "
              "von 1887 bis 1889 als Eingangsportal und Aussichtsturm für die "
              "Weltausstellung errichtet, die an den 100. Jahrestag der Französischen "
              "Revolution erinnern sollte. Der Turm ist nach Gustave Eiffel benannt, "
              "dessen Unternehmen ihn entwarf und baute.")
    assert not grounding_english([german])
    assert not grounding_english([german * 3] * 64)  # read from a sample of each
    assert not grounding_english(["埃菲尔铁塔于1887年至1889年建造，高330米，位于巴黎。"])
    english = "The Eiffel Tower was built from 1887 to 1889 and is 330 metres tall."
    assert grounding_english([english, german[:60]])  # most of it is English
    # a tool result's English keys with language codes, names and places as values
    assert grounding_english(['{"guides": [{"name": "Tobias Krämer", "languages": '
                              '["de", "en", "fr"], "city": "Los Angeles", "est_min": 40, '
                              '"region": "Île-de-France", "price_per_person": 12}]}' * 20])


def test_an_answer_is_read_sentence_by_sentence():
    docs = ("The Eiffel Tower was built from 1887 to 1889 and is 330 metres tall.",)
    lang = AnswerLanguage("When was the Eiffel Tower built?")
    assert [lang.readable(s, docs) for s in (
        "It was built from 1887 to 1889.", "Gustave Eiffel.", "它于1950年完工。",
        "It is 330 metres tall.")] == [True, True, False, True]
    chinese = ("埃菲尔铁塔于1887年至1889年建造。它高330米。",)
    assert not AnswerLanguage("When?").readable("It was built in 1889.", chinese)


# -- the ledger: unchecked, verbatim, reported -----------------------------------------------

GROUNDING = Grounding(("埃菲尔铁塔于1887年至1889年建造。它高330米。",), "埃菲尔铁塔是什么时候建造的？")
ANSWER = "埃菲尔铁塔于1887年至1889年建造。它于1950年完工。"


async def test_another_language_passes_unchecked_and_says_so():
    v = ScriptedVerifier(bad=("1950",))
    s = replace(settings(), grounding=GROUNDING)
    r = await guarded_completion(completion(ANSWER), s, v)
    assert r.body["choices"][0]["message"]["content"] == ANSWER  # verbatim
    assert not v.requests and not r.detected  # no check, no final pass
    sentences = r.body["guardrail"]["sentences"]
    assert [(x["checked"], x["skipped"], x["action"]) for x in sentences] == \
        [(False, "language", "release")] * 2
    assert r.body["guardrail"]["final"] is None


async def test_other_languages_check_checks_them_as_before():
    v = ScriptedVerifier(bad=("1950",))
    s = replace(settings(other_languages="check"), grounding=GROUNDING)
    r = await guarded_completion(completion(ANSWER), s, v)
    sentences = r.body["guardrail"]["sentences"]
    assert [(x["checked"], x["skipped"]) for x in sentences] == [(True, None)] * 2
    assert len([q for q in v.requests if q.priority is Priority.IN_FLIGHT]) == 2


async def test_english_sentences_beside_another_language_are_checked():
    v = ScriptedVerifier(bad=("1950",))
    answer = ("The tower is in Paris. Sie wurde 1950 von der Stadt gebaut, sagt man. "
              "It was built in 1950.")
    guard = AnswerGuard(settings(), v)
    checks = guard.feed(answer) + guard.flush()
    verdicts = [await guard.judge(c) for c in checks]
    assert [v.skipped for v in verdicts] == [None, "language", None]
    assert [v.action.value for v in verdicts] == ["release", "release", "redact"]
    assert verdicts[1].released == "Sie wurde 1950 von der Stadt gebaut, sagt man. "
    await guard.final_pass()
    assert guard.report().sentences[1].final_score is None  # the final pass skips it too
    assert not [r for r in v.requests if r.priority is Priority.IN_FLIGHT
                and "Sie wurde" in r.response[r.target_start:r.target_end]]


def completion(text: str) -> dict:
    return {"id": "c", "object": "chat.completion", "model": "m", "choices": [
        {"index": 0, "message": {"role": "assistant", "content": text},
         "finish_reason": "stop"}]}


async def test_withhold_sends_the_marker_in_place_of_what_no_check_read():
    """``other_languages: withhold``: nothing unverified reaches the client, in a JSON
    answer too (its string values only), while English is checked as ever."""
    v = ScriptedVerifier(bad=("1950",))
    s = replace(settings(other_languages="withhold"), grounding=GROUNDING)
    r = await guarded_completion(completion(ANSWER), s, v)
    assert r.body["choices"][0]["message"]["content"] == "[unsupported][unsupported]"
    assert [(x["action"], x["checked"], x["skipped"]) for x in
            r.body["guardrail"]["sentences"]] == [("redact", False, "language")] * 2
    assert not v.requests and not r.detected  # withheld, not found unsupported
    assert {x["explanation"]["kind"] for x in r.body["guardrail"]["sentences"]} == \
        {"unverifiable"}  # nothing verified it

    english = replace(settings(other_languages="withhold"))
    guard = AnswerGuard(replace(english, json_answer=True), ScriptedVerifier(bad=()))
    answer = '{"id": 7, "summary": "Er wurde von der Stadt gebaut, sagt man. It is tall."}'
    verdicts = [await guard.judge(c) for c in guard.feed(answer) + guard.flush()]
    # the segmenter reads the values' text: the syntax before it is a piece of its own
    assert [(v.original, v.skipped) for v in verdicts] == [
        ('{"id": 7, "summary": "', None), ("Er wurde von der Stadt gebaut, sagt man. ", "language"),
        ('It is tall."', None), ("}", None)]
    assert json.loads("".join(v.released for v in verdicts)) == {
        "id": 7, "summary": "[unsupported] It is tall."}

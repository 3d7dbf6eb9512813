"""guardrail.stream.annotations: citations (``url_citation``) of an answer guardrail
changed point into the released text, or go where what they cite was withheld; chat and
Responses answers, not streamed, with the scripted Verifier (it flags "1950")."""

from __future__ import annotations

import copy

from scripted import ScriptedVerifier
from test_pipeline import settings

from guardrail.stream.annotations import moved, part_pieces
from guardrail.stream.pipeline import guarded_completion
from guardrail.stream.responses import guarded_response

ANSWER = "It was built in 1950 by Eiffel's firm. The tower is in Paris. It is 330 metres tall."
PARIS = ANSWER.index("Paris")


def cite(start, end, nested=True) -> dict:
    at = {"start_index": start, "end_index": end, "url": "https://x", "title": "x"}
    return {"type": "url_citation", "url_citation": at} if nested else \
        {"type": "url_citation", **at}


def test_offsets_move_with_the_text_before_and_go_with_a_changed_sentence():
    pieces = [("It was built in 1950. ", "[unsupported] "), ("The tower is in Paris.", "The "
                                                             "tower is in Paris.")]
    text = "".join(o for o, _ in pieces)
    released = "".join(r for _, r in pieces)
    paris = cite(text.index("Paris"), text.index("Paris") + 5)
    gone = cite(text.index("1950"), text.index("1950") + 4, nested=False)
    across = cite(3, text.index("tower"))
    files = {"type": "file_citation", "file_id": "f1"}
    out = moved([paris, gone, across, files], pieces)
    at = out[0]["url_citation"]
    assert released[at["start_index"]:at["end_index"]] == "Paris"
    assert out[1:] == [files]  # what it cited was withheld; a file citation stays
    assert moved([paris], [(text, text)]) == [paris]  # unchanged: as sent


def test_parts_are_split_by_their_sentences():
    from guardrail.types import Action, SentenceVerdict
    v = [SentenceVerdict(i, o, r, Action.RELEASE, 0.0, (), None) for i, (o, r) in
         enumerate([("A b. ", "A b. "), ("C d.", "[x]"), ("E f.", "E f.")])]
    assert part_pieces(["A b. C d.", "", "E f."], v) == [
        [("A b. ", "A b. "), ("C d.", "[x]")], [], [("E f.", "E f.")]]


async def test_a_chat_answers_citation_still_covers_what_it_cited():
    body = {"id": "c", "object": "chat.completion", "model": "m", "choices": [
        {"index": 0, "finish_reason": "stop", "message": {
            "role": "assistant", "content": ANSWER,
            "annotations": [cite(PARIS, PARIS + 5), cite(16, 20)]}}]}
    r = await guarded_completion(copy.deepcopy(body), settings(), ScriptedVerifier())
    msg = r.body["choices"][0]["message"]
    assert msg["content"].startswith("It was built in [unsupported]")
    (only,) = msg["annotations"]  # the one citing "1950" went with it
    at = only["url_citation"]
    assert msg["content"][at["start_index"]:at["end_index"]] == "Paris"


async def test_a_responses_answers_citations_move_part_by_part():
    def part(text, annotations):
        return {"type": "output_text", "text": text, "annotations": annotations}
    second = "The tower is in Paris."
    response = {"id": "r", "object": "response", "output": [{
        "type": "message", "role": "assistant", "content": [
            part(ANSWER, [cite(PARIS, PARIS + 5, nested=False)]),
            part(second, [cite(16, 21, nested=False)])]}]}
    r = await guarded_response(response, settings(), ScriptedVerifier())
    for c in r.body["output"][0]["content"]:
        (a,) = c["annotations"]
        assert c["text"][a["start_index"]:a["end_index"]] == "Paris"

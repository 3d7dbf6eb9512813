"""guardrail.stream.policy (pure: limits, assessment, redaction, decide), the answer's
regenerate loop (stream.regenerate) and the hooks (proxy.hooks)."""

import asyncio
import json
import re
import sys
import types
from dataclasses import replace

import httpx
import pytest

from guardrail.config import GuardrailConfig, PolicyOverride, RegenerateConfig
from guardrail.errors import BadRequest, UpstreamStatusError
from guardrail.proxy.hooks import (CallableRegenerator, HttpRegenerator, RegeneratorFactory,
                                   UpstreamRegenerator, fill_prompt, load_callable)
from guardrail.stream.policy import (Assessment, EffectivePolicy, RegenerateRequest, assess,
                                     clean_span,
                                     decide, redact, resolve_policy)
from guardrail.stream.regenerate import regenerate
from guardrail.types import Action, Detection, Grounding, Rewrite, Span


def detection(response: str, bad_words: set[str], threshold=0.5, high=0.9) -> Detection:
    offs, probs = [], []
    for m in re.finditer(r"\S+", response):
        offs.append((m.start(), m.end()))
        probs.append(high if m.group().strip(".,") in bad_words else 0.1)
    spans = []
    for (s, e), p in zip(offs, probs):
        if p >= threshold:
            if spans and not response[spans[-1].end:s].strip():
                spans[-1] = Span(spans[-1].start, e, response[spans[-1].start:e], p)
            else:
                spans.append(Span(s, e, response[s:e], p))
    return Detection(response, tuple(spans), tuple(offs), tuple(probs), threshold, 2, 6)


def policy(**kw) -> EffectivePolicy:
    base = dict(action=Action.REDACT, threshold=None, hold=True, redact_mode="spans",
                redact_marker="[unsupported]", max_attempts=2)
    base.update(kw)
    return EffectivePolicy(**base)


# -- resolve_policy ---------------------------------------------------------------------

def test_tenant_then_request_override():
    cfg = GuardrailConfig.model_validate({
        "tenants": {"acme": {"api_keys": ["k"], "policy": {"action": "regenerate"}}},
        "limits": {"max_threshold": 0.8}})
    p = resolve_policy(cfg, "acme", PolicyOverride(threshold=0.7, redact_mode="sentence"))
    assert (p.action, p.threshold, p.redact_mode, p.tenant) == \
        (Action.REGENERATE, 0.7, "sentence", "acme")
    assert resolve_policy(cfg).action is Action.REDACT


@pytest.mark.parametrize("limits, override, message", [
    ({"allow_override": False}, {"action": "release"}, "not allowed by this server"),
    ({"allowed_actions": ["redact", "block"]}, {"action": "release"}, "'release' is not allowed"),
    ({"min_threshold": 0.3, "max_threshold": 0.6}, {"threshold": 0.9}, "outside the allowed"),
    ({}, {"hold": False, "action": "annotate"}, "cannot be turned off"),
    ({"max_regenerate_attempts": 1}, {"max_attempts": 3}, "exceeds the limit 1"),
    ({"allow_hold_off": True}, {"hold": False}, "hold=false cannot be combined"),
    ({"allowed_actions": ["redact", "block"]}, {"by_basis": {"value_missing": "annotate"}},
     "'guardrail.policy.by_basis.value_missing' 'annotate' is not allowed"),
    ({"allow_hold_off": True}, {"hold": False, "action": "annotate",
                                "by_basis": {"structured.words": "redact"}},
     "hold=false cannot be combined with action=redact"),
])
def test_request_overrides_are_limited(limits, override, message):
    cfg = GuardrailConfig.model_validate({"limits": limits})
    with pytest.raises(BadRequest, match=message):
        resolve_policy(cfg, None, PolicyOverride.model_validate(override))


def test_by_basis_from_config_tenant_and_request():
    """The server's ``by_basis``, a tenant's in its place, a request's in place of both."""
    cfg = GuardrailConfig.model_validate({
        "policy": {"by_basis": {"structured.value_missing": "annotate"}},
        "tenants": {"acme": {"api_keys": ["k"], "policy": {"by_basis": {"words": "release"}}}}})
    assert resolve_policy(cfg).by_basis == (("structured.value_missing", Action.ANNOTATE),)
    assert resolve_policy(cfg, "acme").by_basis == (("words", Action.RELEASE),)
    p = resolve_policy(cfg, "acme", PolicyOverride(by_basis={}))
    assert p.by_basis == () and p.to_json()["by_basis"] is None


def test_hold_off_allowed_when_operator_says_so():
    cfg = GuardrailConfig.model_validate({"limits": {"allow_hold_off": True}})
    p = resolve_policy(cfg, None, PolicyOverride(hold=False, action=Action.ANNOTATE))
    assert p.hold is False and p.action is Action.ANNOTATE


# -- assess / redact --------------------------------------------------------------------

def test_assess_scores_only_the_target_sentence():
    text = "Paris is in France. It opened in 1950. "
    det = detection(text, {"1950"})
    first = assess(det, 0, 20)
    second = assess(det, 20, len(text))
    assert not first.flagged and first.spans == ()
    assert second.flagged and second.score == pytest.approx(0.9)
    assert [(s.start, s.end, s.text) for s in second.spans] == [(13, 18, "1950.")]


def test_assess_with_a_policy_threshold_recomputes_spans():
    text = "It opened in 1950 by Bob."
    det = detection(text, {"1950", "Bob"}, high=0.6)
    strict = assess(det, 0, len(text), threshold=0.55)
    lax = assess(det, 0, len(text), threshold=0.7)
    assert strict.flagged and [s.text for s in strict.spans] == ["1950", "Bob."]
    assert not lax.flagged and lax.spans == ()


def test_redact_one_clean_span_or_the_whole_sentence():
    text = "It opened in 1950 by Bob.\n\n"
    one = (Span(13, 17, "1950", 0.9),)
    assert redact(text, one, "spans", "[x]") == "It opened in [x] by Bob.\n\n"
    # two fragments apart by words read as nonsense: the sentence goes whole
    two = (Span(13, 17, "1950", 0.9), Span(21, 25, "Bob.", 0.9))
    assert redact(text, two, "spans", "[x]") == "[x]\n\n"
    assert redact(text, one, "sentence", "[x]") == "[x]\n\n"
    assert redact(text, (), "spans", "[x]") == "[x]\n\n"
    near = (Span(3, 9, "opened", 0.9), Span(10, 12, "in", 0.8))  # apart by a space: one span
    assert redact(text, near, "spans", "[x]") == "It [x] 1950 by Bob.\n\n"
    parts = "A wrought-iron lattice tower stands in Paris."  # half words widen; "-" joins
    assert redact(parts, (Span(4, 8, "ough", 0.9), Span(9, 11, "ir", 0.9)), "spans",
                  "[x]") == "A [x] lattice tower stands in Paris."
    assert redact("  \n", two, "spans", "[x]") == "  \n"


def test_a_table_row_redacted_whole_keeps_its_cells():
    """A Markdown table row redacted whole keeps its pipes and its first cell, so the
    table still renders; a row with one clean span redacts just that span."""
    row = "| Height | 330 m | steel |\n"
    assert redact(row, (), "spans", "[x]") == "| Height | [x] | [x] |\n"
    assert redact(row, (), "sentence", "[x]") == "| Height | [x] | [x] |\n"
    built = "| Built | 1950 |\n"
    assert redact(built, (Span(10, 14, "1950", 0.9),), "spans", "[x]") == "| Built | [x] |\n"
    assert redact("| odd row\n", (), "spans", "[x]") == "[x]\n"  # no cells: whole


def test_a_span_on_punctuation_alone_redacts_nothing_but_the_sentence():
    text = "The tower is 330 meters."
    stop = (Span(23, 24, ".", 0.9),)
    assert clean_span(text, stop) is None  # not "The tower is 330 [x]"
    assert redact(text, stop, "spans", "[x]") == "[x]"
    most = (Span(0, 16, "The tower is 330", 0.9),)  # most of the sentence: all of it
    assert redact(text, most, "spans", "[x]") == "[x]"


@pytest.mark.parametrize("text,part,redacted", [
    ("Each ticket cost \u20aa53.61.", "53", "Each ticket cost [x]."),           # observed: "[x].61"
    ("Each ticket cost \u20ba157.44.", "44", "Each ticket cost [x]."),          # "\u20ba157.[x]"
    ("The quote comes to \u00a31,200 in all.", "1", "The quote comes to [x] in all."),
    ("The total is $6,970.50 with tax.", "970", "The total is [x] with tax."),
    ("That covers 2,410 to 2,456 only.", "410", "That covers [x] to 2,456 only."),
    ("Occupancy was 87% last week.", "87", "Occupancy was [x] last week."),
    ("The room is 40€ a night.", "40", "The room is [x] a night."),
    ("It is a 30-day rental window.", "30", "It is a [x] rental window."),
    ("It opened in 1950. Then it grew.", "1950", "It opened in [x]. Then it grew."),
    ("It costs $5, or 6 with fees.", "5", "It costs [x], or 6 with fees."),
])
def test_a_value_is_redacted_whole(text, part, redacted):
    """Never part of a number, nor its currency sign or percent, beside the marker; a
    point or comma joins digits only, a hyphen joins only what it stands between."""
    at = text.index(part)
    assert redact(text, (Span(at, at + len(part), part, 0.9),), "spans", "[x]") == redacted


def test_a_span_of_function_words_alone_redacts_the_sentence():
    text = "The Eiffel Tower is in Paris."  # observed: "The Eiffel Tower is [x] Paris."
    assert clean_span(text, (Span(20, 22, "in", 0.74),)) is None
    assert redact(text, (Span(20, 22, "in", 0.74),), "spans", "[x]") == "[x]"
    assert redact(text, (Span(20, 28, "in Paris", 0.74),), "spans", "[x]") \
        == "The Eiffel Tower is [x]."
    assert redact("It opened in 1950.", (Span(13, 17, "1950", 0.9),), "spans", "[x]") \
        == "It opened in [x]."  # a number says something


# -- decide (pure) and the answer's regenerate loop -----------------------------------------------------------------------

FLAGGED = Assessment(0.9, (Span(13, 17, "1950", 0.9),), True, 2)
CLEAN = Assessment(0.1, (), False, 2)
SENT = "It opened in 1950. "
BASE = RegenerateRequest(Grounding(("It opened in 1889.",), "When?"), "Intro. ", "", (), 0,
                         model="m")


class Scripted:
    def __init__(self, *replies):
        self.replies, self.seen = list(replies), []

    async def rewrite(self, req):
        self.seen.append(req)
        r = self.replies.pop(0)
        if isinstance(r, Exception):
            raise r
        return r


def rechecker(bad: set[str]):
    async def recheck(text):
        return CLEAN if not any(b in text for b in bad) else FLAGGED
    return recheck


@pytest.mark.parametrize("action, expected_action, released", [
    (Action.RELEASE, Action.RELEASE, SENT),
    (Action.ANNOTATE, Action.ANNOTATE, SENT),
    (Action.BLOCK, Action.BLOCK, ""),
    (Action.REDACT, Action.REDACT, "It opened in [unsupported]. "),
])
def test_actions(action, expected_action, released):
    out = decide(SENT, FLAGGED, policy(action=action))
    assert (out.action, out.released) == (expected_action, released)


def test_clean_sentence_is_released_whatever_the_action():
    out = decide(SENT, CLEAN, policy(action=Action.BLOCK))
    assert (out.action, out.released) == (Action.RELEASE, SENT)


def test_regenerate_is_left_to_the_answer_unless_no_attempt_is_allowed():
    assert decide(SENT, FLAGGED, policy(action=Action.REGENERATE)).action is Action.REGENERATE
    out = decide(SENT, FLAGGED, policy(action=Action.REGENERATE, max_attempts=0))
    assert (out.action, out.released) == (Action.REDACT, "It opened in [unsupported]. ")


async def test_regenerate_succeeds_on_second_attempt():
    regen = Scripted("It opened in 1951.", "  It opened in 1889.  ")
    out = await regenerate(SENT, FLAGGED, policy(action=Action.REGENERATE), regen,
                           rechecker({"1950", "1951"}), BASE)
    assert (out.action, out.released, out.attempts) == \
        (Action.REGENERATE, "It opened in 1889. ", 2)
    assert regen.seen[0].sentence == "It opened in 1950." and regen.seen[0].attempt == 1
    assert regen.seen[1].previous == ("It opened in 1951.",)
    assert regen.seen[1].answer_so_far == "Intro. "


async def test_regenerate_falls_back_to_redact():
    regen = Scripted(RuntimeError("hook down"), "It opened in 1950 still.")
    out = await regenerate(SENT, FLAGGED, policy(action=Action.REGENERATE), regen,
                           rechecker({"1950"}), BASE)
    assert (out.action, out.released, out.attempts) == \
        (Action.REDACT, "It opened in [unsupported]. ", 2)
    assert "RuntimeError: hook down" in out.notes[0]


async def test_empty_rewrite_stops_retrying():
    regen = Scripted("", "never asked")
    out = await regenerate(SENT, FLAGGED, policy(action=Action.REGENERATE), regen,
                           rechecker(set()), BASE)
    assert out.action is Action.REDACT and out.attempts == 1 and len(regen.replies) == 1


async def test_regenerate_with_zero_attempts_redacts():
    out = await regenerate(SENT, FLAGGED, policy(action=Action.REGENERATE, max_attempts=0),
                           Scripted(), rechecker(set()), BASE)
    assert out.action is Action.REDACT and out.attempts == 0


# -- regenerators -----------------------------------------------------------------------

def test_fill_prompt_leaves_braces_in_documents_alone():
    req = RegenerateRequest(Grounding(('{"json": 1}',), "Q?"), "", "S.", (), 1)
    out = fill_prompt("{context}|{question}|{answer_so_far}|{sentence}|{other}", req)
    assert out == '{"json": 1}|Q?|(nothing yet)|S.|{other}'


async def test_upstream_regenerator_sends_one_non_streaming_call():
    class Chat:
        async def chat(self, body, client_auth=None, timeout=None):
            self.args = (body, client_auth, timeout)
            return {"choices": [{"message": {"content": "It opened in 1889."}}]}
    chat = Chat()
    r = UpstreamRegenerator(chat, RegenerateConfig(timeout_s=7), "Bearer c")
    req = RegenerateRequest(Grounding(("doc",), "Q?"), "A.", "S.", (), 1, model="m1")
    assert await r.rewrite(req) == "It opened in 1889."
    body, auth, timeout = chat.args
    assert body["model"] == "m1" and body["stream"] is False and (auth, timeout) == ("Bearer c", 7)
    assert "doc" in body["messages"][0]["content"] and "S." in body["messages"][0]["content"]


async def test_a_model_that_refuses_a_rewrite_parameter_is_asked_without_it():
    """A reasoning model (OpenAI's 400s, as they are sent) refuses ``max_tokens`` and a
    temperature other than its default: the rewrite is asked again with
    ``max_completion_tokens`` and no temperature, and the app remembers it per model."""
    from guardrail.config import UpstreamConfig
    from guardrail.proxy.upstream import UpstreamClient

    calls = []

    def reasoning_model(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        calls.append(sorted(k for k in body if k not in ("messages", "stream")))
        if body["model"] == "o-mini" and "max_tokens" in body:
            return httpx.Response(400, json={"error": {
                "message": "Unsupported parameter: 'max_tokens' is not supported with this "
                           "model. Use 'max_completion_tokens' instead.",
                "type": "invalid_request_error", "param": "max_tokens",
                "code": "unsupported_parameter"}})
        if body["model"] == "o-mini" and body.get("temperature", 1) != 1:
            return httpx.Response(400, json={"error": {
                "message": "Unsupported value: 'temperature' does not support 0.0 with this "
                           "model. Only the default (1) value is supported.",
                "type": "invalid_request_error", "param": "temperature",
                "code": "unsupported_value"}})
        if body["model"] == "broken":
            return httpx.Response(400, json={"error": {"message": "bad 'messages'",
                                                       "param": "messages"}})
        return httpx.Response(200, json={"choices": [{"message": {"content": "Fixed."}}]})

    upstream = UpstreamClient(UpstreamConfig(base_url="http://llm.test/v1"),
                              httpx.MockTransport(reasoning_model))
    factory = RegeneratorFactory(RegenerateConfig(), upstream)
    req = RegenerateRequest(Grounding(("doc",), "Q?"), "A.", "S.", (), 1, model="o-mini")
    try:
        assert await factory.for_request("Bearer k").rewrite(req) == "Fixed."
        assert calls == [["max_tokens", "model", "temperature"],
                         ["max_completion_tokens", "model", "temperature"],
                         ["max_completion_tokens", "model"]]
        calls.clear()  # the next rewrite, another request: asked as the model wants at once
        assert await factory.for_request("Bearer k").rewrite(req) == "Fixed."
        assert calls == [["max_completion_tokens", "model"]]
        calls.clear()  # another model is asked as usual
        assert await factory.for_request().rewrite(replace(req, model="gpt")) == "Fixed."
        assert calls == [["max_tokens", "model", "temperature"]]
        with pytest.raises(UpstreamStatusError):  # any other refusal is the attempt's failure
            await factory.for_request().rewrite(replace(req, model="broken"))
    finally:
        await upstream.aclose()


async def test_callable_hook_by_dotted_path(monkeypatch):
    mod = types.ModuleType("guardrail_test_hooks")
    mod.sync_fix = lambda req: req.sentence.replace("1950", "1889")

    async def async_fix(req):
        return "async " + req.sentence
    mod.async_fix = async_fix
    mod.not_callable = 3
    monkeypatch.setitem(sys.modules, "guardrail_test_hooks", mod)
    req = RegenerateRequest(Grounding(("d",)), "", "Built 1950.", (), 1)
    assert await CallableRegenerator(load_callable("guardrail_test_hooks:sync_fix"), 5) \
        .rewrite(req) == "Built 1889."
    factory = RegeneratorFactory(RegenerateConfig(hook="guardrail_test_hooks:async_fix"), None)
    assert await factory.for_request().rewrite(req) == "async Built 1950."
    with pytest.raises(ValueError, match="no callable 'not_callable'"):
        load_callable("guardrail_test_hooks:not_callable")
    with pytest.raises(ValueError, match="cannot import 'no_such_module_xyz'"):
        load_callable("no_such_module_xyz:f")


async def test_http_hook():
    seen = []

    def handler(request):
        seen.append(request.read())
        return httpx.Response(200, json={"text": "fixed."})
    async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as c:
        r = HttpRegenerator("http://hook.test/rewrite", c, 5)
        assert await r.rewrite(RegenerateRequest(Grounding(("d",)), "", "S.", (), 1)) \
            == Rewrite("fixed.")
        assert b'"sentence": "S."' in seen[0] or b'"sentence":"S."' in seen[0]
    async with httpx.AsyncClient(transport=httpx.MockTransport(lambda r: httpx.Response(
            200, json={"text": "fixed.", "documents": ["found"]}))) as c:
        assert await HttpRegenerator("http://hook.test/x", c, 5).rewrite(
            RegenerateRequest(Grounding(("d",)), "", "S.", (), 1)) == Rewrite("fixed.", ("found",))
    async with httpx.AsyncClient(transport=httpx.MockTransport(lambda r: httpx.Response(
            200, json={"text": "fixed.", "documents": "found"}))) as c:
        with pytest.raises(ValueError, match="documents"):
            await HttpRegenerator("http://hook.test/x", c, 5).rewrite(
                RegenerateRequest(Grounding(("d",)), "", "S.", (), 1))
    async with httpx.AsyncClient(transport=httpx.MockTransport(
            lambda r: httpx.Response(200, json={"nope": 1}))) as c:
        with pytest.raises(ValueError, match="must answer"):
            await HttpRegenerator("http://hook.test/x", c, 5).rewrite(
                RegenerateRequest(Grounding(("d",)), "", "S.", (), 1))


async def test_a_long_rewrite_cannot_hide_one_false_sentence_among_true_ones():
    """Read whole, many true sentences dilute one false one (as a real check does): the
    rewrite is also read sentence by sentence, and rejected."""
    async def diluted(text):  # flags 1950 only where it is most of the text
        return FLAGGED if "1950" in text and len(text) < 120 else CLEAN
    true = "It stands in Paris. " * 10
    regen = Scripted(true + "It opened in 1950.", "It opened in 1889.")
    out = await regenerate(SENT, FLAGGED, policy(action=Action.REGENERATE), regen,
                           diluted, BASE)
    assert (out.action, out.released, out.attempts) == \
        (Action.REGENERATE, "It opened in 1889. ", 2)


def test_fill_prompt_fills_each_field_once():
    req = RegenerateRequest(Grounding(("note: {sentence} / {answer_so_far}",), "Q?"), "",
                            "S.", (), 1)
    assert fill_prompt("{context}|{sentence}", req) == \
        "note: {sentence} / {answer_so_far}|S."


async def test_a_hook_that_drips_its_reply_is_cut_at_the_deadline():
    async def drip():
        for _ in range(40):
            await asyncio.sleep(0.05)
            yield b" "
        yield b'{"text": "fixed."}'

    async with httpx.AsyncClient(transport=httpx.MockTransport(
            lambda r: httpx.Response(200, content=drip()))) as c:
        with pytest.raises(asyncio.TimeoutError):
            await HttpRegenerator("http://hook.test/x", c, 0.3).rewrite(
                RegenerateRequest(Grounding(("d",)), "", "S.", (), 1))

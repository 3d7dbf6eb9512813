"""The copilot chat page (guardrail/ui/, ``guardrail serve --ui``) in a real browser.

Debian's Chromium (/usr/bin/chromium) driven by Playwright's Python API, against a real
``guardrail serve --ui`` process (started by examples/copilot_chat/run.py's
``start_guardrail``, with the real detector) in front of the scripted fake LLM
(examples/copilot_chat/scenario.yaml) on a loopback port.  The tests look at what a
person sees.  A MutationObserver, installed before the page's own scripts, records
every text node, text change and attribute value the page ever puts in its document,
so "the unsupported sentence never appears" holds for every moment, not only at the end.

Skipped without Chromium or Playwright (``bash scripts/setup-browser``), failed instead
when ``GUARDRAIL_REQUIRE_BROWSER=1`` (CI).
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
from pathlib import Path
from typing import Iterator

import pytest
import yaml
from conftest import TEST_LATENCY_BUDGET_S, serve, wait_until

from guardrail.testing.fake_upstream import FakeScript, create_fake_upstream

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                 "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]
EXAMPLES = json.loads((ROOT / "guardrail" / "ui" / "examples.json").read_text())

_spec = importlib.util.spec_from_file_location("copilot_chat_run",
                                               ROOT / "examples" / "copilot_chat" / "run.py")
run = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(run)

# Records everything the page shows, as it happens (characterData and attribute old
# values included: text replaced in the same task is caught too).
RECORDER = """
window.__seen = [];
const note = (node) => {
  if (!node) return;
  window.__seen.push(node.textContent || "");
  if (node.nodeType === Node.ELEMENT_NODE) {
    for (const e of [node, ...node.querySelectorAll("*")])
      for (const a of e.attributes) window.__seen.push(a.value);
  }
};
new MutationObserver((records) => {
  for (const r of records) {
    if (r.type === "childList") { r.addedNodes.forEach(note); r.removedNodes.forEach(note); }
    else if (r.type === "characterData") window.__seen.push(r.oldValue || "", r.target.data);
    else window.__seen.push(r.oldValue || "", r.target.getAttribute(r.attributeName) || "");
  }
}).observe(document, {childList: true, subtree: true, characterData: true,
                      characterDataOldValue: true, attributes: true, attributeOldValue: true});
"""


def _missing() -> str:
    if not os.path.exists(CHROMIUM):
        return f"no {CHROMIUM} (bash scripts/setup-browser)"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "playwright is not installed (bash scripts/setup-browser)"
    return ""


@pytest.fixture(scope="module")
def browser():
    why = _missing()
    if why:
        if os.environ.get("GUARDRAIL_REQUIRE_BROWSER") == "1":
            pytest.fail(f"GUARDRAIL_REQUIRE_BROWSER=1 but {why}")
        pytest.skip(why)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture(scope="module")
def fake():
    script = FakeScript.from_yaml(run.SCENARIO)
    script.token_delay_s = 0.02
    with serve(create_fake_upstream(script)) as s:
        yield s


@pytest.fixture(scope="module")
def proxy(browser, fake, tmp_path_factory) -> Iterator[str]:
    port = run.free_port()
    log_path = tmp_path_factory.mktemp("ui") / "guardrail.log"
    env = {"GUARDRAIL_SCHEDULER__LATENCY_BUDGET_S": str(TEST_LATENCY_BUDGET_S),
           "GUARDRAIL_SCHEDULER__INITIAL_STREAMS": "64"}
    with open(log_path, "w") as log:
        try:
            proc = run.start_guardrail(fake.url + "/v1", port, env=env, log=log)
        except RuntimeError as e:
            pytest.fail(f"guardrail serve --ui did not start: {e}\n{log_path.read_text()[-4000:]}")
        try:
            yield f"http://127.0.0.1:{port}"
        finally:
            run.stop(proc)


@pytest.fixture
def page(browser, proxy, fake):
    fake.app.state.log.clear()
    context = browser.new_context(viewport={"width": 1360, "height": 900})
    context.add_init_script(RECORDER)
    pg = context.new_page()
    errors: list[str] = []
    pg.on("pageerror", lambda e: errors.append(str(e)))
    pg.goto(run.page_url(int(proxy.rsplit(":", 1)[1])))
    pg.wait_for_selector("body[data-ready]")
    pg.wait_for_selector(".example")
    yield pg
    context.close()
    assert errors == [], errors


def seen(page) -> str:
    """Everything the page ever put in its document, joined."""
    return "\n".join(page.evaluate("window.__seen"))


def ask(page, example: int, action: str | None = None, extra: dict | None = None):
    """Fill the composer from an example, send it, and wait until the answer ends;
    returns the answer's turn."""
    page.locator(".example").nth(example).click()
    if action is not None:
        page.select_option("#action", action)
    if extra is not None:
        page.click("#debug summary")
        page.fill("#extra", json.dumps(extra))
    before = page.locator(".turn.assistant").count()
    page.click("#send")
    turn = page.locator(".turn.assistant").nth(before)
    turn.locator(".report, .banner").first.wait_for(timeout=120_000)
    return turn


def sentences(turn) -> list[str]:
    return [t.strip() for t in turn.locator(".s-text").all_inner_texts()]


SUPPORTED = ["The Eiffel Tower is a wrought-iron lattice tower in Paris.",
             "The tower is 330 metres tall."]


def test_the_unsupported_sentence_never_appears_and_supported_ones_do_in_order(page, fake):
    turn = ask(page, 2, action="redact")
    shown = sentences(turn)
    assert [s for s in shown if s in SUPPORTED] == SUPPORTED   # verbatim, in order
    assert shown.index(SUPPORTED[0]) < shown.index(SUPPORTED[1])
    assert "[unsupported]" in turn.locator(".s-redact").inner_text()
    call = fake.app.state.log[-1]
    assert call.finished and "1950" in FakeScript.from_yaml(run.SCENARIO).rule_for(call.body).reply
    record = seen(page)
    assert SUPPORTED[1] in record         # the recorder saw the answer being written...
    assert "1950" not in record           # ...and never the unsupported claim, at any moment
    # the report is shown (it carried the original sentence; the page did not render it)
    report = turn.locator(".report")
    assert "hallucination detected" in report.inner_text()
    assert report.locator("tbody tr").count() == 3


def test_a_redacted_sentence_explains_itself_on_hover(page):
    turn = ask(page, 1)                    # the order tool result (JSON), a wrong total
    redacted = turn.locator(".s-redact").first
    tip = redacted.locator(".tip")
    assert not tip.is_visible()
    redacted.hover()
    tip.wait_for(state="visible")
    text = tip.inner_text()
    assert "Redacted" in text and "contradicted" in text
    assert re.search(r"score [01]\.\d\d", text)  # the judge's probability, two decimals
    assert "total eur: 249.9" in text      # the closest context line
    assert "found: a value the grounding does not hold" in text  # what the flag rests on (429)
    assert " ms" in text                   # the sentence's latency
    chips = turn.locator(".chip").all_inner_texts()
    assert len(chips) == 3 and all(" ms" in c for c in chips)
    assert "HTTP 429" not in seen(page)  # the page's error line (a latency may read 429 ms)


def test_without_sentence_events_the_verdicts_come_with_the_report(page):
    page.uncheck("#events")                # e.g. a client of an older guardrail
    turn = ask(page, 1)
    chips = turn.locator(".chip").all_inner_texts()
    assert len(chips) == 3 and not any(" ms" in c for c in chips)  # no per-sentence latency
    redacted = turn.locator(".s-redact").first
    redacted.hover()
    assert "contradicted" in redacted.locator(".tip").inner_text()
    assert "HTTP 429" not in seen(page)  # the page's error line (a latency may read 429 ms)


def test_a_tool_turn_is_sent_as_user_assistant_tool_calls_and_tool_messages(page, fake):
    ask(page, 1)
    body = fake.app.state.log[0].body
    assert [m["role"] for m in body["messages"]] == ["user", "assistant", "tool"]
    user, call, tool = body["messages"]
    assert user["content"] == EXAMPLES[1]["prompt"]
    fn = call["tool_calls"][0]["function"]
    assert fn["name"] == "get_order" and json.loads(fn["arguments"]) == {"order_id": "A-1042"}
    assert tool["tool_call_id"] == call["tool_calls"][0]["id"]
    assert json.loads(tool["content"]) == EXAMPLES[1]["tool"]["result"]
    assert "guardrail" not in body     # guardrail strips its extension before forwarding
    supported = "Order A-1042 has shipped with DHL and should arrive on 15 March 2024."
    assert supported in sentences(page.locator(".turn.assistant").last)


def test_regenerate_shows_the_redacted_old_sentence_then_the_rewrite(page, fake):
    turn = ask(page, 2)                    # the example picks the regenerate policy
    regenerated = turn.locator(".s-regenerate")
    assert regenerated.locator(".s-text").inner_text().strip() == \
        "It was built by the company of Gustave Eiffel from 1887 to 1889."
    assert "[unsupported]" in regenerated.locator("del.s-old").inner_text()
    assert len(fake.app.state.log) == 2 and not fake.app.state.log[1].stream  # the rewrite
    assert "1950" not in seen(page)


def test_block_ends_the_answer_with_a_clear_banner(page):
    turn = ask(page, 2, action="block")
    assert "Blocked by guardrail" in turn.locator(".banner.blocked").inner_text()
    assert sentences(turn) == [SUPPORTED[0]]          # what came before the block
    assert "1950" not in seen(page)


def test_annotate_releases_the_sentence_marked_and_explained(page):
    turn = ask(page, 2, action="annotate")
    annotated = turn.locator(".s-annotate")
    assert "1950" in annotated.locator(".s-text").inner_text()   # annotate sends it as is
    annotated.hover()
    assert "Annotated · contradicted" in annotated.locator(".tip").inner_text()


def test_tenant_and_policy_pickers(page):
    page.select_option("#tenant", label="acme")   # tenant acme's policy: regenerate
    turn = ask(page, 0, action="")
    facts = turn.locator(".report summary").inner_text()
    assert "tenant acme" in facts and "policy regenerate" in facts
    page.select_option("#tenant", label="globex")
    turn = ask(page, 0, action="annotate")
    assert "tenant globex" in turn.locator(".report summary").inner_text()
    assert turn.locator(".s-annotate, .s-release").count() == 3


def test_a_refused_request_shows_the_json_error(page, fake):
    page.locator(".example").nth(0).click()
    page.click("#debug summary")
    page.fill("#extra", json.dumps({"temperature": "hot"}))
    page.click("#send")
    banner = page.locator(".banner.error")
    banner.wait_for()
    text = banner.inner_text()
    assert "HTTP 400" in text and "invalid_request_error" in text
    assert "'temperature' must be a number" in text
    assert page.input_value("#prompt") == EXAMPLES[0]["prompt"]   # back in the composer
    assert fake.app.state.log == []                               # nothing went upstream


def test_an_error_mid_stream_is_shown_after_the_released_sentences(page):
    turn = ask(page, 0, extra={"fake": {"mode": "cut", "after": 24}})
    text = turn.locator(".banner.error").inner_text()
    assert "The answer stopped" in text and "upstream_protocol_error" in text
    first = ("The Eiffel Tower is a wrought-iron lattice tower on the Champ de Mars in Paris, "
             "France.")
    assert sentences(turn)[0] == first
    assert "partial" in turn.locator(".meta").inner_text()


def test_stop_cancels_the_upstream_request(page, fake):
    page.locator(".example").nth(0).click()
    page.click("#debug summary")
    page.fill("#extra", json.dumps({"fake": {"mode": "slow", "delay": 0.25}}))
    page.click("#send")
    wait_until(lambda: fake.app.state.log and fake.app.state.log[-1].pieces_sent >= 3,
               what="the fake LLM streaming")
    page.click("#stop")
    call = fake.app.state.log[-1]
    wait_until(lambda: call.cancelled, timeout=15, what="the upstream request cancelled")
    assert not call.finished
    page.locator(".banner.error", has_text="Stopped.").wait_for()
    assert page.is_enabled("#send") and not page.is_enabled("#stop")


def test_a_tool_call_from_the_llm_gets_a_result_editor(page, fake):
    page.fill("#prompt", "What is the weather in Paris?")
    page.click("#send")
    ask_card = page.locator(".tool-card.ask")
    ask_card.wait_for(timeout=60_000)
    assert "not checked" in page.locator(".turn.assistant .meta").last.inner_text()
    assert "get_weather" in ask_card.inner_text()
    ask_card.locator("textarea").fill('{"city": "Paris", "temp_c": 21}')
    ask_card.locator("button").click()
    wait_until(lambda: len(fake.app.state.log) == 2, what="the follow-up request")
    roles = [m["role"] for m in fake.app.state.log[1].body["messages"]]
    assert roles == ["user", "assistant", "tool"]
    call, tool = fake.app.state.log[1].body["messages"][1:]
    assert call["tool_calls"][0]["function"]["name"] == "get_weather"
    assert tool == {"role": "tool", "tool_call_id": call["tool_calls"][0]["id"],
                    "content": '{"city": "Paris", "temp_c": 21}'}


def test_the_page_sse_parser_reads_every_split_of_the_stream(page):
    # stream.js's SSEParser, in the browser, fed one stream cut at every two points:
    # CRLF (sse-starlette's) and LF line ends, a comment (a keep-alive ping), a
    # two-line data field
    bad = page.evaluate("""async () => {
      const { SSEParser } = await import("./stream.js");
      const text = 'data: {"a": 1}\\n\\n: ping\\r\\n\\r\\ndata: x\\r\\ndata: y\\r\\n\\r\\n' +
                   'data: [DONE]\\r\\n\\r\\n';
      const want = JSON.stringify(['{"a": 1}', "x\\ny", "[DONE]"]);
      const bad = [];
      for (let i = 0; i <= text.length; i++) for (let j = i; j <= text.length; j++) {
        const p = new SSEParser();
        const got = [...p.feed(text.slice(0, i)), ...p.feed(text.slice(i, j)),
                     ...p.feed(text.slice(j))];
        if (JSON.stringify(got) !== want) bad.push([i, j, got]);
      }
      return bad;
    }""")
    assert bad == []


# -- without a browser: the route and the demo's files ---------------------------------

def test_the_page_is_served_only_with_the_flag():
    from starlette.testclient import TestClient

    from guardrail.proxy.app import create_app

    # not entered as a context manager: no lifespan, so no detector is loaded
    with_page = TestClient(create_app(chat_page=True), follow_redirects=False)
    r = with_page.get("/ui/")
    assert r.status_code == 200 and "<title>guardrail" in r.text
    assert "script-src 'self'" in r.headers["content-security-policy"]
    assert with_page.get("/").headers["location"].endswith("/ui/")
    assert "javascript" in with_page.get("/ui/app.js").headers["content-type"]
    assert TestClient(create_app()).get("/ui/").status_code == 404


def test_every_example_has_a_scripted_answer():
    script = FakeScript.from_yaml(run.SCENARIO)
    for ex in EXAMPLES:
        body = {"messages": [{"role": "user", "content": ex["prompt"]}]}
        assert script.rule_for(body).reply not in ("", script.default_reply), ex["title"]
    config = yaml.safe_load(run.CONFIG.read_text())
    assert {n: t["api_keys"][0] for n, t in config["tenants"].items()} == run.TENANTS

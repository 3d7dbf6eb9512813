"""guardrail bench verdicts: labelled answers streamed through a real proxy (loopback,
shipped detector); what the client received is scored against the labels."""

from __future__ import annotations

from conftest import EIFFEL_TOOL

from guardrail.bench import verdicts
from guardrail.train.data import Example


def _example(i: int, response: str, bad: str = "", dataset: str = "hand") -> Example:
    start = response.find(bad) if bad else -1
    spans = ((start, start + len(bad)),) if start >= 0 else ()
    return Example(f"ex{i}", EIFFEL_TOOL, "When was the Eiffel Tower built?", response, spans,
                   bool(spans), True, f"src{i}", dataset)


def test_streamed_answers_are_scored_by_what_the_client_received():
    examples = [_example(0, "The tower is in Paris. It was completed in 1950 by a team of "
                            "Italian architects.", bad="completed in 1950 by a team of "
                            "Italian architects"),
                _example(1, "The tower is in Paris.")]
    result = verdicts.run(examples)
    all_ = result["by_dataset"]["all"]
    assert result["answers"] == 2 and all_["sentences"] == 3 and all_["unsupported"] == 1
    assert all_["unsupported_stopped"] == 1.0  # the demo's hallucination never reaches it
    assert set(result["by_dataset"]) == {"all", "hand"}


def test_chunks_rebuild_the_answer_exactly():
    import json

    from guardrail.testing.script import chat_events

    answer = "It is 330 m tall.\n\nIt opened in 1889.  "
    events = chat_events(answer)
    assert events[-1] == "[DONE]"
    text = "".join(json.loads(e)["choices"][0]["delta"].get("content", "")
                   for e in events[:-1])
    assert text == answer


def test_formats_of_one_family_of_tool_turns_are_also_summed():
    examples = [_example(0, "The tower is in Paris.", dataset="toolctx/dev/json-array"),
                _example(1, "The tower is in Paris. It is tall.",
                         dataset="toolctx/dev/markdown-table")]
    by = verdicts.run(examples)["by_dataset"]
    assert set(by) == {"all", "toolctx/dev", "toolctx/dev/json-array",
                       "toolctx/dev/markdown-table"}
    assert by["toolctx/dev"]["sentences"] == 3 == by["all"]["sentences"]

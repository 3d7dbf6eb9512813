"""The segmenter gives the same pieces however the text is chunked, and they partition it."""

from __future__ import annotations

import random

import pytest

from guardrail.stream import segmenter as segmenter_module
from guardrail.stream.segmenter import SentenceSegmenter, build_punkt, load_abbreviations
from guardrail.types import Sentence


class NC(str):
    """An expected piece that is not checkable (code, whitespace, a rule)."""


def segment(pieces: list[str], **kw) -> list[Sentence]:
    seg = SentenceSegmenter(**kw)
    out: list[Sentence] = []
    for piece in pieces:
        out += seg.feed(piece)
    return out + seg.flush()


def assert_partition(text: str, sentences: list[Sentence]) -> None:
    assert "".join(s.text for s in sentences) == text
    pos = 0
    for i, s in enumerate(sentences):
        assert s.text, "empty piece"
        assert (s.index, s.start, s.end) == (i, pos, pos + len(s.text))
        assert text[s.start:s.end] == s.text
        pos = s.end


def chunkings(text: str, rng: random.Random | None = None):
    """Whole, one character at a time, every cut into two, a few random cuts into many."""
    yield [text]
    yield list(text)
    for i in range(len(text) + 1):
        yield [text[:i], text[i:]]
    rng = rng or random.Random(len(text))
    for _ in range(5):
        cuts = sorted(rng.sample(range(len(text) + 1), min(len(text) + 1, 6)))
        yield [text[i:j] for i, j in zip([0, *cuts], [*cuts, len(text)])]


def assert_chunking_invariant(text: str, **kw) -> list[Sentence]:
    reference = segment([text], **kw)
    assert_partition(text, reference)
    for pieces in chunkings(text):
        assert segment(pieces, **kw) == reference, f"chunked as {pieces!r}"
    return reference


CASES: list[tuple[str, list[str]]] = [
    # Punkt basics
    ("It costs 3.5 million. Next one.", ["It costs 3.5 million. ", "Next one."]),
    ("Dr. Smith arrived. He sat down.", ["Dr. Smith arrived. ", "He sat down."]),
    ("Mr. and Mrs. Smith left. They came back.", ["Mr. and Mrs. Smith left. ", "They came back."]),
    ("J. R. R. Tolkien wrote it. Yes.", ["J. R. R. Tolkien wrote it. ", "Yes."]),
    ("Wait... then it happened. Wait... Then it did.",
     ["Wait... then it happened. ", "Wait... ", "Then it did."]),
    ("Wait\u2026 then it happened. Wait\u2026 Then it did.",
     ["Wait\u2026 then it happened. ", "Wait\u2026 ", "Then it did."]),
    ('He said "stop." Then he left.', ['He said "stop." ', "Then he left."]),
    ("He said \u201cstop.\u201d Then he left.", ["He said \u201cstop.\u201d ", "Then he left."]),
    ('"Stop." he said. "Why?" she asked.', ['"Stop." he said. ', '"Why?" she asked.']),
    ("(See above.) Next one. Really?! Yes! Why? no idea",
     ["(See above.) ", "Next one. ", "Really?! ", "Yes! ", "Why? ", "no idea"]),
    ("**Note.** Then go.", ["**Note.** ", "Then go."]),
    ("(see Fig. 3) and more. Next.", ["(see Fig. 3) and more. ", "Next."]),
    ("Fruit, e.g. apples. Apples, pears, etc. The end is no. It is No. 5 now.",
     ["Fruit, e.g. apples. ", "Apples, pears, etc. ", "The end is no. ", "It is No. 5 now."]),
    ("The U.S. Army won. At 5 p.m. The end.", ["The U.S. Army won. ", "At 5 p.m. ", "The end."]),
    ("Version 2.0. It works.", ["Version 2.0. ", "It works."]),
    # an address's last word ends the sentence; a saint or a doctor before a name does not
    ("It ships from Denver, CO. The box is 4 kg.", ["It ships from Denver, CO. ", "The box is 4 kg."]),
    ("Pick it up at 410 N 7th St. You can park.", ["Pick it up at 410 N 7th St. ", "You can park."]),
    # a unit of one letter after a number ends the sentence; an initial does not
    ("Protein is 18 g. Fat is 7 g. It serves six.",
     ["Protein is 18 g. ", "Fat is 7 g. ", "It serves six."]),
    ("It ran 100 m. Then it stopped at 5 p.m. Done.",
     ["It ran 100 m. ", "Then it stopped at 5 p.m. ", "Done."]),
    ("Call Dr. Lee at 1200 Oak Dr. The office opens at 9.",
     ["Call Dr. Lee at 1200 Oak Dr. ", "The office opens at 9."]),
    ("We hiked Mount St. Helens. Meet at St. Mary's Church.",
     ["We hiked Mount St. Helens. ", "Meet at St. Mary's Church."]),
    # URLs, e-mails, versions, code-ish words
    ("See https://example.com/a.b?c=d. Mail a.b@c.com. Run v1.2.3 now.",
     ["See https://example.com/a.b?c=d. ", "Mail a.b@c.com. ", "Run v1.2.3 now."]),
    ("Call foo.bar() now. The value is 3.14. Done.",
     ["Call foo.bar() now. ", "The value is 3.14. ", "Done."]),
    ("Use `a. B` or ``x? Y`` here. Then stop.", ["Use `a. B` or ``x? Y`` here. ", "Then stop."]),
    ("It's a ` mark. Next one.", ["It's a ` mark. ", "Next one."]),
    # whitespace
    ("  \n\nLeading space. Trailing.  \n", [NC("  \n\n"), "Leading space. ", "Trailing.  \n"]),
    ("Hi.\tYou.\r\n\r\nThen.", ["Hi.\t", "You.\r\n\r\n", "Then."]),
    ("Soft\nwrapped line. End", ["Soft\nwrapped line. ", "End"]),
    # a statement per line without a full stop, as chat answers write them; a line that
    # leads on into the next (a comma, "by", "the") or a next line in lower case goes on
    ("The tower is 330 metres tall\nIt was built in 1950\nIt is in Paris",
     ["The tower is 330 metres tall\n", "It was built in 1950\n", "It is in Paris"]),
    ("It was built by\nGustave Eiffel in 1889. The\nTower is tall, and\nParis loves it.",
     ["It was built by\nGustave Eiffel in 1889. ", "The\nTower is tall, and\nParis loves it."]),
    # Markdown
    ("1. First\n2. Second", ["1. First\n", "2. Second"]),
    ("- a\n- b", ["- a\n", "- b"]),
    ("Steps:\n1) Mix it. Then bake.\n2) Eat.\n   - slowly\n",
     ["Steps:\n", "1) Mix it. ", "Then bake.\n", "2) Eat.\n   ", "- slowly\n"]),
    ("# Title\nText here. More.\n\nPara two", ["# Title\n", "Text here. ", "More.\n\n", "Para two"]),
    ("## 2. Results\nText.", ["## 2. Results\n", "Text."]),
    ("> quoted one.\n> quoted two\n\nAfter.", ["> quoted one.\n", "> quoted two\n\n", "After."]),
    ("List:\n* one\n* two\n\n---\n\nEnd.", ["List:\n", "* one\n", "* two\n\n", NC("---\n\n"), "End."]),
    ("| a | b |\n|---|---|\n| Dr. X. Y | 2 |\nAfter.",
     [NC("| a | b |\n"), NC("|---|---|\n"), "| Dr. X. Y | 2 |\n", "After."]),
    # a header row is known by the separator after it; a row without one is checked
    ("| Fact | Value |\n| :--- | ---: |\n| Height | 330 m |\n| Built | 1889 |",
     [NC("| Fact | Value |\n"), NC("| :--- | ---: |\n"), "| Height | 330 m |\n",
      "| Built | 1889 |"]),
    ("| Height | 330 m |\n| Built | 1889 |", ["| Height | 330 m |\n", "| Built | 1889 |"]),
    # fenced code
    ("Here:\n```python\nx = 1. \ny = 2\n```\n\nDone. Ok",
     ["Here:\n", NC("```python\n"), NC("x = 1. \n"), NC("y = 2\n"), NC("```\n"), NC("\n"),
      "Done. ", "Ok"]),
    ("````md\n```\ninner\n```\n````\nAfter.",
     [NC("````md\n"), NC("```\n"), NC("inner\n"), NC("```\n"), NC("````\n"), "After."]),
    ("~~~\na. B\n~~~", [NC("~~~\n"), NC("a. B\n"), NC("~~~")]),
    ("1. Step:\n   ```bash\n   ls\n   ```\n2. Next",
     ["1. Step:\n   ", NC("```bash\n"), NC("   ls\n"), NC("   ```\n"), "2. Next"]),
    ("```py\nprint(1)", [NC("```py\n"), NC("print(1)")]),
    # CJK
    ("\u4f60\u597d\u3002\u4e16\u754c\uff01\u597d\u5417\uff1f",
     ["\u4f60\u597d\u3002", "\u4e16\u754c\uff01", "\u597d\u5417\uff1f"]),
    ("\u4ed6\u8bf4\uff1a\u201c\u597d\u3002\u201d\u7136\u540e\u8d70\u4e86\u3002 Then.",
     ["\u4ed6\u8bf4\uff1a\u201c\u597d\u3002\u201d", "\u7136\u540e\u8d70\u4e86\u3002 ", "Then."]),
    # accents and emoji
    ("Caf\u00e9 cr\u00e8me. \U0001F600 \u00c9t\u00e9 chaud.", ["Caf\u00e9 cr\u00e8me. ", "\U0001F600 \u00c9t\u00e9 chaud."]),
    ("", []),
    ("No end here", ["No end here"]),
]


@pytest.mark.parametrize("text,expected", CASES, ids=[repr(c[0][:30]) for c in CASES])
def test_cases(text: str, expected: list[str]) -> None:
    got = assert_chunking_invariant(text)
    assert [s.text for s in got] == [str(e) for e in expected]
    assert [s.checkable for s in got] == [not isinstance(e, NC) for e in expected]


def test_sentence_released_on_first_non_space_character() -> None:
    seg = SentenceSegmenter()
    assert seg.feed("Hello world.") == []
    assert seg.feed("  ") == []
    assert [s.text for s in seg.feed("N")] == ["Hello world.  "]
    assert seg.feed("ext one") == []
    assert [s.text for s in seg.flush()] == ["Next one"]


def test_list_item_released_once_the_marker_is_certain() -> None:
    seg = SentenceSegmenter()
    assert seg.feed("Intro\n1") == []  # "1" could still be "100 people"
    assert [s.text for s in seg.feed(". ")] == ["Intro\n"]


def test_code_lines_stream_without_waiting_for_the_fence() -> None:
    seg = SentenceSegmenter()
    assert [s.text for s in seg.feed("Look:\n```py\nx = 1\n")] == ["Look:\n", "```py\n", "x = 1\n"]
    assert seg.feed("y = 2") == []
    assert [(s.text, s.checkable) for s in seg.feed("\n")] == [("y = 2\n", False)]
    assert [s.text for s in seg.feed("```\n")] == ["```\n"]
    assert [s.text for s in seg.flush()] == []


def test_flush_resets() -> None:
    seg = SentenceSegmenter()
    assert [s.text for s in seg.feed("```\ncode")] == ["```\n"]
    assert [s.text for s in seg.flush()] == ["code"]
    assert [(s.index, s.text, s.start) for s in seg.feed("A. B") + seg.flush()] == [
        (0, "A. B", 0)]


def test_custom_abbreviations() -> None:
    assert [s.text for s in segment(["Dr. Who. Zz. Top."])] == ["Dr. Who. ", "Zz. ", "Top."]
    assert [s.text for s in segment(["Dr. Who. Zz. Top."], abbreviations=["Zz."])] == [
        "Dr. ", "Who. ", "Zz. Top."]


def test_runaway_sentence_is_cut() -> None:
    text = "word " * 30 + "x" * 250 + " tail"
    got = assert_chunking_invariant(text, max_chars=40)
    assert [len(s.text) for s in got] == [45, 45, 45, 15 + 65, 80, 80, 25 + 5]
    assert_chunking_invariant("```\n" + "y" * 100 + "\n```\n", max_chars=20)


def _long_answer() -> str:
    paragraphs = [
        "The Eiffel Tower is 330 m tall. It was built in 1889 by G. Eiffel's company, "
        "i.e. Compagnie des \u00c9tablissements Eiffel. Dr. Smith visited at 5 p.m. on Jan. 3.",
        "## Key facts\n1. It weighs approx. 10,100 tonnes.\n2. It has three levels.\n"
        "   - the top one is 276 m high.\n",
        "Here is code:\n```python\nimport math\nprint(math.pi)  # 3.14. Not a sentence.\n```\n",
        "Prices rose 3.5% in the U.S. Then they fell... Wait... then what? Nobody knew! "
        "See https://example.com/v1.2.3 for more.",
        "\u6c34\u5f88\u70ed\u3002\u4f60\u597d\uff01 \u00c9t\u00e9 \u00e0 Paris \U0001F600. "
        '"Really?" she asked. Use `obj.method()`. Done.',
    ]
    text, i = "", 0
    while len(text) < 10_000:
        text += paragraphs[i % len(paragraphs)] + "\n\n"
        i += 1
    return text


def test_long_answer_in_small_chunks() -> None:
    text = _long_answer()
    reference = segment([text])
    assert_partition(text, reference)
    assert len(reference) > 300
    for size in (1, 2, 3, 5, 7, 64):
        assert segment([text[i:i + size] for i in range(0, len(text), size)]) == reference
    rng = random.Random(7)
    pieces, i = [], 0
    while i < len(text):
        n = rng.randint(1, 12)
        pieces.append(text[i:i + n])
        i += n
    assert segment(pieces) == reference


def test_medium_answer_split_everywhere() -> None:
    text = _long_answer()[:900]
    reference = segment([text])
    for i in range(len(text) + 1):
        assert segment([text[:i], text[i:]]) == reference, i


class SpyTokenizer:
    """Counts Punkt runs and the characters they read."""

    def __init__(self, inner) -> None:
        self.inner, self.calls, self.chars = inner, 0, 0

    def span_tokenize(self, text: str, *args, **kw):
        self.calls += 1
        self.chars += len(text)
        return self.inner.span_tokenize(text, *args, **kw)


def test_punkt_runs_are_linear_in_sentences_not_characters() -> None:
    text = _long_answer()
    seg = SentenceSegmenter()
    spy = seg.tokenizer = SpyTokenizer(seg.tokenizer)
    out: list[Sentence] = []
    for ch in text:
        out += seg.feed(ch)
    out += seg.flush()
    assert out == segment([text])
    prose = sum(s.checkable for s in out)
    # One run per ".?!" followed by a space (some are abbreviations), never per character.
    assert spy.calls <= 2 * prose
    assert spy.calls < len(text) / 20
    # Each run reads only the pending sentence, never the answer so far.
    assert spy.chars <= 3 * len(text)


def test_no_download_and_no_growth(monkeypatch: pytest.MonkeyPatch) -> None:
    import nltk

    def refuse(*args, **kw):
        raise AssertionError("the segmenter must not load or download nltk data")

    monkeypatch.setattr(nltk, "download", refuse)
    monkeypatch.setattr(nltk.data, "load", refuse)
    monkeypatch.setattr(nltk.data, "find", refuse)
    tokenizer = build_punkt.__wrapped__(load_abbreviations())
    seg = SentenceSegmenter()
    seg.tokenizer = tokenizer
    text = _long_answer()
    assert [s.text for s in seg.feed(text) + seg.flush()] == [s.text for s in segment([text])]
    # Punkt's orthographic table must not learn every word it sees (shared tokenizer).
    assert len(tokenizer._params.ortho_context) == 0


def test_shipped_lists() -> None:
    abbrevs = load_abbreviations()
    assert 100 <= len(abbrevs) <= 200
    assert {"dr", "e.g", "i.e", "u.s", "etc", "jan", "dec"} <= abbrevs
    assert not {"may", "sat", "sun", "art"} & abbrevs  # ordinary words that end sentences
    assert all(a == a.lower() and not a.endswith(".") for a in abbrevs)
    assert segmenter_module.final_abbreviations() <= abbrevs


def test_fuzz_chunking_invariance() -> None:
    fragments = ["Hello", "world", "Dr.", "Smith", "etc.", "The", "the", ".", ". ", "? ", "! ",
                 "...", "\u2026", " ", "\n", "\n\n", "1. ", "- ", "# ", "> ", "| a |", "---",
                 "```", "```py", "~~~", "`", "``", "3.5", "J.", '"', "\u201d", ")", "\u3002",
                 "\u4f60\u597d", "e.g.", "U.S.", "v1.2.3", "**", "\t", "\r\n", "\u00e9",
                 "\U0001F600", "no.", "A.", "it"]
    rng = random.Random(1234)
    for _ in range(60):
        text = "".join(rng.choice(fragments) for _ in range(rng.randint(1, 20)))
        max_chars = rng.choice([2000, 15, 40])
        reference = segment([text], max_chars=max_chars)
        assert_partition(text, reference)
        assert segment(list(text), max_chars=max_chars) == reference, repr(text)
        for _ in range(4):
            i = rng.randint(0, len(text))
            assert segment([text[:i], text[i:]], max_chars=max_chars) == reference, (text, i)

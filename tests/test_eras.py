"""Centuries and decades read as the spans of years they name (eras.py): "built in the
1980s" for ``year_built: 1987``, "the 12th century" for "the late 1100s" and back."""

from evidence_of import missing_texts as missing

from guardrail.evidence.eras import eras
from guardrail.evidence.values import numbers

HOUSE = '{"address": "12 Elm St", "year_built": 1987, "bedrooms": 3, "listed": "2025-03-14"}'
ABBEY = ("The abbey was founded in the late 1100s by Cistercian monks. The chapter house "
         "dates from 1187. By the 1300s the abbey held 200 acres, and in the fifteenth "
         "century its church was rebuilt.")


def test_an_era_is_its_span_of_years():
    text = "the 1980s, the 1100s, the 12th century, the twenty-first century, the '80s"
    assert [(text[a:b], first, last) for a, b, first, last in eras(text)] == [
        ("12th", 1100, 1199), ("twenty-first", 2000, 2099), ("1980s", 1980, 1989),
        ("1100s", 1100, 1199)]
    assert eras("in 1987, 120 units, the 1st century, 4.50s") == []


def test_a_year_is_said_as_its_decade_or_century():
    assert missing(HOUSE, "The house was built in the 1980s.") == []
    assert missing(HOUSE, "It was built in the late 20th century.") == []
    assert missing(HOUSE, "The house was built in the 1990s.") == ["1990s"]
    assert missing(HOUSE, "It was built in the 19th century.") == ["19th"]


def test_a_century_is_its_hundreds_both_ways():
    assert missing(ABBEY, "The abbey was founded in the late 12th century.") == []
    assert missing(ABBEY, "The chapter house is from the 1180s.") == []
    assert missing(ABBEY, "Its church was rebuilt in the 1400s.") == []
    assert missing(ABBEY, "It was founded in the 13th century.") == ["13th"]
    assert missing(ABBEY, "The chapter house is from the 1190s.") == ["1190s"]


def test_a_century_after_by_or_from_is_no_day_of_the_month():
    """"By the 14th" alone is a day; "by the 14th century" is the 1300s."""
    assert missing(ABBEY, "By the 14th century the abbey held 200 acres.") == []
    assert [n.kind for n in numbers("By the 14th century it held land.")] == ["era"]
    assert [n.kind for n in numbers("Pay by the 14th, please.")] == ["date"]

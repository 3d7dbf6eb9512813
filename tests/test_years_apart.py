"""Years between two years a prose text states (spans.years_apart): "ruled for 265 years"
for "from 1603 until 1868", read through ContextEvidence; a wrong span stays missing."""

from evidence_of import missing_texts as missing

from guardrail.evidence.spans import year_ranges

EDO = ("The Tokugawa shogunate ruled Japan from 1603 until 1868, when the Meiji "
       "Restoration returned power to the emperor. Edo had about 1 million residents by 1720.")
OTTOMAN = ("The Ottoman Empire was founded in 1299 by Osman I. Constantinople fell to Mehmed "
           "II in 1453. Suleiman the Magnificent reigned from 1520 to 1566, the empire's peak. "
           "The second siege of Vienna failed in 1683. The empire was dissolved in 1922.")


def test_years_between_two_years_of_a_short_text():
    assert missing(EDO, "The shogunate ruled for 265 years.") == []
    assert missing(EDO, "It ruled for nearly 270 years.") == []
    assert missing(EDO, "Edo reached a million people 117 years after it began.") == []
    assert missing(EDO, "The shogunate ruled for 256 years.") == ["256"]
    assert missing(EDO, "It lasted about 250 years.") == ["250"]  # too rough to tell


def test_with_many_years_only_a_stated_span_counts():
    """Six years make fifteen pairs, too many for a number of years to say which: only
    "from 1520 to 1566" is read as a span."""
    assert year_ranges(OTTOMAN) == ((1520, 1566),)
    assert missing(OTTOMAN, "Suleiman reigned for 46 years.") == []
    assert missing(OTTOMAN, "Suleiman reigned for about 45 years.") == []
    assert missing(OTTOMAN, "Suleiman reigned for 64 years.") == ["64"]
    assert missing(OTTOMAN, "Constantinople fell 154 years after the founding.") == ["154"]


def test_a_span_is_only_years():
    assert missing(EDO, "It had 265 castles.") == ["265"]
    assert missing(EDO, "The shogunate ruled for 265 months.") == ["265"]

"""Values as contracts and histories write them: a number in words and in digits
("twenty-four (24) months", units.py) and a century by its ordinal ("the 12th century",
eras.py), read through ContextEvidence."""

from guardrail.evidence.features import ContextEvidence

WARRANTY = ("9.1 The Seller warrants that the Equipment will be free from defects in "
            "materials and workmanship for twenty-four (24) months from the date of "
            "delivery. 9.3 The Buyer must notify the Seller of any defect in writing within "
            "fourteen (14) days of discovering it.")
HANSA = ("The Hanseatic League grew out of a few North German towns in the late 12th "
         "century and at its height, in the 14th and 15th centuries, included nearly 200 "
         "settlements.")


def missing(context, sentence):
    return [n.value for n in ContextEvidence.build([context]).features(sentence).missing_numbers]


def test_a_number_in_words_and_digits_carries_its_unit():
    assert missing(WARRANTY, "The equipment is warranted for two years from delivery.") == []
    assert missing(WARRANTY, "You must report a defect within two weeks.") == []
    assert missing(WARRANTY, "You must report a defect within 14 days.") == []
    assert missing(WARRANTY, "The equipment is warranted for three years.") == [3]
    assert missing(WARRANTY, "You must report a defect within three weeks.") == [3]


def test_a_century_by_its_ordinal_is_its_hundreds():
    assert missing(HANSA, "It started in North German towns in the late 1100s.") == []
    assert missing(HANSA, "At its height, in the 1300s and 1400s, it had about 200 towns.") == []
    # "the 1200s" is missing as the span it names, 1200 to 1299 (eras.py)
    assert missing(HANSA, "It started in North German towns in the late 1200s.") == [1249.5]

"""Counts of a log's lines (guardrail.evidence.lined), read through ContextEvidence."""

from guardrail.evidence.features import ContextEvidence
from guardrail.evidence.lined import LineTallies
from guardrail.evidence.words import stem

ACCESS_LOG = "\n".join([
    '10.0.0.5 - - [12/Mar/2024:14:02:11 +0000] "GET /api/users HTTP/1.1" 200 512',
    '10.0.0.7 - - [12/Mar/2024:14:02:15 +0000] "POST /api/orders HTTP/1.1" 500 87',
    '10.0.0.5 - - [12/Mar/2024:14:03:02 +0000] "GET /api/users HTTP/1.1" 200 498',
    '10.0.0.9 - - [12/Mar/2024:14:04:40 +0000] "GET /health HTTP/1.1" 200 2'])
APP_LOG = "\n".join([
    "2024-03-12 09:00:01 INFO worker started",
    "2024-03-12 09:00:07 ERROR payment gateway timeout",
    "2024-03-12 09:01:13 WARN retrying payment",
    "2024-03-12 09:01:20 ERROR payment gateway timeout",
    "2024-03-12 09:02:00 INFO worker idle"])


def missing(context, sentence):
    return [n.value for n in ContextEvidence.build([context]).features(sentence).missing_numbers]


def test_lines_holding_what_the_sentence_names_are_counted():
    assert missing(ACCESS_LOG, "There were two /api/users requests, both successful.") == []
    assert missing(ACCESS_LOG, "Three requests returned 200.") == []
    assert missing(ACCESS_LOG, "Two requests came from 10.0.0.5.") == []
    assert missing(APP_LOG, "The worker logged two errors, both gateway timeouts.") == []
    # a changed count stays missing
    assert missing(ACCESS_LOG, "There were three /api/users requests.") == [3]
    assert missing(APP_LOG, "The worker logged three errors.") == [3]


def test_every_line_is_counted_only_where_the_sentence_says_it_is_the_total():
    assert missing(ACCESS_LOG, "There were four requests in total.") == []
    assert missing(ACCESS_LOG, "There were five requests in total.") == [5]
    # "errors" names no token of the log: four is no count of its errors
    assert missing(ACCESS_LOG, "There were 4 errors.") == [4]


def test_only_a_grounding_whose_lines_start_alike_is_counted():
    assert LineTallies.of(ACCESS_LOG.splitlines(), stem) is not None
    prose = ["The tower opened in 1889.", "Gustave Eiffel's company built it.",
             "It is 330 metres tall.", "Paris hosted the fair."]
    assert LineTallies.of(prose, stem) is None
    assert LineTallies.of(ACCESS_LOG.splitlines()[:2], stem) is None  # too few lines
    assert missing("\n".join(prose), "Two paragraphs mention Paris.") == [2]

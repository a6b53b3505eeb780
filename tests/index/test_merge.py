"""Several repositories' answers in one list: each index weighed by how well it matches."""

from __future__ import annotations

from tributary.engine.servers.merge import index_factors, repository_names

SAME = [("def parse_invoice_number(text): return int(text)", True, False)]


def test_an_index_is_weighed_by_the_words_its_first_hits_hold() -> None:
    weak = [("def mail_queue(): the mail waiting to parse", True, False)]
    factors = index_factors([SAME, weak], "parse invoice number")
    assert factors[0] == 1.0 and 0 < factors[1] < 0.5
    assert index_factors([weak], "parse invoice number") == [1.0]  # alone: as it ranked itself
    assert index_factors([SAME, SAME], "parse invoice number") == [1.0, 1.0]
    assert index_factors([SAME, weak], "") == [1.0, 1.0]  # no word to weigh by


def test_a_repository_the_question_names_counts_more() -> None:
    names = [repository_names("acme/billing", "/src/billing"), repository_names("/tmp/other", "/tmp/other")]
    assert names == [{"billing"}, {"other"}]
    assert index_factors([SAME, SAME], "in other, parse invoice number", names) == [0.5, 1.0]
    assert index_factors([SAME, SAME], "billing and other parse invoice number", names) == [1.0, 1.0]
    assert index_factors([SAME, SAME], "parse invoice number", names) == [1.0, 1.0]
    # a name inside a longer word is not the repository's: ``_billing``, ``billing-api``
    assert index_factors([SAME, SAME], "parse invoice number in _billing or billing-api", names) == [1.0, 1.0]
    assert repository_names("/w/checkouts/pytest-dev__pytest", "/w/checkouts/pytest-dev__pytest") == {
        "pytest-dev__pytest", "pytest"}

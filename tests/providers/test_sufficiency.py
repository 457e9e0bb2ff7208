from ragq.providers.offline.sufficiency import check
from tests.providers.conftest import ev

REFUNDS = ev("policy", "Refunds are issued within 14 days of the request. Annual plans are "
             "refunded pro rata.", title="Refund policy")
SIBELIUS = ev("finlandia", "Finlandia is a tone poem by the Finnish composer Jean Sibelius, "
              "written in 1899.", title="Finlandia")


def test_evidence_that_covers_the_query_is_sufficient(similarity):
    verdict = check("How long do refunds take?", [REFUNDS], similarity)
    assert verdict.sufficient
    assert verdict.score > 0.5


def test_missing_key_entity_is_insufficient_and_named(similarity):
    verdict = check("Who composed Karelia Suite?", [SIBELIUS], similarity)
    assert not verdict.sufficient
    assert "Karelia Suite" in verdict.missing_terms


def test_off_topic_evidence_is_insufficient(similarity):
    verdict = check("What is the refund window for annual plans?", [SIBELIUS], similarity)
    assert not verdict.sufficient
    assert {"refund", "annual"} <= set(verdict.missing_terms)


def test_no_evidence_is_insufficient(similarity):
    verdict = check("Who composed Finlandia?", [], similarity)
    assert not verdict.sufficient and verdict.reason == "no evidence"

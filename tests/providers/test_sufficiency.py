from ragq.providers.offline.sufficiency import check
from tests.providers.conftest import CountingEmbedder, ev

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


def test_the_searchs_own_cosine_is_read_instead_of_embedding_again(embedder):
    from ragq.providers.offline.similarity import Similarity

    query = "How long do refunds take?"
    counting = CountingEmbedder(embedder)
    similarity = Similarity(counting)
    fresh = check(query, [REFUNDS], Similarity(embedder))
    searched = REFUNDS.model_copy(update={"text_score": Similarity(embedder).best(
        query, ["Refund policy\n" + REFUNDS.text])})
    verdict = check(query, [searched], similarity)
    assert counting.texts == 0
    assert (verdict.sufficient, verdict.reason) == (fresh.sufficient, fresh.reason)
    low = check(query, [searched.model_copy(update={"text_score": 0.1})], similarity)
    assert not low.sufficient and "similarity 0.10" in low.reason


def test_an_unfilled_placeholder_or_a_missing_score_embeds_the_texts(embedder):
    from ragq.providers.offline.similarity import Similarity

    counting = CountingEmbedder(embedder)
    scored = REFUNDS.model_copy(update={"text_score": 0.9})
    check("How long do refunds of {0} take?", [scored], Similarity(counting))
    assert counting.texts == 2  # the query without its placeholder, and the one text
    check("How long do refunds take?", [scored, SIBELIUS], Similarity(counting))
    assert counting.texts == 5

from ragq.providers.offline.verifier import verify
from tests.providers.conftest import CountingEmbedder, ev

SIBELIUS = ev("finlandia", "Finlandia is a tone poem by the Finnish composer Jean Sibelius, "
              "written in 1899.", title="Finlandia")
KARELIA = ev("karelia", "The Karelia Suite is an early work by Jean Sibelius, composed in 1893.",
             title="Karelia Suite")


def test_all_entities_covered_is_sufficient_and_confident(similarity):
    result = verify("When were Finlandia and the Karelia Suite composed?", [SIBELIUS, KARELIA],
                    ["1899", "1893"], similarity)
    assert result.sufficient
    assert result.confidence >= 0.7
    assert result.follow_up_queries == []


def test_missing_entity_gets_a_follow_up_query(similarity):
    result = verify("When were Finlandia and the Karelia Suite composed?", [SIBELIUS],
                    ["1899"], similarity)
    assert not result.sufficient
    assert "Karelia Suite" in result.missing_info
    assert any(q.startswith("Karelia Suite") for q in result.follow_up_queries)


def test_follow_ups_for_missing_terms_search_whole_words(similarity):
    result = verify("How are Finlandia recordings archived and catalogued?", [SIBELIUS],
                    [], similarity)
    assert not result.sufficient
    assert result.follow_up_queries == ["Finlandia recordings archived catalogued"]


def test_a_finding_nothing_is_about_yet_becomes_the_next_hop(similarity):
    result = verify("Where was the composer of Finlandia born?", [SIBELIUS], ["Jean Sibelius"],
                    similarity)
    assert not result.sufficient
    assert result.follow_up_queries[0].startswith("Jean Sibelius")


def test_no_evidence_asks_the_question_again(similarity):
    result = verify("Who composed Finlandia?", [], [], similarity)
    assert not result.sufficient and result.confidence == 0.0
    assert result.follow_up_queries == ["Who composed Finlandia?"]


QUESTION = "When were Finlandia and the Karelia Suite composed?"
OTHERS = [ev(f"other{i}", f"Symphony number {i} premiered in Helsinki.", title=f"Symphony {i}",
             score=0.5 - i / 100) for i in range(4)]


def _scored(items, embedder, question=QUESTION):
    """``items`` as a search scoring ``question`` would return them: each with the cosine of
    the question with its titled text."""
    from ragq.providers.offline.similarity import Similarity

    titled = [f"{e.title}\n{e.text}" for e in items]
    scores = Similarity(embedder).scores(question, titled)
    return [e.model_copy(update={"question_score": s}) for e, s in zip(items, scores,
                                                                        strict=True)]


def test_the_searchs_question_scores_are_read_instead_of_embedding_again(embedder):
    from ragq.providers.offline.similarity import Similarity

    evidence = [SIBELIUS, KARELIA.model_copy(update={"score": 0.7}), *OTHERS]
    fresh = verify(QUESTION, evidence, ["1899", "1893"], Similarity(embedder))
    counting = CountingEmbedder(embedder)
    read = verify(QUESTION, _scored(evidence, embedder), ["1899", "1893"],
                  Similarity(counting))
    assert counting.texts == 0
    assert (read.sufficient, read.reason) == (fresh.sufficient, fresh.reason)
    assert abs(read.confidence - fresh.confidence) < 1e-4
    low = [e.model_copy(update={"question_score": 0.1}) for e in evidence]
    lowered = verify(QUESTION, low, ["1899", "1893"], Similarity(counting))
    assert "similarity 0.10" in lowered.reason and lowered.confidence < fresh.confidence


def test_one_top_item_without_a_question_score_embeds_the_top_texts(embedder):
    from ragq.providers.offline.similarity import Similarity

    scored = _scored([SIBELIUS, KARELIA, *OTHERS], embedder)
    counting = CountingEmbedder(embedder)
    unscored_top = [*scored[:4], scored[4].model_copy(update={"question_score": None}),
                    scored[5]]
    verify(QUESTION, unscored_top, [], Similarity(counting))
    assert counting.texts == 6  # the question and the five best texts
    # an item below the five best needs no score
    counting.texts = 0
    unscored_sixth = [*scored[:5], scored[5].model_copy(update={"question_score": None})]
    verify(QUESTION, unscored_sixth, [], Similarity(counting))
    assert counting.texts == 0

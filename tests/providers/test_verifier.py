from ragq.providers.offline.verifier import verify
from tests.providers.conftest import ev

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


def test_a_finding_nothing_is_about_yet_becomes_the_next_hop(similarity):
    result = verify("Where was the composer of Finlandia born?", [SIBELIUS], ["Jean Sibelius"],
                    similarity)
    assert not result.sufficient
    assert result.follow_up_queries[0].startswith("Jean Sibelius")


def test_no_evidence_asks_the_question_again(similarity):
    result = verify("Who composed Finlandia?", [], [], similarity)
    assert not result.sufficient and result.confidence == 0.0
    assert result.follow_up_queries == ["Who composed Finlandia?"]

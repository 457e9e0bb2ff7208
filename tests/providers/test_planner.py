import re

from ragq.orchestration.plan import layers, validate_plan
from ragq.providers.offline.planner import plan
from ragq.schemas.flow import Strategy


def test_bridge_question_becomes_a_two_step_chain_with_a_placeholder():
    result = plan("Who founded the company that makes the Walkman?", max_sub_queries=5)
    assert result.strategy is Strategy.CHAIN
    first, second = result.sub_queries
    assert first.text == "the company that makes the Walkman" and first.depends_on == []
    assert second.text == "Who founded {0}?" and second.depends_on == [0]


def test_nested_descriptions_become_a_chain_innermost_first():
    q = "What is the capital of the country where the composer of Finlandia was born?"
    result = plan(q, max_sub_queries=5)
    texts = [s.text for s in result.sub_queries]
    assert texts == ["the composer of Finlandia", "the country where {0} was born",
                     "What is the capital of {1}?"]
    validated = validate_plan(result, question=q, max_sub_queries=5)
    assert validated.repairs == () and layers(validated) == [[0], [1], [2]]


def test_chain_respects_the_budget_without_dangling_placeholders():
    q = "What is the capital of the country where the composer of Finlandia was born?"
    result = plan(q, max_sub_queries=2)
    assert len(result.sub_queries) == 2
    for index, sub in enumerate(result.sub_queries):
        assert all(int(i) < index for i in re.findall(r"\{(\d+)\}", sub.text))


def test_comparison_yields_one_sub_query_per_entity_and_a_compare_strategy():
    result = plan("Which river is longer, the Danube or the Rhine?", max_sub_queries=5)
    assert result.strategy is Strategy.COMPARE
    texts = [s.text for s in result.sub_queries]
    assert len(texts) == 2
    assert texts[0].startswith("Danube") and texts[1].startswith("Rhine")
    assert all("longer" in t and not s.depends_on for t, s in zip(texts, result.sub_queries,
                                                                      strict=True))


def test_both_question_is_a_comparison():
    result = plan("Are Ada Lovelace and Grace Hopper both mathematicians?", max_sub_queries=4)
    assert result.strategy is Strategy.COMPARE
    assert [s.text for s in result.sub_queries] == ["Ada Lovelace mathematicians",
                                                    "Grace Hopper mathematicians"]


def test_conjunction_yields_parallel_parts_and_resolves_this():
    q = "Which plan includes priority support, and how much does this plan cost per seat?"
    result = plan(q, max_sub_queries=4)
    assert result.strategy is Strategy.AGGREGATE
    first, second = result.sub_queries
    assert first.text == "Which plan includes priority support?"
    assert second.text.startswith("how much does this plan cost per seat")
    assert "priority support" in second.text  # the anaphora carries its topic
    assert second.depends_on == []


def test_statement_with_a_hidden_question_splits_at_its_last_entity():
    q = "Moominvalley is a series based on books by a writer born in what city?"
    result = plan(q, max_sub_queries=4)
    assert result.strategy is Strategy.CHAIN
    assert [s.text for s in result.sub_queries] == [
        "Moominvalley is a series based on books by a writer", "{0} born in what city?"]


def test_simple_question_stays_one_sub_query():
    result = plan("When was Ada Lovelace born?", max_sub_queries=5)
    assert result.strategy is Strategy.SINGLE
    assert [s.text for s in result.sub_queries] == ["When was Ada Lovelace born?"]


def test_a_budget_of_one_never_decomposes():
    result = plan("Who founded the company that makes the Walkman?", max_sub_queries=1)
    assert len(result.sub_queries) == 1

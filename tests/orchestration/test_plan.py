import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragq.orchestration.plan import PlanError, layers, validate_plan
from ragq.orchestration.text import normalize_query
from ragq.schemas.flow import Plan, PlannedSubQuery, Strategy

QUESTION = "Who founded the company that makes the Model T?"

TEXTS = st.one_of(
    st.sampled_from(["", "   ", "Who founded {0}?", "company that makes X", "{1} and {0}",
                     "COMPANY that makes x!", "{7}", "{0}", "what is {-1}", "a {b} c"]),
    st.text(max_size=30),
)
DEPS = st.lists(st.integers(min_value=-5, max_value=60), max_size=6)
SUBS = st.lists(st.builds(PlannedSubQuery, text=TEXTS, depends_on=DEPS), max_size=40)
PLANS = st.builds(Plan, sub_queries=SUBS, strategy=st.sampled_from(list(Strategy)))
BUDGETS = st.integers(min_value=1, max_value=12)


def _simulate(order: list[list[int]], subs) -> list[int]:
    """Run layer by layer; a sub-query runs only once all its dependencies have run."""
    done: list[int] = []
    for layer in order:
        for index in layer:
            assert all(dep in done for dep in subs[index].depends_on)
        done.extend(layer)
    return done


@settings(max_examples=400)
@given(PLANS, BUDGETS)
def test_any_plan_validates_to_an_executable_dag_within_budget(plan, budget):
    result = validate_plan(plan, question=QUESTION, max_sub_queries=budget)
    subs = result.sub_queries
    assert 1 <= len(subs) <= budget
    for index, sub in enumerate(subs):
        assert sub.text.strip()
        assert all(0 <= dep < index for dep in sub.depends_on)  # only backward edges
        refs = {int(m) for m in re.findall(r"\{(\d+)\}", sub.text)}
        assert refs <= set(sub.depends_on)  # every placeholder can be filled
    keys = [normalize_query(s.text) for s in subs]
    assert len(keys) == len(set(keys))
    order = layers(result)
    flat = [i for layer in order for i in layer]
    assert sorted(flat) == list(range(len(subs)))  # each exactly once
    assert all(order)  # no empty layer
    assert _simulate(order, subs) == flat  # terminates, dependencies first


@given(PLANS, BUDGETS)
def test_every_change_is_explained(plan, budget):
    result = validate_plan(plan, question=QUESTION, max_sub_queries=budget)

    def shape(subs):  # whitespace is tidied silently; anything else is a repair
        return [(" ".join(s.text.split()), s.depends_on) for s in subs]

    unchanged = (
        shape(result.sub_queries) == shape(plan.sub_queries) and result.strategy == plan.strategy
    )
    assert unchanged or result.repairs


def test_a_valid_chain_is_kept_as_is():
    plan = Plan(
        sub_queries=[PlannedSubQuery(text="company that makes the Model T"),
                     PlannedSubQuery(text="Who founded {0}?", depends_on=[0])],
        strategy=Strategy.CHAIN,
    )
    result = validate_plan(plan, question=QUESTION, max_sub_queries=5)
    assert list(result.sub_queries) == plan.sub_queries
    assert result.repairs == () and not result.fallback
    assert layers(result) == [[0], [1]]


def test_cycle_edge_is_dropped_and_named_a_cycle():
    plan = Plan(sub_queries=[PlannedSubQuery(text="a", depends_on=[1]),
                             PlannedSubQuery(text="b", depends_on=[0])])
    result = validate_plan(plan, question=QUESTION, max_sub_queries=5)
    assert [s.depends_on for s in result.sub_queries] == [[], [0]]
    assert any("cycle" in r for r in result.repairs)


def test_duplicates_merge_and_dependents_are_remapped():
    plan = Plan(sub_queries=[
        PlannedSubQuery(text="Tesla founder"),
        PlannedSubQuery(text="tesla   FOUNDER?"),
        PlannedSubQuery(text="Where was {1} born?", depends_on=[1]),
    ])
    result = validate_plan(plan, question=QUESTION, max_sub_queries=5)
    assert [s.text for s in result.sub_queries] == ["Tesla founder", "Where was {0} born?"]
    assert result.sub_queries[1].depends_on == [0]
    assert any("duplicates sub-query 0" in r for r in result.repairs)


def test_dependent_of_an_empty_sub_query_is_dropped_with_it():
    plan = Plan(sub_queries=[PlannedSubQuery(text=" "),
                             PlannedSubQuery(text="Who founded {0}?", depends_on=[0]),
                             PlannedSubQuery(text="When was Ford founded?")])
    result = validate_plan(plan, question=QUESTION, max_sub_queries=5)
    assert [s.text for s in result.sub_queries] == ["When was Ford founded?"]
    assert len(result.repairs) == 2


def test_placeholder_without_dependency_adds_it():
    plan = Plan(sub_queries=[PlannedSubQuery(text="a"), PlannedSubQuery(text="b of {0}")])
    result = validate_plan(plan, question=QUESTION, max_sub_queries=5)
    assert result.sub_queries[1].depends_on == [0]
    assert "implies depends_on 0" in result.repairs[0]


def test_over_budget_is_truncated_and_reported():
    plan = Plan(sub_queries=[PlannedSubQuery(text=f"q{i}") for i in range(8)],
                strategy=Strategy.AGGREGATE)
    result = validate_plan(plan, question=QUESTION, max_sub_queries=3)
    assert [s.text for s in result.sub_queries] == ["q0", "q1", "q2"]
    assert result.repairs == ("dropped the last 5 sub-queries: the budget allows 3",)


def test_nothing_usable_falls_back_to_the_question():
    plan = Plan(sub_queries=[PlannedSubQuery(text=""), PlannedSubQuery(text="{5}")],
                strategy=Strategy.CHAIN)
    result = validate_plan(plan, question=QUESTION, max_sub_queries=3)
    assert result.fallback
    assert [s.text for s in result.sub_queries] == [QUESTION]
    assert result.strategy is Strategy.SINGLE
    assert "fell back" in result.repairs[-1]


def test_zero_budget_is_refused():
    with pytest.raises(PlanError):
        validate_plan(Plan(sub_queries=[]), question=QUESTION, max_sub_queries=0)


def test_layers_group_independent_sub_queries():
    plan = Plan(sub_queries=[
        PlannedSubQuery(text="a"), PlannedSubQuery(text="b"),
        PlannedSubQuery(text="x {0} {1}", depends_on=[0, 1]),
        PlannedSubQuery(text="c {0}", depends_on=[0]),
        PlannedSubQuery(text="d {2}", depends_on=[2]),
    ])
    assert layers(validate_plan(plan, question=QUESTION, max_sub_queries=9)) == [
        [0, 1], [2, 3], [4]]


def test_a_huge_plan_is_cut_to_budget_quickly():
    subs = [PlannedSubQuery(text=f"step {i} of {{{i - 1}}}" if i else "start",
                            depends_on=[i - 1] if i else []) for i in range(5000)]
    result = validate_plan(Plan(sub_queries=subs), question=QUESTION, max_sub_queries=6)
    assert len(result.sub_queries) == 6
    assert layers(result) == [[0], [1], [2], [3], [4], [5]]

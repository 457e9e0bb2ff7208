"""The offline planner follows every hop of two question shapes, generated here from our own
vocabulary: comparisons made through a related entity, and nested relations."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from ragq.orchestration.plan import validate_plan
from ragq.providers.offline import planner, router
from ragq.schemas.flow import QuestionClass, Strategy

WORDS = ["Amber", "Silent", "Northern", "Harbor", "Glass", "Orchard", "Mountain", "Road",
         "Crimson", "Valley", "Iron", "Lantern", "Quiet", "River", "Paper", "Comet"]
RELATIONS = ["director", "author", "composer", "founder", "singer", "producer"]
KINDS = ["film", "novel", "opera", "company", "band", "album"]

titles = st.builds(lambda a, b: f"{a} {b}", st.sampled_from(WORDS), st.sampled_from(WORDS)
                   ).filter(lambda t: len(set(t.split())) == 2)
pairs = st.tuples(titles, titles).filter(lambda p: not set(p[0].split()) & set(p[1].split()))

THROUGH = [
    "Which {kind} has the {rel} who died earlier, {a} or {b}?",
    "Which {kind} has the {rel} who was born first, {a} or {b}?",
    "Whose {rel} was born first, {a} or {b}?",
    "Whose {rel} is older, {a} or {b}?",
    "Which {kind}'s {rel} was born earlier, {a} or {b}?",
    "Do the {rel}s of {a} and {b} share a nationality?",
]


@settings(max_examples=150, deadline=None)
@given(pair=pairs, rel=st.sampled_from(RELATIONS), kind=st.sampled_from(KINDS),
       shape=st.sampled_from(THROUGH))
def test_a_comparison_through_a_related_entity_finds_each_one_then_its_attribute(
        pair, rel, kind, shape):
    a, b = pair
    question = shape.format(kind=kind, rel=rel, a=a, b=b)
    assert router.route(question).question_class is QuestionClass.MULTI_HOP
    plan = validate_plan(planner.plan(question, max_sub_queries=5), question=question,
                         max_sub_queries=5)
    assert plan.strategy is Strategy.COMPARE
    first, second, *rest = plan.sub_queries
    assert a in first.text and rel in first.text and not first.depends_on
    assert b in second.text and rel in second.text and not second.depends_on
    # Then each side's compared fact, asked of that side's related entity alone.
    assert [sq.depends_on for sq in rest] == [[0], [1]]
    assert "{0}" in rest[0].text and "{1}" in rest[1].text
    assert rest[0].text.replace("{0}", "{1}") == rest[1].text != "{1}"
    if any(w in question for w in ("earlier", "first", "older")):
        assert rest[0].text.startswith("When")  # a comparison of time compares dates


@settings(max_examples=150, deadline=None)
@given(a=titles, outer=st.sampled_from(["father", "mother", "spouse", "founder"]),
       inner=st.sampled_from(RELATIONS), kind=st.sampled_from(KINDS))
def test_a_nested_relation_resolves_each_level_before_the_next(a, outer, inner, kind):
    question = f"Where was the {outer} of the {inner} of the {kind} {a} born?"
    assert router.route(question).question_class is QuestionClass.MULTI_HOP
    plan = validate_plan(planner.plan(question, max_sub_queries=5), question=question,
                         max_sub_queries=5)
    assert plan.strategy is Strategy.CHAIN
    assert [sq.depends_on for sq in plan.sub_queries] == [[], [0], [1]]
    innermost, middle, last = (sq.text for sq in plan.sub_queries)
    assert a in innermost and inner in innermost
    assert middle == f"the {outer} of {{0}}"
    assert last.startswith("Where was {1}")


@settings(max_examples=60, deadline=None)
@given(a=titles, rel=st.sampled_from(RELATIONS), kind=st.sampled_from(KINDS))
def test_one_relation_deep_is_a_plan_not_a_single_search(a, rel, kind):
    question = f"What is the nationality of the {rel} of the {kind} {a}?"
    assert router.route(question).question_class is QuestionClass.MULTI_HOP
    plan = planner.plan(question, max_sub_queries=5)
    assert [sq.depends_on for sq in plan.sub_queries] == [[], [0]]
    assert a in plan.sub_queries[0].text and "{0}" in plan.sub_queries[1].text

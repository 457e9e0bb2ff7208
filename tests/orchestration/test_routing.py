import pytest

from ragq.orchestration.routing import (
    ROUTE_BUDGETS,
    RouteBudget,
    RoutePath,
    UnknownRouteError,
    budget_for,
    path_for,
)
from ragq.schemas.flow import QuestionClass


@pytest.mark.parametrize(("cls", "path"), [
    (QuestionClass.SIMPLE_FACT, RoutePath.SIMPLE), (QuestionClass.PROCEDURAL, RoutePath.BOUNDED),
    (QuestionClass.MULTI_HOP, RoutePath.FULL), (QuestionClass.INVESTIGATIVE, RoutePath.ESCALATE),
])
def test_every_class_has_its_path(cls, path):
    assert path_for(cls) is path
    assert path_for(cls.value) is path


def test_every_path_has_a_budget_and_simple_is_one_retrieval():
    assert set(ROUTE_BUDGETS) == set(RoutePath)
    simple = budget_for("simple")
    assert (simple.max_sub_queries, simple.max_retrieval_attempts) == (1, 1)
    assert budget_for(RoutePath.FULL).max_retrieval_attempts == 3
    assert budget_for(RoutePath.FULL).max_verify_rounds == 3


def test_unknown_names_list_the_valid_ones():
    with pytest.raises(UnknownRouteError, match="simple_fact"):
        path_for("trivial")
    with pytest.raises(UnknownRouteError, match="escalate"):
        budget_for("nowhere")


def test_budget_rejects_nonsense():
    with pytest.raises(ValueError):
        RouteBudget(max_sub_queries=0)

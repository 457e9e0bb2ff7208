"""A choice over a product family against stated requirements: the family's
candidates first, then one search per requirement across the family."""

from __future__ import annotations

import pytest

from ragq.providers.offline.planner import plan
from ragq.schemas.flow import Strategy


def test_a_choice_searches_the_candidates_then_each_requirement():
    p = plan("I want a card with a foreign fee of 1.5% or less, a minimum payment of 1.5% or "
             "less, and virtual card management", max_sub_queries=5)
    assert p.strategy is Strategy.COMPARE
    assert [s.text for s in p.sub_queries] == [
        "card types and options", "card foreign fee of 1.5% or less",
        "card minimum payment of 1.5% or less", "card virtual card management"]
    assert all(not s.depends_on for s in p.sub_queries)


def test_a_choice_in_the_third_person_keeps_its_family_of_several_words():
    p = plan("She is looking for a business savings account that pays interest monthly.",
             max_sub_queries=3)
    assert [s.text for s in p.sub_queries] == [
        "business savings account types and options",
        "business savings account pays interest monthly"]


def test_requirements_past_the_limit_are_cut_and_the_candidates_stay():
    p = plan("We need a plan with single sign-on, audit logs, shared folders, and phone support",
             max_sub_queries=3)
    assert [s.text for s in p.sub_queries] == [
        "plan types and options", "plan single sign-on", "plan audit logs"]


@pytest.mark.parametrize("question", [
    "What is the capital of the country where the Nile ends?",
    "Which film has the director who was born earlier, Dune or Alien?",
    "Who founded the company that makes the card with the lowest fee?",
])
def test_a_question_about_one_thing_is_no_choice(question):
    assert not plan(question, max_sub_queries=4).reason.startswith("a choice")

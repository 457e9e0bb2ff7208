import pytest

from ragq.providers.offline.router import route
from ragq.schemas.flow import QuestionClass


@pytest.mark.parametrize("question", [
    "How do I reset my password?",
    "How can I configure single sign-on for my team?",
    "What are the steps to export an invoice?",
])
def test_how_to_questions_are_procedural(question):
    decision = route(question)
    assert decision.question_class is QuestionClass.PROCEDURAL
    assert "how-to" in decision.reason


@pytest.mark.parametrize("question", [
    "Who founded the company that makes the Walkman?",
    "Which river is older, the Danube or the Rhine?",
    "Are Ada Lovelace and Grace Hopper both mathematicians?",
    "What is the capital of the country where Mount Kenya is located?",
    "Who is the husband of Tove Jansson's editor?",
    "What plan includes priority support, and how much does it cost per seat?",
])
def test_compound_and_nested_questions_are_multi_hop(question):
    assert route(question).question_class is QuestionClass.MULTI_HOP


@pytest.mark.parametrize("question", [
    "Why did the nightly export fail?",
    "Investigate all cases of duplicate billing last month",
])
def test_open_why_questions_are_investigative(question):
    assert route(question).question_class is QuestionClass.INVESTIGATIVE


@pytest.mark.parametrize("question", [
    "When was Ada Lovelace born?",
    "What is the refund window?",
    "Who wrote Moominpappa at Sea?",
])
def test_short_single_entity_questions_are_simple(question):
    decision = route(question)
    assert decision.question_class is QuestionClass.SIMPLE_FACT
    assert decision.reason

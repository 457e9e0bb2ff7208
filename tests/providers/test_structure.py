import pytest

from ragq.providers.offline.structure import decompose_chain, normalize_heads


def chain(question: str, max_hops: int = 4) -> list[str]:
    hops: list[str] = []
    final = decompose_chain(normalize_heads(question), hops, max_hops=max_hops)
    return [*hops, final]


@pytest.mark.parametrize(("question", "expected"), [
    ("When did the country containing Nugegoda leave the British Empire?",
     ["the country containing Nugegoda", "When did {0} leave the British Empire?"]),
    ("What currency predated the Euro in the country Signmark is from?",
     ["the country Signmark is from", "What currency predated the Euro in {0}?"]),
    ("When was the country that produced Fist Power taken by the British?",
     ["the country that produced Fist Power", "When was {0} taken by the British?"]),
    ("In what year was the man that resigned as mayor of Turku born?",
     ["the man that resigned as mayor of Turku", "In what year was {0} born?"]),
    ("Which sea is near the place of birth of Tove Jansson?",
     ["the birthplace of Tove Jansson", "Which sea is near {0}?"]),
])
def test_descriptions_are_cut_where_the_main_clause_resumes(question, expected):
    assert chain(question) == expected


def test_hops_are_capped_and_the_rest_stays_inline():
    parts = chain("What is the capital of the country where the composer of Finlandia was born?",
                  max_hops=1)
    assert parts == ["the composer of Finlandia",
                     "What is the capital of the country where {0} was born?"]


def test_a_role_noun_is_needed_for_possessives():
    assert chain("How does Claude's response differ with a system prompt?") == [
        "How does Claude's response differ with a system prompt?"]
    assert chain("Who is the spouse of Big Eye's main director?") == [
        "Big Eye's main director", "Who is the spouse of {0}?"]

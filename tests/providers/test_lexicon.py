from ragq.providers.offline.lexicon import (
    coverage,
    entities,
    entity_present,
    key_terms,
    relational_noun,
    sentences,
    term_set,
)
from ragq.providers.offline.shapes import comparison_pair, conjunction_parts, focus_split
from ragq.providers.offline.structure import bridge_spans, decompose_chain


def test_entities_are_capitalised_runs_with_inner_connectors():
    text = 'Was the Bank of the West founded before "The Long Goodbye" by Raymond Chandler?'
    assert entities(text) == ["Bank of the West", "The Long Goodbye", "Raymond Chandler"]


def test_and_separates_entities_and_possessives_end_them():
    assert entities("Are Ada Lovelace and Grace Hopper both famous?") == [
        "Ada Lovelace", "Grace Hopper"]
    assert entities("Who is Tove Jansson's editor?") == ["Tove Jansson"]


def test_question_openers_are_not_entities():
    assert entities("What is the refund window?") == []


def test_sentences_survive_abbreviations():
    assert sentences("Dr. No premiered in 1962. It starred Sean Connery.") == [
        "Dr. No premiered in 1962.", "It starred Sean Connery."]


def test_key_terms_drop_question_form_and_entity_words():
    assert key_terms("What is the name of the river that flows through Vienna?") == [
        "river", "flow"]


def test_coverage_weighs_entities_and_reports_what_is_missing():
    score, missing = coverage("When did Grace Hopper join the Navy?",
                              ["Grace Hopper was a computer scientist."])
    assert missing == ["Navy", "join"]
    assert 0 < score < 1
    assert entity_present("Grace Hopper", term_set("Grace M. Hopper joined in 1943"))
    assert not entity_present("Grace Hopper", term_set("Edward Hopper painted"))


def test_missing_terms_are_spelled_as_the_query_spells_them():
    _, missing = coverage("Which settings changed when batches were compared?",
                          ["Nothing relevant here."])
    assert missing == ["settings", "changed", "batches", "compared"]


def test_relational_nouns_are_roles_not_verbs():
    assert relational_noun("composer") and relational_noun("birthplace")
    assert not relational_noun("differ") and not relational_noun("response")


def test_shapes_of_compound_questions():
    assert comparison_pair("Who was born first, Ada Lovelace or Grace Hopper?") == (
        "Ada Lovelace", "Grace Hopper")
    assert comparison_pair("Who was Ada Lovelace?") is None
    assert conjunction_parts("What is X, and why does it fail?") == [
        "What is X", "why does it fail"]
    assert focus_split("Who wrote Moominpappa at Sea?") is None


def test_descriptions_that_ask_the_question_are_not_cut_out():
    assert bridge_spans("Scott Adams worked with the mayor of what city?") == []
    hops: list[str] = []
    assert decompose_chain("Who is the wife of Kim Jong-un?", hops, max_hops=3) == (
        "Who is the wife of Kim Jong-un?")
    assert hops == []

"""The relation words of a sub-query and the closeness of candidates to them."""

from ragq.providers.offline.relations import Relation, proximity_fit, relation_terms


def test_the_relation_words_are_those_beside_the_asked_phrase():
    issued = relation_terms("Ines Vaart's debut record was issued by an independent label",
                            "label")
    assert issued.leads == {"issu"} and not issued.trails  # the nearest word, not "record"
    praised = relation_terms("the magazine that praised Ines Vaart", "magazine")
    assert praised.trails == {"prais"} and not praised.leads
    assert relation_terms("Who wrote it?", "") == Relation()


def test_a_candidate_after_a_leading_relation_word_fits_better_than_one_before_it():
    sentence = "Salt Lanterns was issued by Quiet Harbour Records in 2011."
    issued = Relation(leads=frozenset({"issu"}))
    label = proximity_fit(sentence, sentence.index("Quiet"), len("Quiet Harbour Records"),
                          issued, set())
    record = proximity_fit(sentence, 0, len("Salt Lanterns"), issued, set())
    assert label > record == 1.0


def test_a_trailing_relation_word_favours_the_name_just_before_it():
    sentence = "In 2000, Linux Format called Qvwm an unusually impressive imposter."
    called = Relation(trails=frozenset({"call"}))  # stems, as relation_terms gives them
    magazine = proximity_fit(sentence, sentence.index("Linux"), len("Linux Format"), called,
                             set())
    assert magazine == 2.5  # 1 + RELATION_WEIGHT / (1 + 0 words between)
    far = proximity_fit(sentence, sentence.index("Qvwm"), len("Qvwm"), called, set())
    assert far == 1.0

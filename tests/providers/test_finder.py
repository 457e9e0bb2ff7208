from ragq.providers.offline.finder import find, head_noun
from tests.providers.conftest import ev

SONY = ev("walkman", "The Walkman is a brand of portable audio players manufactured by Sony "
          "Corporation since 1979. It was designed by Nobutoshi Kihara.", title="Walkman",
          score=0.7)
SIBELIUS = ev("finlandia", "Finlandia, Op. 26, is a tone poem by the Finnish composer Jean "
              "Sibelius. It was written in 1899 and revised in 1900.", title="Finlandia",
              score=0.8)
TABLE = ev("table-mountain", "Table Mountain is a flat-topped mountain overlooking the city of "
           "Cape Town, Western Cape, South Africa.", title="Table Mountain", score=0.7)
OTHER = ev("other", "The Danube flows through Vienna and Budapest.", title="Danube", score=0.3)


def test_finds_the_organisation_a_description_names():
    finding = find("the company that makes the Walkman", [OTHER, SONY])
    assert finding.text == "Sony Corporation"
    assert finding.doc_ids == ["walkman"]


def test_finds_a_person_for_a_person_role():
    assert find("the composer of Finlandia", [SIBELIUS, OTHER]).text == "Jean Sibelius"


def test_finds_a_date_when_the_query_asks_when():
    assert find("When was Finlandia written?", [SIBELIUS]).text == "1899"


def test_country_is_the_last_part_of_an_address():
    found = find("the country where Table Mountain is located", [TABLE])
    assert found.text == "South Africa"


def test_never_answers_with_what_the_query_already_names():
    finding = find("the composer of Finlandia", [SIBELIUS])
    assert "Finlandia" not in finding.text


def test_no_evidence_means_an_empty_finding_with_a_reason():
    finding = find("the composer of Finlandia", [])
    assert finding.text == "" and finding.reason


# Several names in one sentence: the one the sentence relates as the sub-query does answers.
LABEL = ev("marrow", "Ines Vaart's debut record, \"Salt Lanterns\", was issued by Quiet "
           "Harbour Records in 2011, and it was praised by Teodor Lisk.", title="Ines Vaart",
           score=0.8)
CAST = ev("glass-orchard", "The Glass Orchard is a 2009 Estonian film directed by Mart Kivi. "
          "The film stars Liis Aru, Oskar Pent and Maret Sild.", title="The Glass Orchard",
          score=0.8)


def test_a_statement_asks_for_what_its_last_indefinite_phrase_introduces():
    assert head_noun("Ines Vaart's debut record was issued by an independent label") == "label"
    assert head_noun("The Glass Orchard is a film featuring an Estonian actress") == "actress"
    assert head_noun("the composer of Finlandia") == "composer"  # a description: unchanged


def test_of_several_names_the_one_beside_the_relation_word_is_found():
    finding = find("Ines Vaart's debut record was issued by an independent label", [LABEL])
    assert finding.text == "Quiet Harbour Records"


def test_the_first_name_after_the_head_word_wins_among_a_list_of_equals():
    finding = find("the stars of The Glass Orchard", [CAST])
    assert finding.text == "Liis Aru"


def test_a_relative_clause_finds_the_name_that_does_what_it_says():
    review = ev("review", "In 2012 the critic Teodor Lisk wrote about Ines Vaart, and Nordic "
                "Sound Weekly praised Ines Vaart as a rare talent.", title="Ines Vaart",
                score=0.8)
    assert find("the magazine that praised Ines Vaart", [review]).text == "Nordic Sound Weekly"


def test_a_close_runner_up_is_offered_as_an_alternative_and_a_distant_one_is_not():
    both = ev("duo", "The Lark Quartet was founded by Mira Osk and Tove Lind in Malmo.",
              title="Lark Quartet", score=0.8)
    finding = find("the founder of the Lark Quartet", [both])
    assert finding.text in ("Mira Osk", "Tove Lind")
    assert finding.alternatives == [({"Mira Osk", "Tove Lind"} - {finding.text}).pop()]
    apart = ev("walkman-2", "The company that makes the Walkman is Sony Corporation. Rain "
               "fell on Osaka in June.", title="Walkman", score=0.8)
    far = find("the company that makes the Walkman", [apart])
    assert far.text == "Sony Corporation" and far.alternatives == []  # Osaka: another matter

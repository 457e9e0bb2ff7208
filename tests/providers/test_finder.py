from ragq.providers.offline.finder import find
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

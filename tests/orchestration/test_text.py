from ragq.orchestration.text import content_words, near_duplicate, stem, term_overlap, words


def test_words_lowercase_and_strip_possessives():
    assert words("Tove Jansson's Moomins, 1945!") == ["tove", "jansson", "moomins", "1945"]


def test_content_words_skip_stopwords_and_repeats():
    assert content_words("What is the river that the river feeds?") == ["river", "feeds"]


def test_stem_joins_common_inflections():
    assert stem("directors") == stem("director")
    assert stem("founded") == stem("founder") == "found"


def test_near_duplicate_tolerates_tiny_edits_only():
    a = "Refunds are issued within 14 days of the request being received by support."
    assert near_duplicate(a, a + " ")
    assert not near_duplicate(a, "Refunds are never issued for annual plans after renewal.")


def test_term_overlap_is_the_share_of_query_words_present():
    assert term_overlap("refund window annual plans", "Annual plans have a refund window.") == 1.0
    assert term_overlap("refund window", "Snow in Helsinki") == 0.0
    assert term_overlap("what is it", "anything") == 1.0

from hypothesis import given
from hypothesis import strategies as st

from ragq.orchestration.text import (
    content_words,
    near_duplicate,
    normalize_query,
    shingles,
    stem,
    term_overlap,
    words,
)


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


_WORDS = st.sampled_from(["refund", "plan", "annual", "within", "days", "request", "support",
                          "window", "team"])


@given(st.lists(_WORDS, max_size=30), st.lists(_WORDS, max_size=30),
       st.floats(min_value=0.05, max_value=1.0))
def test_near_duplicate_is_the_jaccard_of_word_trigrams_at_any_threshold(a, b, threshold):
    """The size shortcut never changes the answer of the plain definition."""
    first, second = " ".join(a), " ".join(b)
    sa, sb = shingles(first), shingles(second)
    plain = sa == sb if not sa or not sb else len(sa & sb) / len(sa | sb) >= threshold
    assert near_duplicate(first, second, threshold) == plain


def test_term_overlap_is_the_share_of_query_words_present():
    assert term_overlap("refund window annual plans", "Annual plans have a refund window.") == 1.0
    assert term_overlap("refund window", "Snow in Helsinki") == 0.0
    assert term_overlap("what is it", "anything") == 1.0


def test_queries_differing_in_case_width_punctuation_or_spacing_normalize_alike():
    forms = ["What is the REFUND window?", "what is the refund window", "  What is the\trefund-"
             "window ?! ", "ｗｈａｔ ｉｓ ｔｈｅ ｒｅｆｕｎｄ ｗｉｎｄｏｗ"]
    assert {normalize_query(f) for f in forms} == {"what is the refund window"}
    assert normalize_query("Straße") == normalize_query("STRASSE") == "strasse"
    assert normalize_query("order_id 42") == "order_id 42"  # word characters stay words


def test_placeholders_survive_normalization_and_stay_distinct():
    assert normalize_query("Who founded {0}?") == "who founded {0}"
    assert normalize_query("Who founded ｛0｝?") == "who founded {0}"
    assert normalize_query("{0} and {1}") != normalize_query("{1} and {0}")
    assert normalize_query("{x} {}") == "x"  # only {digits} is a placeholder


@given(st.text())
def test_normalizing_twice_changes_nothing(text):
    once = normalize_query(text)
    assert normalize_query(once) == once
    assert once == once.strip() and "  " not in once

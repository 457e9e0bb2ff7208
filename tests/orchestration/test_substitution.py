from hypothesis import given
from hypothesis import strategies as st

from ragq.orchestration.substitution import substitute
from ragq.schemas.flow import PlannedSubQuery


def test_placeholder_takes_the_finding():
    sub = PlannedSubQuery(text="Who founded {0}?", depends_on=[0])
    result = substitute(sub, {0: "Ford Motor Company"})
    assert result.text == "Who founded Ford Motor Company?"
    assert result.notes == ()


def test_several_placeholders_each_take_their_own_finding():
    sub = PlannedSubQuery(text="Is {1} older than {0}?", depends_on=[0, 1])
    assert substitute(sub, {0: "Oslo", 1: "Bergen"}).text == "Is Bergen older than Oslo?"


def test_missing_finding_falls_back_to_the_dependency_query_and_says_so():
    sub = PlannedSubQuery(text="Who founded {0}?", depends_on=[0])
    result = substitute(sub, {0: None}, dependency_texts={0: "the company that makes the Model T?"})
    assert result.text == "Who founded the company that makes the Model T?"
    assert "no finding" in result.notes[0]


def test_missing_everything_drops_the_placeholder_phrase():
    sub = PlannedSubQuery(text="Who was the founder of {0}?", depends_on=[0])
    result = substitute(sub, {})
    assert result.text == "Who was the founder?"
    assert "dropped" in result.notes[0]


def test_dependency_without_placeholder_gets_the_finding_appended():
    sub = PlannedSubQuery(text="When was it founded?", depends_on=[0])
    result = substitute(sub, {0: "Ford Motor Company"})
    assert result.text == "When was it founded? (Ford Motor Company)"
    assert result.notes


def test_finding_with_braces_is_not_reinterpreted():
    sub = PlannedSubQuery(text="Where is {0} from?", depends_on=[0])
    assert substitute(sub, {0: "{1} band"}).text == "Where is {1} band from?"


@given(st.text(max_size=40), st.dictionaries(st.integers(0, 5), st.text(max_size=10)))
def test_substitution_never_raises_and_never_returns_blank_for_worded_text(text, findings):
    sub = PlannedSubQuery(text=text + " word", depends_on=list(findings))
    assert substitute(sub, findings).text.strip()

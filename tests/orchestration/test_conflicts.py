"""The one-subject rule every provider's contradictions pass through: sides about different
subjects are no contradiction; sides about the same one (or both about nothing named) are."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from ragq.orchestration.conflicts import about_one_subject, one_subject, same_subject, subject_key
from ragq.schemas.flow import Contradiction

NAMES = st.lists(st.sampled_from(["Gold", "Silver", "Eco", "Rewards", "Business", "Saver",
                                  "Platinum", "Bronze", "Vault", "Plus"]),
                 min_size=1, max_size=4, unique=True).map(" ".join)


def conflict(*subjects: str) -> Contradiction:
    return Contradiction(topic="annual fee", statements=[f"s{i}" for i in range(len(subjects))],
                         doc_ids=[f"d{i}" for i in range(len(subjects))], subjects=list(subjects))


def test_two_products_are_two_subjects_and_a_longer_name_is_another_product() -> None:
    assert not same_subject("EcoCard", "Business Gold Rewards Card")
    assert not same_subject("Gold Rewards Card", "Business Gold Rewards Card")
    assert same_subject("the EcoCard", "EcoCard")
    assert same_subject("Refund policy", "refund policies")


def test_nothing_named_meets_only_nothing_named() -> None:
    assert same_subject("", "")
    assert not same_subject("", "Pro plan")  # a plan's own rule beside the general one


def test_a_conflict_between_two_subjects_is_dropped_and_order_is_kept() -> None:
    catalogue = conflict("EcoCard", "Gold Rewards Card")
    policy, people = conflict("", ""), conflict("Tom Waits", "Tom Waits")
    assert about_one_subject([policy, catalogue, people]) == [policy, people]


def test_a_conflict_without_one_subject_per_statement_is_taken_as_reported() -> None:
    unsaid = Contradiction(topic="t", statements=["a", "b"], doc_ids=["x", "y"])
    assert one_subject(unsaid)
    assert one_subject(unsaid.model_copy(update={"subjects": ["only one"]}))


@settings(deadline=None)  # a loaded CI machine must not fail a pure function on time
@given(NAMES, NAMES)
def test_same_subject_is_symmetric_and_follows_the_words(a: str, b: str) -> None:
    assert same_subject(a, b) == same_subject(b, a) == (subject_key(a) == subject_key(b))
    assert same_subject(a, f"The {a.upper()}")  # case and articles do not make a new subject


@settings(deadline=None)
@given(st.lists(NAMES, min_size=2, max_size=4))
def test_a_conflict_stands_exactly_when_all_its_sides_name_one_subject(names: list[str]
                                                                         ) -> None:
    keys = {subject_key(n) for n in names}
    assert one_subject(conflict(*names)) == (len(keys) == 1)

from ragq.providers.offline.contradictions import detect
from ragq.providers.offline.synthesizer import synthesize
from tests.providers.conftest import ev

POLICY = ev("policy", "Refunds are issued within 14 days of the request. Contact support by "
            "email for anything else.", title="Refund policy")
FAQ = ev("faq", "Good to know: refunds are issued within 30 days of the request.", title="FAQ")
WEATHER = ev("weather", "Helsinki has cold winters with an average of 90 days of snow cover.",
             title="Helsinki")


def test_answer_quotes_and_cites_only_context_sentences():
    draft = synthesize("How long do refunds take?", [POLICY, WEATHER], strategy="single",
                       findings=[])
    assert draft.extractive and not draft.insufficient
    assert draft.citations
    texts = {POLICY.chunk_id: POLICY.text, WEATHER.chunk_id: WEATHER.text}
    for citation in draft.citations:
        assert citation.quote and citation.quote in texts[citation.chunk_id]
        assert citation.quote in draft.answer
    assert draft.citations[0].doc_id == "policy"


def test_conflicting_durations_are_reported_as_a_contradiction():
    draft = synthesize("How long do refunds take?", [POLICY, FAQ], strategy="single",
                       findings=[])
    assert len(draft.contradictions) == 1
    conflict = draft.contradictions[0]
    assert set(conflict.doc_ids) == {"policy", "faq"}
    assert any("14 days" in s for s in conflict.statements)
    assert any("30 days" in s for s in conflict.statements)
    assert "refund" in conflict.topic


def test_same_numbers_or_unrelated_numbers_are_no_contradiction():
    same = ev("faq2", "Refunds are issued within 14 days of the request.", title="FAQ")
    assert detect([POLICY, same]) == []
    assert detect([POLICY, WEATHER]) == []


def test_context_that_does_not_support_an_answer_is_insufficient():
    draft = synthesize("Which plan includes priority support?", [WEATHER], strategy="single",
                       findings=[])
    assert draft.insufficient and draft.extractive
    assert draft.citations == []


def test_empty_context_is_insufficient():
    assert synthesize("How long do refunds take?", [], strategy="single",
                      findings=[]).insufficient

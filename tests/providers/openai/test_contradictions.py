"""Contradictions a model reports pass the same one-subject rule as the offline detector's: the
model names each side's subject, and sides about different subjects are dropped."""

from __future__ import annotations

from ragq.providers.openai.wire import ContradictionWire, strict_schema
from tests.fakes import ChatAnswer
from tests.providers.openai.conftest import ev

CARDS = [ev("nimbus", "Annual fee: $0.00"), ev("aurora", "Annual fee: $95.00"),
         ev("nimbus-faq", "Annual fee: $25.00")]


def reported(subjects: list[str], docs: tuple[str, str]) -> dict[str, object]:
    return {"topic": "annual fee", "statements": ["Annual fee: $0.00", "Annual fee: $95.00"],
            "doc_ids": list(docs), "chunk_ids": [f"{d}::0" for d in docs],
            "subjects": subjects, "reason": "different fees"}


def test_a_reported_catalogue_is_dropped_and_one_products_conflict_kept(openai_provider,
                                                                       fake_openai):
    fake_openai.script("synthesizer", ChatAnswer({
        "answer": "The Nimbus Card's fee is unclear.", "insufficient": False,
        "citations": [{"chunk_id": "nimbus::0", "quote": "Annual fee: $0.00"}],
        "contradictions": [reported(["Nimbus Card", "Aurora Travel Card"], ("nimbus", "aurora")),
                           reported(["Nimbus Card", "the Nimbus card"], ("nimbus", "nimbus-faq")),
                           reported(["Nimbus Card"], ("nimbus", "aurora"))]}))
    draft, _ = openai_provider.synthesize("What is the Nimbus Card's annual fee?", CARDS,
                                          strategy="single", findings=[])
    kept = [(c.doc_ids, c.subjects) for c in draft.contradictions]
    assert kept == [(["nimbus", "nimbus-faq"], ["Nimbus Card", "the Nimbus card"]),
                    (["nimbus", "aurora"], [])]  # subjects not one per statement say nothing


def test_the_model_is_asked_for_each_sides_subject(openai_provider, fake_openai):
    openai_provider.synthesize("What is the fee?", CARDS, strategy="single", findings=[])
    (body,) = fake_openai.chat_bodies
    assert "subjects names the product" in body["messages"][0]["content"]
    schema = body["response_format"]["json_schema"]["schema"]
    assert "subjects" in schema["$defs"]["ContradictionWire"]["required"]
    assert strict_schema(ContradictionWire)["required"][-2:] == ["subjects", "reason"]

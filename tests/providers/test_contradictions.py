"""Offline contradiction detection by subject: a conflict is two values for one subject, read
from the chunk's title, its section heading and the sentence. Catalogues, different people or
clubs, and code samples, payloads or logs are no conflict; one policy stated two ways is."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from ragq.ingestion.sources import read_documents
from ragq.orchestration.chunking import chunk_document
from ragq.orchestration.conflicts import subject_key
from ragq.providers.offline.contradictions import code_like, detect, sections
from ragq.providers.offline.subjects import subject
from ragq.schemas.document import Document
from ragq.schemas.flow import Evidence
from tests.providers.conftest import ev

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "docs"


def price_page(doc: str, product: str, fee: str, aspect: str = "Rates and Fees") -> Evidence:
    return ev(doc, f"## Pricing\n- Annual fee: {fee}\n- Cash advance fee: 5%\n\n"
                   "## Before You Apply\nCheck your eligibility online.",
              title=f"{product}: {aspect}")


def test_a_product_catalogue_is_no_contradiction() -> None:
    assert detect([price_page("nimbus", "Nimbus Card", "$0.00"),
                   price_page("aurora", "Aurora Travel Card", "$95.00")]) == []


def test_one_product_priced_two_ways_is_a_contradiction_naming_its_subject() -> None:
    (conflict,) = detect([price_page("nimbus", "Nimbus Card", "$0.00"),
                          price_page("nimbus-faq", "Nimbus Card", "$25.00", "Common Questions")])
    assert conflict.subjects == ["Nimbus Card", "Nimbus Card"]
    assert {"nimbus", "nimbus-faq"} == set(conflict.doc_ids)


def test_products_named_in_the_sentence_are_told_apart_on_a_page_about_neither() -> None:
    compare = ev("compare", "The Nimbus Card has an annual fee of $0.", title="Choosing a card")
    other = ev("aurora", "The Aurora Travel Card has an annual fee of $95.",
               title="Choosing a card", chunk=1)
    same = ev("nimbus", "The Nimbus Card has an annual fee of $25.", title="Choosing a card",
              chunk=2)
    assert detect([compare, other]) == []
    assert len(detect([compare, same])) == 1


def test_two_people_or_two_clubs_are_no_contradiction() -> None:
    waits = ev("waits", "He released his debut album in 1973.", title="Tom Waits")
    cave = ev("cave", "He released his debut album in 1984.", title="Nick Cave")
    assert detect([waits, cave]) == []
    rovers = ev("rovers", "Riverside Rovers is a football club in Leeds. The club was founded "
                          "in 1889.", title="Riverside Rovers")
    harbour = ev("harbour", "Harbour City Athletic plays in the second division. The club was "
                            "founded in 1902.", title="Harbour City Athletic")
    assert detect([rovers, harbour]) == []
    discography = ev("waits-disco", "He released his debut album in 1971.",
                     title="Tom Waits discography")
    assert len(detect([waits, discography])) == 1  # one person, two years: a conflict


def test_limits_on_two_different_things_are_no_contradiction() -> None:
    personal = ev("open-personal", "A customer may hold at most 4 personal savings accounts.",
                  title="Opening accounts")
    business = ev("open-business", "A customer may hold at most 6 business savings accounts.",
                  title="Opening accounts", chunk=1)
    stricter = ev("limits", "A customer may hold at most 3 personal savings accounts.",
                  title="Account limits")
    assert detect([personal, business]) == []
    assert len(detect([personal, stricter])) == 1  # the same thing counted: a conflict


def test_sibling_pages_are_two_subjects_but_two_editions_are_one() -> None:
    def page(doc: str, title: str, fee: str) -> Evidence:
        return ev(doc, f"- Early closure fee: {fee} if closed within 60 days", title=title)

    assert detect([page("p", "Internal: Closing Personal Savings Accounts", "$15"),
                   page("b", "Internal: Closing Business Savings Accounts", "$50")]) == []
    assert len(detect([page("old", "Closing fees (2023 edition)", "$15"),
                       page("new", "Closing fees (2024 edition)", "$50")])) == 1


def test_a_number_naming_the_subject_is_no_value() -> None:
    def season(doc: str, years: str, nth: str) -> Evidence:
        return ev(doc, f"The {years} league season was the {nth} season for the Riverside "
                       "Rovers in the league.", title=f"{years} Riverside Rovers season")

    assert detect([season("a", "2003–04", "15th"), season("b", "1997–98", "ninth")]) == []
    edition = ev("old", "Refunds are issued within 14 days.", title="Refund policy (2023)")
    assert len(detect([edition, ev("new", "Refunds are issued within 30 days.",
                                   title="Refund policy (2024)")])) == 1


def test_code_samples_payloads_and_logs_are_no_contradiction() -> None:
    payload = ev("request", 'A basic request:\n```json\n{"model": "m", "max_tokens": 1,\n'
                            ' "messages": []}\n```\nThe response follows.', title="Basic request")
    sdk = ev("python", "Install the SDK, then:\n"
                       'response = client.messages.create(model="m", max_tokens=1024)\n'
                       "Streaming works the same way.", title="Python")
    unfenced = ev("json", '  "max_tokens": 1024,\n  "temperature": 1', title="Example payload")
    log_a = ev("log-a", "2024-05-01 10:00:01 ERROR request failed after 3 retries",
               title="Troubleshooting")
    log_b = ev("log-b", "2024-05-01 10:00:09 ERROR request failed after 5 retries",
               title="Troubleshooting")
    assert detect([payload, sdk, unfenced, log_a, log_b]) == []
    inline = ev("inline-a", "Examples below set `max_tokens=1` to keep replies short.")
    other = ev("inline-b", "Examples below set `max_tokens=1024` to keep replies short.")
    assert detect([inline, other]) == []  # a number in inline code is the example's literal


def test_the_same_policy_stated_two_ways_is_a_contradiction() -> None:
    policy = ev("policy", "Refunds are issued within 14 days of the request.",
                title="Refund policy")
    faq = ev("faq", "Good to know: refunds are issued within 30 days of the request.",
             title="FAQ")
    (conflict,) = detect([policy, faq])
    assert conflict.subjects == ["", ""]


def test_the_sample_refund_conflict_is_detected() -> None:
    docs = [d for d in read_documents(EXAMPLES) if isinstance(d, Document)
            and d.id in {"billing.md", "refund-policy.txt"}]
    context = [Evidence(chunk_id=c.chunk_id, doc_id=c.doc_id, title=c.title, text=c.text,
                        score=0.5)
               for d in docs for c in chunk_document(d, collection="c", size_words=180,
                                                     overlap_words=40)]
    found = [c for c in detect(context) if "refund" in c.topic]
    assert len(found) == 1
    assert {"14 days", "30 days"} <= {d for s in found[0].statements
                                      for d in ("14 days", "30 days") if d in s}


def test_headings_give_sections_and_code_lines_never_stand_as_prose() -> None:
    text = ("Intro line.\n## Pricing\n- Annual fee: $5\n```\nx = 1\n```\n"
            'timeout = 30\nPlain prose: 30 days.')
    flat = [(heading, " ".join(body.split())) for heading, body in sections(text)]
    assert flat == [("", "Intro line."), ("Pricing", "- Annual fee: $5 Plain prose: 30 days.")]
    assert code_like("max_tokens=1024") and code_like('"max_tokens": 1,')
    assert code_like(").content[0].text") and code_like("$ pip install anthropic==0.3")
    assert not code_like("Refund(s) are paid within 5 business days.")


def test_the_subject_comes_from_title_heading_and_sentence() -> None:
    assert subject("- Annual fee: $50.00", heading="Rates and Fees You Agree To",
                   title="EcoCard: Apply for a Sustainable Rewards Credit Card") == "EcoCard"
    assert subject("Unused prepaid credits can be refunded within 14 days of purchase.",
                   heading="Refunds", title="Billing and invoices") == ""
    assert subject("Fees apply.", title="FAQ") == ""  # a kind of page, not a thing
    assert subject("It was founded in 1889.", title="Riverside Rovers",
                   body="Riverside Rovers is a club.") == "Riverside Rovers"


WORDS = ["Gold", "Silver", "Eco", "Rewards", "Business", "Saver", "Platinum", "Bronze"]
PRODUCTS = st.lists(st.sampled_from(WORDS), min_size=1, max_size=3, unique=True).map(
    lambda ws: " ".join([*ws, "Card"]))
FEES = st.integers(min_value=0, max_value=500).map(lambda n: f"${n}.00")


@settings(max_examples=60, deadline=None)
@given(PRODUCTS, PRODUCTS, FEES, FEES)
def test_two_price_pages_conflict_exactly_when_one_product_has_two_fees(
        a: str, b: str, fee_a: str, fee_b: str) -> None:
    found = detect([price_page("a", a, fee_a), price_page("b", b, fee_b, "Common Questions")])
    assert bool(found) == (subject_key(a) == subject_key(b) and fee_a != fee_b)


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(["max_tokens", "temperature", "top_k", "timeout", "retries"]),
       st.integers(0, 5000), st.integers(0, 5000),
       st.sampled_from(['"{k}": {v},', "{k}={v}", "client.create({k}={v})", "{{'{k}': {v}}}"]))
def test_parameters_in_code_never_conflict(key: str, one: int, other: int, form: str) -> None:
    code = [ev(f"d{i}", form.format(k=key, v=v), title="Example", chunk=i)
            for i, v in enumerate((one, other))]
    assert detect(code) == []

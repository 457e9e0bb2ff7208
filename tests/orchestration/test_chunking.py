from hypothesis import given
from hypothesis import strategies as st

from ragq.orchestration.chunking import chunk_document, chunk_point_id, embedding_text, split_words
from ragq.schemas.document import Document

# Unique words (some ending a sentence) so a window's position in the text is unambiguous.
ENDS = st.lists(st.booleans(), min_size=1, max_size=400)


@given(ENDS, st.integers(min_value=2, max_value=60), st.data())
def test_windows_cover_every_word_in_order_and_respect_the_size(ends, size, data):
    words = [f"w{i}." if end else f"w{i}" for i, end in enumerate(ends)]
    overlap = data.draw(st.integers(min_value=0, max_value=size - 1))
    windows = [w.split() for w in split_words(" ".join(words), size, overlap)]
    assert all(1 <= len(w) <= size for w in windows)
    starts = [words.index(w[0]) for w in windows]
    for start, window in zip(starts, windows, strict=True):
        assert words[start : start + len(window)] == window  # contiguous runs of the text
    assert starts[0] == 0 and starts == sorted(set(starts))  # always advancing
    ends_at = [s + len(w) for s, w in zip(starts, windows, strict=True)]
    assert ends_at[-1] == len(words)
    for prev_end, start in zip(ends_at, starts[1:], strict=False):
        assert start <= prev_end  # no gap between windows
        assert prev_end - start <= overlap  # the overlap never exceeds what was asked


def test_overlap_carries_the_tail_of_one_chunk_into_the_next():
    text = " ".join(f"w{i}" for i in range(100))
    first, second, *_ = list(split_words(text, 40, 10))
    assert first.split()[-10:] == second.split()[:10]


def test_windows_prefer_to_end_at_a_sentence_boundary():
    sentence = "alpha beta gamma delta epsilon zeta eta theta."  # 8 words
    text = " ".join([sentence] * 10)
    windows = list(split_words(text, 20, 0))
    assert windows[0].endswith("theta.")
    assert len(windows[0].split()) == 16


def test_a_window_keeps_its_line_breaks_and_tidies_its_spaces():
    text = "# Refunds\n\n\n  Refunds are issued within 14 days. \nContact   support\tfirst."
    (window,) = split_words(text, 50, 0)
    assert window == "# Refunds\n\nRefunds are issued within 14 days.\nContact support first."
    first, second = split_words("one two\nthree four", 2, 0)
    assert (first, second) == ("one two", "three four")  # the break between windows is dropped


def test_overlap_not_below_size_is_rejected():
    try:
        list(split_words("a b c", 3, 3))
    except ValueError as exc:
        assert "overlap" in str(exc)
    else:
        raise AssertionError("overlap == size must be rejected")


def test_chunks_keep_the_document_identity():
    doc = Document(id="d1", title="T", text=" ".join(["word"] * 500), acl=["staff"],
                   authority_tier=1, source_version="v7")
    chunks = chunk_document(doc, collection="c", size_words=100, overlap_words=20)
    assert len(chunks) > 4
    assert {c.doc_id for c in chunks} == {"d1"}
    assert [c.chunk_index for c in chunks] == list(range(len(chunks)))
    assert all(c.acl == ("staff",) and c.source_version == "v7" and c.authority_tier == 1
               for c in chunks)
    assert chunks[0].payload()["acl"] == ["staff"]


def test_point_ids_are_stable_and_distinct():
    assert chunk_point_id("c", "d", 0) == chunk_point_id("c", "d", 0)
    assert len({chunk_point_id("c", "d", i) for i in range(50)}) == 50
    assert chunk_point_id("c", "d", 0) != chunk_point_id("other", "d", 0)


def test_embedding_text_prefixes_the_title_once():
    doc = Document(id="d", title="Paris", text="It is the capital of France.")
    (chunk,) = chunk_document(doc, collection="c", size_words=50, overlap_words=5)
    assert embedding_text(chunk) == "Paris\nIt is the capital of France."
    doc2 = Document(id="d", title="Paris", text="Paris is the capital.")
    (chunk2,) = chunk_document(doc2, collection="c", size_words=50, overlap_words=5)
    assert embedding_text(chunk2) == "Paris is the capital."

from ragq.cli.jobs import QUOTE_CHARS, _short


def test_a_quote_is_shown_on_one_line_and_cut_at_a_word():
    assert _short("Enterprise support answers urgent\ntickets within one hour.") == (
        "Enterprise support answers urgent tickets within one hour.")
    long = " ".join(["technical"] * 40)
    shown = _short(long)
    assert len(shown) <= QUOTE_CHARS + 2 and shown.endswith(" …")
    assert all(word == "technical" for word in shown[:-2].split())  # no word cut in half

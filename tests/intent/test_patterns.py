"""One URL pattern, one invisible-character set, one sentence splitter and one fence pattern
(:mod:`cortex_lsp.intent.patterns`) for every reader of the user's words."""

from __future__ import annotations

from pathlib import Path

import pytest

from cortex_lsp.guards.paths import PathRefused, resolve_in_roots
from cortex_lsp.guards.urls import user_typed_urls as guard_typed_urls
from cortex_lsp.intent.cues import urls_in
from cortex_lsp.intent.intent import parse_intent
from cortex_lsp.intent.patterns import INVISIBLE, URL, split_sentences, strip_invisible
from cortex_lsp.intent.provenance import instruction_text, request_text
from cortex_lsp.intent.quoted_material import normalize
from cortex_lsp.intent.self_talk import self_statements
from cortex_lsp.intent.tokens import tokens

#: a zero-width space, a Unicode tag character, a variation selector (supplement), a Hangul filler,
#: a word joiner and a BOM
HIDDEN = ["\u200b", "\U000e0041", "\U000e0100", "\u3164", "\u2060", "\ufeff"]
PLAIN = "Save it to out.md"


@pytest.mark.parametrize("ch", HIDDEN, ids=lambda c: f"U+{ord(c):04X}")
def test_a_hidden_character_inside_a_file_name_is_read_alike_by_every_reader(ch: str) -> None:
    message = f"Save it to out{ch}.md"
    assert INVISIBLE.fullmatch(ch)
    assert strip_invisible(message) == PLAIN
    assert normalize(message) == normalize(PLAIN)
    assert instruction_text(message) == instruction_text(PLAIN)
    assert request_text(message) == request_text(PLAIN)
    # the grant (its look-alike check reads the typed message with the same set stripped)
    assert parse_intent(message).write_grant.create == parse_intent(PLAIN).write_grant.create == {"out.md"}
    assert [t.text for t in tokens(strip_invisible(message))] == [t.text for t in tokens(PLAIN)]
    assert self_statements(f"My notes are in out{ch}.md") == self_statements("My notes are in out.md")


@pytest.mark.parametrize("ch", HIDDEN, ids=lambda c: f"U+{ord(c):04X}")
def test_the_path_guard_refuses_every_hidden_character_alike(ch: str, tmp_path: Path) -> None:
    with pytest.raises(PathRefused, match="invisible"):
        resolve_in_roots(f"out{ch}.md", [tmp_path])


def test_one_url_pattern_for_cues_tokens_and_the_fetch_gate() -> None:
    words = "read https://example.com/a?b=1 and www.example.org/docs, then save notes.md"
    assert [m.group(0) for m in URL.finditer(words)] == ["https://example.com/a?b=1", "www.example.org/docs,"]
    assert urls_in(words) == ["https://example.com/a?b=1", "www.example.org/docs"]
    assert "https://example.com/a?b=1" in guard_typed_urls([words])
    assert all("example" not in t.text for t in tokens(words))


def test_one_sentence_splitter() -> None:
    assert split_sentences("Save a.md; then stop.  Done!\n\nok") == ["Save a.md;", "then stop.", "Done!", "ok"]
    assert split_sentences("Save a.md; then stop.", at_semicolon=False) == ["Save a.md; then stop."]


def test_one_negation_vocabulary_for_the_clause_analysis_and_the_asked_label() -> None:
    from cortex_lsp.guards import asked
    from cortex_lsp.intent import lexicon as lx

    assert lx.PRECEDING_NEGATORS - {"avoid", "refrain", "stop"} <= lx.NEGATION_WORDS
    assert lx.CLAUSE_NEGATORS <= lx.NEGATION_WORDS
    for word in sorted(lx.NEGATION_WORDS):
        assert asked._NEGATION.fullmatch(word), word
    for stem in lx.NEGATION_STEMS:
        assert asked._NEGATION.fullmatch(stem + "e"), stem
    assert asked._NEGATION.search("nobody should change main.py")
    assert not asked._NEGATION.search("update notes.md with the new totals")

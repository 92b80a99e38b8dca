"""Cutting texts to a number of the model's tokens (TruncatingEmbedder.truncate)."""

from __future__ import annotations

import pytest

from memvet.embeddings.fake import FakeEmbedder
from memvet.embeddings.model import SentenceTransformerEmbedder, cut_to_tokens
from memvet.embeddings.onnx import OnnxEmbedder
from memvet.memory.ports import TruncatingEmbedder

# "the configuration works" as [CLS] the config ##uration works [SEP]
TEXT = "the configuration works"
OFFSETS = [(0, 0), (0, 3), (4, 10), (10, 17), (18, 23), (0, 0)]
WORDS = [None, 0, 1, 1, 2, None]


def test_a_text_that_fits_comes_back_as_it_is() -> None:
    assert cut_to_tokens(TEXT, OFFSETS, WORDS, 6) == TEXT
    assert cut_to_tokens(TEXT, OFFSETS, WORDS, 60) == TEXT


def test_the_cut_falls_after_a_whole_word() -> None:
    assert cut_to_tokens(TEXT, OFFSETS, WORDS, 5) == "the configuration"
    assert cut_to_tokens(TEXT, OFFSETS, WORDS, 4) == "the"  # never inside "configuration"


def test_a_word_longer_than_the_limit_is_cut_inside_it() -> None:
    offsets = [(0, 0), (0, 4), (4, 8), (8, 12), (12, 16), (0, 0)]
    assert cut_to_tokens("abcdefghijklmnop", offsets, [None, 0, 0, 0, 0, None], 4) == "abcdefgh"


def test_the_embedders_the_extractor_is_handed_can_cut() -> None:
    for embedder in (FakeEmbedder(), SentenceTransformerEmbedder()):
        assert isinstance(embedder, TruncatingEmbedder)
    assert FakeEmbedder().truncate(["a b c d e f"], 5) == ["a b c"]


SENTENCES = [
    "The reanimated plugin has to be LAST in the plugins list or it silently miscompiles "
    "worklets, which nobody notices until the android build on EAS breaks for half a day.",
    "short one",
    "pls don't hardcode hex colors, the design tokens live in packages/ui/src/tokens.ts and "
    "every component reads them from there",
    "https://example.com/aVeryLongPathWithoutAnySpacesThatGoesOnAndOnForeverAndEverMore/x/y",
]


@pytest.mark.slow
def test_the_prefix_tokenizes_into_the_texts_first_tokens(onnx_embedder: OnnxEmbedder) -> None:
    tokenizer = onnx_embedder._tokenizer
    cut = onnx_embedder.truncate(SENTENCES, 16)
    assert cut[1] == "short one"
    for text, prefix in zip(SENTENCES, cut, strict=True):
        ids, full = tokenizer.encode(prefix).ids, tokenizer.encode(text).ids
        assert len(ids) <= 16 and text.startswith(prefix)
        assert ids[:-1] == full[: len(ids) - 1]  # the same tokens, then [SEP]
    assert len(tokenizer.encode(cut[0]).ids) >= 14  # cut after a whole word, not far before
    assert cut == SentenceTransformerEmbedder().truncate(SENTENCES, 16)  # either runtime


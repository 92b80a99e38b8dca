"""How the ONNX embedder groups texts into rows and session runs (no model needed)."""

from __future__ import annotations

import random

import pytest

from memvet.embeddings.onnx import PACK_TOKENS, RUN_COST_TOKENS, batches, cost, plan


def _cost(lengths: list[int], runs: list[list[int]]) -> int:
    return sum(RUN_COST_TOKENS + len(run) * max(lengths[i] for i in run) for run in runs)


def test_short_sentences_do_not_pad_to_a_long_one() -> None:
    lengths = [35, 13, 14, 13]  # a turn: three short sentences and a long one
    assert batches(lengths, 32) == [[1, 3, 2], [0]]
    assert _cost(lengths, batches(lengths, 32)) < _cost(lengths, [[0, 1, 2, 3]])


def test_texts_of_about_one_length_go_in_one_run() -> None:
    assert batches([12, 11, 12, 10], 32) == [[3, 1, 0, 2]]
    assert batches([], 32) == []


@pytest.mark.parametrize("seed", range(5))
def test_every_text_once_no_run_over_the_cap_and_never_dearer_than_fixed_chunks(
        seed: int) -> None:
    rng = random.Random(seed)
    lengths = [rng.choice([rng.randint(3, 20), rng.randint(20, 128)]) for _ in range(200)]
    runs = batches(lengths, 16)
    assert sorted(i for run in runs for i in run) == list(range(200))
    assert all(0 < len(run) <= 16 for run in runs)
    order = sorted(range(200), key=lambda i: lengths[i])
    fixed = [order[k:k + 16] for k in range(0, 200, 16)]  # what a plain sorted chunking costs
    assert _cost(lengths, runs) <= _cost(lengths, fixed)


def _texts_a_row(runs: list[list[int]]) -> list[list[list[int]]]:
    return [[[i] for i in run] for run in runs]


def test_a_turns_few_statements_go_side_by_side_in_one_row() -> None:
    lengths = [35, 13, 14, 13]
    assert plan(lengths, 32) == [[[0, 1, 3, 2]]]  # the longest, then the shortest that fit
    assert cost(lengths, plan(lengths, 32)) < cost(lengths, _texts_a_row(batches(lengths, 32)))


def test_many_texts_of_about_one_length_go_a_text_a_row() -> None:
    """Sorted runs barely pad; packing them would only make attention dearer."""
    rng = random.Random(3)
    lengths = [rng.randint(18, 24) for _ in range(500)]
    runs = plan(lengths, 32)
    assert all(len(row) == 1 for run in runs for row in run)
    assert runs == _texts_a_row(batches(lengths, 32))


@pytest.mark.parametrize("seed", range(5))
def test_a_plan_holds_every_text_once_and_costs_no_more_than_either_way(seed: int) -> None:
    rng = random.Random(seed)
    lengths = [rng.choice([rng.randint(3, 20), rng.randint(20, 300)])
               for _ in range(rng.randint(1, 60))]
    runs = plan(lengths, 16)
    assert sorted(i for run in runs for row in run for i in row) == list(range(len(lengths)))
    assert all(0 < len(run) <= 16 for run in runs)
    for run in runs:
        for row in run:  # a row holds one text, or texts that fit in PACK_TOKENS together
            assert len(row) == 1 or sum(lengths[i] for i in row) <= PACK_TOKENS
    assert cost(lengths, runs) <= cost(lengths, _texts_a_row(batches(lengths, 16)))

"""The scaling sampler: q·k spreads like √d, q·k/√d stays near 1, reproducibly."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from attention_math import ScalingSpread, ScenarioError, scaling_spread, softmax
from attention_math.scaling import DEFAULT_DIMS


@pytest.fixture(scope="module")
def spread() -> ScalingSpread:
    return scaling_spread()


def test_the_default_dimensions_are_powers_of_two_to_512(spread: ScalingSpread) -> None:
    assert DEFAULT_DIMS == (1, 2, 4, 8, 16, 32, 64, 128, 256, 512)
    assert spread.dims == DEFAULT_DIMS and spread.row_dim == 512
    assert spread.raw_std.shape == spread.scaled_std.shape == (10,)


def test_the_spread_of_raw_scores_grows_like_the_square_root_of_d(spread: ScalingSpread) -> None:
    dims = np.array(spread.dims, dtype=np.float64)
    slope, intercept = np.polyfit(np.log(dims), np.log(spread.raw_std), 1)
    assert slope == pytest.approx(0.5, abs=0.03)
    assert math.exp(intercept) == pytest.approx(1.0, abs=0.1)
    np.testing.assert_allclose(spread.raw_std / spread.sqrt_dims, 1.0, atol=0.1)
    assert spread.raw_std[-1] > 15 * spread.raw_std[0]


def test_scaled_scores_keep_a_spread_of_one(spread: ScalingSpread) -> None:
    np.testing.assert_allclose(spread.scaled_std, 1.0, atol=0.1)
    np.testing.assert_allclose(spread.scaled_std, spread.raw_std / np.sqrt(spread.dims), rtol=1e-12)
    slope = np.polyfit(np.log(spread.dims), np.log(spread.scaled_std), 1)[0]
    assert abs(slope) < 0.03  # flat


def test_the_example_row_is_one_query_softmaxed_both_ways(spread: ScalingSpread) -> None:
    assert spread.row_scores.shape == (8,)
    np.testing.assert_array_equal(spread.unscaled_weights, softmax(spread.row_scores))
    np.testing.assert_array_equal(spread.scaled_weights, softmax(spread.row_scores / math.sqrt(512)))
    # unscaled, one key takes nearly everything; scaled, the weights stay spread out
    assert spread.unscaled_weights.max() > 0.9 > 0.5 > spread.scaled_weights.max()
    assert np.sort(spread.unscaled_weights)[-2] < 0.1
    # the raw scores of the row are about √512 ≈ 22.6 apart in spread
    assert 10 < np.std(spread.row_scores) < 40


def test_the_same_seed_gives_the_same_numbers_and_another_seed_others() -> None:
    first, again = scaling_spread((1, 64), samples=500, seed=3), scaling_spread((1, 64), samples=500, seed=3)
    for field in ("raw_std", "scaled_std", "row_scores", "unscaled_weights", "scaled_weights"):
        assert np.array_equal(getattr(first, field), getattr(again, field)), field
    other = scaling_spread((1, 64), samples=500, seed=4)
    assert not np.array_equal(first.raw_std, other.raw_std)


def test_the_kept_products_are_a_cloud_of_the_same_draws(spread: ScalingSpread) -> None:
    assert spread.kept_products.shape == (10, 60)
    # a few hundred of the same draws, kept: their spread is √d too, and keeping them changed nothing
    many = scaling_spread(samples=2_000, kept=2_000)
    np.testing.assert_array_equal(many.raw_std, spread.raw_std)
    np.testing.assert_array_equal(many.kept_products[:, :60], spread.kept_products)
    np.testing.assert_allclose(np.std(many.kept_products, axis=1, ddof=1), spread.raw_std, rtol=1e-12)
    assert scaling_spread((1, 4), samples=10, kept=0).kept_products.shape == (2, 0)


def test_the_example_row_scaled_and_its_top_key(spread: ScalingSpread) -> None:
    np.testing.assert_allclose(spread.row_scaled_scores * math.sqrt(512), spread.row_scores, rtol=1e-12)
    assert spread.top_key == int(np.argmax(spread.unscaled_weights)) == int(np.argmax(spread.scaled_weights))


def test_the_result_is_frozen_and_read_only(spread: ScalingSpread) -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        spread.seed = 1  # type: ignore[misc]
    for array in (spread.raw_std, spread.scaled_std, spread.row_scores, spread.unscaled_weights, spread.sqrt_dims,
                  spread.kept_products, spread.row_scaled_scores):
        assert not array.flags.writeable


def test_large_dimensions_are_drawn_in_chunks_with_the_same_statistics() -> None:
    big = scaling_spread((4096,), samples=600, keys=4, seed=2)
    assert big.raw_std[0] == pytest.approx(64, rel=0.1)
    assert big.scaled_std[0] == pytest.approx(1, rel=0.1)


@pytest.mark.parametrize(
    ("arguments", "field"),
    [
        pytest.param({"dims": []}, "dims", id="no dims"),
        pytest.param({"dims": "512"}, "dims", id="dims text"),
        pytest.param({"dims": (1, 0)}, "dims", id="dim zero"),
        pytest.param({"dims": (1, 2.5)}, "dims", id="dim fraction"),
        pytest.param({"samples": 1}, "samples", id="one sample"),
        pytest.param({"samples": True}, "samples", id="samples boolean"),
        pytest.param({"keys": 1}, "keys", id="one key"),
        pytest.param({"samples": 10, "kept": 11}, "kept", id="more kept than drawn"),
        pytest.param({"seed": -1}, "seed", id="negative seed"),
    ],
)
def test_bad_arguments_name_the_field(arguments: dict[str, object], field: str) -> None:
    with pytest.raises(ScenarioError) as info:
        scaling_spread(**arguments)  # type: ignore[arg-type]
    message = str(info.value)
    assert message.startswith(f"{field}: expected") and "\n" not in message

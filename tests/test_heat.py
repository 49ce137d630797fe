"""The ends of a heat map's colour scale (``attention_math.heat``): the grid's own range, widened.

A grid whose numbers barely differ must not be spread from black to bright (a reviewer saw two
weights that both print 0.50 in clearly different colours, and 0.49 as dark as a zero weight);
a grid whose numbers differ enough keeps its own range, so the lecture's maps look as before.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from attention_math import Scenario, format_number, preset
from attention_math.heat import WEIGHT_SHARE, Extremes, colour_scale, least_span, value_range

OWLS = Scenario(title="Owls listen", tokens=("Owls", "listen"),
                embeddings=[[0.3, 0.8, 0.6], [-0.5, -0.4, 0.7]],
                w_query=[[-1.0, 0.6], [0.6, -0.1], [-0.4, -0.4]],
                w_key=[[-0.5, -0.1], [0.0, 0.1], [1.0, 0.6]],
                w_value=[[0.2, 1.0], [-0.6, -0.7], [0.2, -0.9]], query=1, precision=2)
"""The reviewer's 2 tokens: weights from 0.494 to 0.506, scaled scores from −0.18 to −0.06."""

FIELDS = ("scores", "scaled_scores", "weights")


@pytest.mark.parametrize("field", FIELDS)
def test_the_lectures_maps_keep_their_own_range(field: str) -> None:
    trace = preset("dog-chased-ball").trace()
    assert np.array_equal(getattr(Extremes(trace), field), value_range(getattr(trace, field)))


def test_a_masked_weight_grid_runs_from_zero_to_one() -> None:
    trace = preset("dog-chased-ball").trace(causal=True)
    assert Extremes(trace).weights.tolist() == [0.0, 1.0]


@pytest.mark.parametrize("field", FIELDS)
def test_cells_that_print_the_same_number_sit_together_on_the_scale(field: str) -> None:
    trace = OWLS.trace()
    matrix = np.asarray(getattr(trace, field))
    low, high = getattr(Extremes(trace), field)
    place = (matrix - low) / (high - low)  # where each cell sits on the scale, 0 to 1
    texts = [[format_number(float(v), OWLS.precision) for v in row] for row in matrix]
    for (i, j), (k, m) in ((a, b) for a in np.ndindex(matrix.shape) for b in np.ndindex(matrix.shape) if a < b):
        if texts[i][j] == texts[k][m]:
            assert abs(place[i, j] - place[k, m]) < 0.05, f"{field}: two {texts[i][j]} far apart on the scale"
    assert np.ptp(place) < 0.3, f"{field}: numbers a few hundredths apart spread over {np.ptp(place):.2f} of the scale"


def test_the_widened_scale_is_centred_on_the_grid_and_spans_the_least_span() -> None:
    trace = OWLS.trace()
    for field in FIELDS:
        low, high = getattr(Extremes(trace), field)
        own_low, own_high = value_range(getattr(trace, field))
        assert low <= own_low and own_high <= high
        assert (low + high) / 2 == pytest.approx((own_low + own_high) / 2)
        assert high - low == pytest.approx(least_span(trace, field))
    assert least_span(trace, "weights") == pytest.approx(WEIGHT_SHARE * trace.weights.max())
    assert least_span(trace, "scores") == pytest.approx(math.sqrt(trace.d_k))


finite = st.floats(-50, 50, allow_nan=False, allow_infinity=False)


@given(arrays(np.float64, st.tuples(st.integers(1, 4), st.integers(1, 4)), elements=finite),
       st.floats(0, 20), st.one_of(st.none(), st.tuples(finite, st.floats(0.1, 40))))
def test_a_colour_scale_holds_its_grid_spans_the_least_span_and_keeps_its_bounds(
        matrix: np.ndarray, least: float, bounds: tuple[float, float] | None) -> None:
    if bounds is None:
        floor, ceiling = -math.inf, math.inf
    else:
        floor, ceiling = bounds[0], bounds[0] + bounds[1]
        matrix = np.clip(matrix, floor, ceiling)  # numbers that can only lie within the bounds
    low, high = colour_scale(matrix, least, floor=floor, ceiling=ceiling)
    own_low, own_high = value_range(matrix)
    tolerance = 1e-9 * (1 + abs(own_low) + abs(own_high))
    assert low <= own_low + tolerance and own_high - tolerance <= high, "the grid leaves its scale"
    assert floor <= low and high <= ceiling, "the scale passes its bounds"
    assert high - low >= min(least, ceiling - floor) - tolerance, "narrower than the least span"
    if own_high - own_low >= least:
        assert (low, high) == (own_low, own_high), "a wide enough grid keeps its own ends"


def test_a_colour_scale_refuses_what_makes_no_sense() -> None:
    with pytest.raises(ValueError, match="least >= 0"):
        colour_scale([[1.0]], -1.0)
    with pytest.raises(ValueError, match="floor < ceiling"):
        colour_scale([[1.0]], 1.0, floor=1.0, ceiling=1.0)
    with pytest.raises(ValueError, match="no finite number"):
        colour_scale([[-np.inf]], 1.0)

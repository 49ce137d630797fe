"""The lecture's presets reproduce the numbers on its slides, to the decimals shown."""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

from attention_math import DEFAULT_PRESET, PRESETS, Scenario, ScenarioError, preset, train_attention
from attention_math.presets import DOG_CHASED_BALL, GROUPED_DOG, MASKED_DOG, TWO_HEADS

MATRICES = ("embeddings", "w_query", "w_key", "w_value")
TOOLS = Path(__file__).resolve().parents[1] / "tools"
TOOL = TOOLS / "find_default_preset.py"
ONE_DECIMAL = sorted(set(PRESETS) - {"your-journey", "learned"})  # the lecture's own (learned: by gradient descent)


def rounds_to(value: float, target: float, decimals: int) -> bool:
    return round(float(value), decimals) == target


# -- raw-dot-product ---------------------------------------------------------------------------


def test_raw_dot_product_embeddings_tie_before_projection() -> None:
    scenario = preset("raw-dot-product")
    assert scenario.tokens == ("it", "dog", "ball")
    assert scenario.embeddings.tolist() == [[0.5, 0.5, 0.1], [0.9, 0.1, 0.1], [0.1, 0.9, 0.1]]
    x = scenario.embeddings
    raw = x @ x.T
    it, dog, ball = x
    assert (it * dog).round(2).tolist() == [0.45, 0.05, 0.01]
    assert (it * ball).round(2).tolist() == [0.05, 0.45, 0.01]
    assert round(float(raw[0, 1]), 2) == 0.51
    assert round(float(raw[0, 2]), 2) == 0.51
    assert raw[0, 1] == pytest.approx(raw[0, 2], abs=1e-12)  # "it" cannot tell dog from ball


def test_raw_dot_product_keys_break_the_tie() -> None:
    scenario = preset("raw-dot-product")
    assert scenario.w_key.tolist() == np.diag([1.0, 2.0, 1.0]).tolist()
    assert scenario.w_query.tolist() == np.eye(3).tolist()
    assert scenario.w_value.tolist() == np.eye(3).tolist()
    trace = scenario.trace()
    assert trace.keys.round(2).tolist() == [[0.5, 1.0, 0.1], [0.9, 0.2, 0.1], [0.1, 1.8, 0.1]]
    assert np.array_equal(trace.queries, scenario.embeddings)
    assert scenario.query == 0 and scenario.query_token == "it"
    step = scenario.query_step()
    assert step.scores.round(2).tolist() == [0.76, 0.56, 0.96]
    assert step.products[1].round(2).tolist() == [0.45, 0.1, 0.01]
    assert step.products[2].round(2).tolist() == [0.05, 0.9, 0.01]
    assert step.weights[2] > step.weights[1]  # now "it" prefers "ball"


# -- dog-chased-ball -----------------------------------------------------------------------------


def test_dog_chased_ball_is_the_default() -> None:
    assert DEFAULT_PRESET == "dog-chased-ball"
    assert preset(DEFAULT_PRESET) is DOG_CHASED_BALL


def test_dog_chased_ball_shapes_and_tokens() -> None:
    scenario = preset("dog-chased-ball")
    assert scenario.tokens == ("The", "dog", "chased", "the", "ball")
    assert scenario.embeddings.shape == (5, 3)
    for name in MATRICES[1:]:
        assert getattr(scenario, name).shape == (3, 2), name
    assert (scenario.d_k, scenario.scaled, scenario.precision) == (2, True, 2)
    assert scenario.query == 4 and scenario.query_token == "ball"


@pytest.mark.parametrize("name", ONE_DECIMAL)
def test_every_lecture_preset_input_has_one_decimal(name: str) -> None:
    scenario = preset(name)
    names = MATRICES if scenario.w_out is None else (*MATRICES, "w_out")
    for matrix_name in names:
        tenths = getattr(scenario, matrix_name) * 10
        assert np.all(np.abs(tenths - np.round(tenths)) < 1e-9), matrix_name
        assert all(len(f"{v}".split(".")[1]) == 1 for v in getattr(scenario, matrix_name).ravel()), matrix_name
    assert scenario.input_decimals <= 1 and not scenario.rounded


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_every_preset_shows_at_least_two_decimals(name: str) -> None:
    # by default (only softmax-saturation asks for 3, and the learned weights, of many decimals, are shown rounded
    # to 2), whatever the inputs' decimals
    scenario = preset(name)
    own = {"softmax-saturation": 3, "learned": 2}
    expected = own.get(name, min(4, max(2, scenario.exact_decimals)))
    assert scenario.precision == expected


def test_dog_chased_ball_reproduces_the_slide() -> None:
    step = preset("dog-chased-ball").query_step()
    assert step.index == 4
    for score, target in zip(step.scores[:3], (2.89, 2.82, 3.42), strict=True):
        assert rounds_to(score, target, 2), (score, target)
    assert step.sqrt_d_k == pytest.approx(math.sqrt(2))
    for weight, target in zip(step.weights, (0.17, 0.16, 0.25, 0.10, 0.31), strict=True):
        assert rounds_to(weight, target, 2), (weight, target)
    assert step.weights.round(2).tolist() == [0.17, 0.16, 0.25, 0.1, 0.31]
    assert step.weights.sum() == pytest.approx(1.0, abs=1e-12)


def test_dog_chased_ball_slide_numbers_are_not_on_a_rounding_boundary() -> None:
    # The numbers were chosen so float noise cannot flip a rounded digit.
    step = preset("dog-chased-ball").query_step()
    for value in [*step.scores[:3], *step.weights]:
        hundredths = float(value) * 100
        assert abs(hundredths - math.floor(hundredths) - 0.5) > 0.01, value


def test_the_and_The_are_different_tokens_with_different_rows() -> None:
    scenario = preset("dog-chased-ball")
    trace = scenario.trace()
    first, fourth = scenario.tokens.index("The"), scenario.tokens.index("the")
    assert (first, fourth) == (0, 3)
    assert not np.allclose(scenario.embeddings[first], scenario.embeddings[fourth])
    assert not np.allclose(trace.weights[first], trace.weights[fourth])
    assert not np.allclose(trace.context[first], trace.context[fourth])
    assert scenario.with_query("The").query == 0 and scenario.with_query("the").query == 3


def test_find_default_preset_reproduces_the_matrices() -> None:
    module = _load_tool()
    found = module.search()
    found["w_value"] = module.pick_w_value(found["embeddings"])
    assert set(found) == set(MATRICES)
    for name in MATRICES:
        matrix = np.asarray(found[name], dtype=np.float64)
        assert matrix.shape == getattr(DOG_CHASED_BALL, name).shape, name
        assert np.array_equal(matrix, getattr(DOG_CHASED_BALL, name)), name


def _load_tool(path: Path = TOOL) -> ModuleType:
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# -- softmax-saturation ------------------------------------------------------------------------


def test_softmax_saturation_rows() -> None:
    scenario = preset("softmax-saturation")
    assert scenario.tokens == ("small", "large")
    assert not scenario.scaled and scenario.precision == 3
    trace = scenario.trace()
    assert trace.scores.tolist() == [[5.0, 6.0], [500.0, 505.0]]
    assert np.array_equal(trace.scaled_scores, trace.scores)
    assert trace.weights[0].round(2).tolist() == [0.27, 0.73]
    assert trace.weights[1].round(3).tolist() == [0.007, 0.993]
    assert scenario.query == 1
    assert scenario.query_step().weights.round(3).tolist() == [0.007, 0.993]
    # The same scores, scaled by √2, would saturate less: the reason the lecture divides.
    assert Scenario(**{**_arguments(scenario), "scaled": True}).trace().weights[1, 1] < trace.weights[1, 1]


def _arguments(scenario: Scenario) -> dict[str, object]:
    data = scenario.to_dict()
    data["query"] -= 1
    return data


# -- your-journey --------------------------------------------------------------------------------

BOOK_INPUTS = [  # Raschka, Build a Large Language Model (From Scratch), section 3.3.1
    [0.43, 0.15, 0.89], [0.55, 0.87, 0.66], [0.57, 0.85, 0.64],
    [0.22, 0.58, 0.33], [0.77, 0.25, 0.10], [0.05, 0.80, 0.55],
]
BOOK_WEIGHTS_2 = [0.1500, 0.2264, 0.2199, 0.1311, 0.0906, 0.1820]  # attn_weights_2, section 3.4.1
BOOK_CONTEXT_2 = [0.3061, 0.8210]  # context_vec_2


def test_your_journey_is_the_books_example() -> None:
    scenario = preset("your-journey")
    assert scenario.tokens == ("Your", "journey", "starts", "with", "one", "step")
    assert scenario.embeddings.tolist() == BOOK_INPUTS
    assert scenario.query == 1 and scenario.query_token == "journey"
    for name in MATRICES[1:]:
        matrix = getattr(scenario, name)
        assert matrix.shape == (3, 2), name
        assert np.all((0 <= matrix) & (matrix < 1)), name  # torch.rand draws from [0, 1)
        assert np.array_equal(matrix, np.round(matrix, 4)), name  # 4 decimals, as PyTorch prints
    assert scenario.scaled


def test_your_journey_weights_are_the_books_scaled_softmax() -> None:
    scenario = preset("your-journey")
    x = scenario.embeddings
    query = x[1] @ scenario.w_query
    keys = x @ scenario.w_key
    scores = np.array([sum(q * k for q, k in zip(query, key, strict=True)) for key in keys])
    exps = np.exp(scores / math.sqrt(2))
    formula = exps / exps.sum()
    step = scenario.query_step()
    np.testing.assert_allclose(step.weights, formula, rtol=1e-12)
    assert step.weights.round(4).tolist() == BOOK_WEIGHTS_2
    np.testing.assert_allclose(step.context, formula @ (x @ scenario.w_value), rtol=1e-12)
    assert step.context.round(4).tolist() == BOOK_CONTEXT_2


def test_your_journey_shows_four_decimals_and_says_they_are_rounded() -> None:
    scenario = preset("your-journey")
    assert (scenario.input_decimals, scenario.exact_decimals) == (4, 6)  # 0.55 × 0.2961 = 0.162855
    assert scenario.precision == 4 and scenario.rounded


# -- two-heads ------------------------------------------------------------------------------------


def test_two_heads_attend_most_to_different_tokens_for_ball() -> None:
    scenario = preset("two-heads")
    assert scenario is TWO_HEADS and scenario.n_heads == 2 and scenario.query_token == "ball"
    assert scenario.tokens == DOG_CHASED_BALL.tokens
    assert np.array_equal(scenario.embeddings, DOG_CHASED_BALL.embeddings)
    tops = []
    for head in scenario.heads:
        weights = head.query_step().weights
        order = np.argsort(weights)[::-1]
        # clearly on top, at the two decimals shown: at least 0.3, and 0.06 above the rest
        assert weights[order[0]] >= 0.3 and weights[order[0]] - weights[order[1]] >= 0.06, weights
        tops.append(scenario.tokens[int(order[0])])
    assert tops == ["dog", "chased"]
    trace = scenario.multi_head_trace()
    assert trace.concat.shape == (5, 4) and trace.output.shape == (5, 3)
    assert np.all(np.abs(trace.output[4]) >= 0.1)  # no entry of the output of "ball" shows as 0.00


def test_find_two_heads_preset_reproduces_the_matrices() -> None:
    found = _load_tool(TOOLS / "find_two_heads_preset.py").search()
    for name in ("w_query", "w_key", "w_value", "w_out"):
        assert np.array_equal(np.array(found[name]), getattr(TWO_HEADS, name)), name


# -- masked-dog -----------------------------------------------------------------------------------


def _masked_row_by_hand(scenario: Scenario, i: int) -> list[float]:
    """Row ``i`` of the causal weights from the formula: exp of each scaled score of keys 1..i over their sum."""
    x, d_k = scenario.embeddings, scenario.d_k
    query = x[i] @ scenario.w_query
    exps = [math.exp(float(query @ (x[j] @ scenario.w_key)) / math.sqrt(d_k)) for j in range(i + 1)]
    return [e / sum(exps) for e in exps] + [0.0] * (scenario.n_tokens - i - 1)


def test_masked_dog_is_dog_chased_ball_asking_about_chased() -> None:
    scenario = preset("masked-dog")
    assert scenario is MASKED_DOG and "masked" in scenario.title
    assert scenario.tokens == DOG_CHASED_BALL.tokens and scenario.query == 2 and scenario.query_token == "chased"
    for name in MATRICES:
        assert np.array_equal(getattr(scenario, name), getattr(DOG_CHASED_BALL, name)), name
    assert (scenario.precision, scenario.scaled) == (2, True)


def test_masked_dog_reproduces_its_docstring() -> None:
    scenario = preset("masked-dog")
    unmasked, masked = scenario.trace().weights[2], scenario.trace(causal=True).weights[2]
    assert unmasked.round(2).tolist() == [0.18, 0.18, 0.25, 0.12, 0.28]
    assert masked.round(2).tolist() == [0.30, 0.29, 0.41, 0.0, 0.0]
    np.testing.assert_allclose(masked, _masked_row_by_hand(scenario, 2), rtol=1e-12, atol=0)
    assert round(float(unmasked[:3].sum()), 2) == 0.60
    assert scenario.trace().context[2].round(2).tolist() == [-0.32, 0.41]
    assert scenario.trace(causal=True).context[2].round(2).tolist() == [-0.38, 0.46]


def test_masked_dog_query_is_one_the_mask_changes_and_ball_is_not() -> None:
    scenario = preset("masked-dog")
    unmasked, masked = scenario.trace().weights, scenario.trace(causal=True).weights
    assert not np.allclose(unmasked[scenario.query], masked[scenario.query])  # "chased" loses "the" and "ball"
    np.testing.assert_allclose(unmasked[-1], masked[-1], rtol=1e-15)  # "ball" saw every token already


def test_masked_dog_shown_numbers_are_not_on_a_rounding_boundary() -> None:
    from attention_math import renormalised_weights

    scenario = preset("masked-dog")
    trace, causal = scenario.trace(), scenario.trace(causal=True)
    route = renormalised_weights(trace.scaled_scores)
    step = causal.query_step(scenario.query)
    for numbers in (trace.scaled_scores, causal.weights, route.full, route.zeroed, route.row_sums, step.exps,
                    causal.context, [step.max_score, step.exp_sum]):
        for value in np.ravel(numbers):
            hundredths = float(value) * 100
            assert abs(hundredths - math.floor(hundredths) - 0.5) > 0.005, value
# -- masked-dog ------------------------------------------------------------------------------------


def test_masked_dog_asks_about_a_middle_token_whose_row_the_mask_changes() -> None:
    scenario = preset("masked-dog")
    for name in MATRICES:
        assert np.array_equal(getattr(scenario, name), getattr(DOG_CHASED_BALL, name)), name
    assert scenario.tokens == DOG_CHASED_BALL.tokens and scenario.query == 2 and scenario.query_token == "chased"
    x, wq, wk = scenario.embeddings, scenario.w_query, scenario.w_key
    scores = (x @ wq)[2] @ (x @ wk).T / math.sqrt(2)  # a plain loop's numbers: q3 · k_j / √2
    past = np.exp(scores[:3] - scores[:3].max())
    assert np.round(past / past.sum(), 2).tolist() == [0.30, 0.29, 0.41]  # masked: the past only
    full = np.exp(scores - scores.max())
    assert np.round(full / full.sum(), 2).tolist() == [0.18, 0.18, 0.25, 0.12, 0.28]  # unmasked


# -- rope-dog ---------------------------------------------------------------------------------------


def _rope_weights_by_hand(scenario: Scenario, i: int, *, turned: bool) -> list[float]:
    """Row ``i`` of the weights from RoFormer's formula, a plain loop: each pair (2p, 2p+1) of q_i and k_j turned by
    position × 10000^(−2p/d), then dotted, divided by √d and softmaxed (positions counted from 0)."""
    x, d = scenario.embeddings.tolist(), scenario.d_k
    wq, wk = scenario.w_query.tolist(), scenario.w_key.tolist()

    def project(row: list[float], w: list[list[float]]) -> list[float]:
        return [sum(row[r] * w[r][c] for r in range(len(row))) for c in range(d)]

    def turn(v: list[float], m: int) -> list[float]:
        out = list(v)
        for p in range(d // 2):
            angle = m * 10000.0 ** (-2 * p / d) if turned else 0.0
            a, b, cos, sin = v[2 * p], v[2 * p + 1], math.cos(angle), math.sin(angle)
            out[2 * p], out[2 * p + 1] = a * cos - b * sin, a * sin + b * cos
        return out

    q = turn(project(x[i], wq), i)
    scores = [sum(qc * kc for qc, kc in zip(q, turn(project(x[j], wk), j), strict=True)) / math.sqrt(d)
              for j in range(len(x))]
    exps = [math.exp(s - max(scores)) for s in scores]
    return [e / sum(exps) for e in exps]


def test_rope_dog_is_dog_chased_ball_with_two_pairs() -> None:
    from attention_math.presets import ROPE_DOG

    scenario = preset("rope-dog")
    assert scenario is ROPE_DOG and scenario.tokens == DOG_CHASED_BALL.tokens and scenario.query_token == "ball"
    assert scenario.d_k == 4 and (scenario.precision, scenario.scaled) == (2, True)
    for name in ("embeddings", "w_value"):
        assert np.array_equal(getattr(scenario, name), getattr(DOG_CHASED_BALL, name)), name
    for name in ("w_query", "w_key"):  # dog-chased-ball's columns, then the two drawn ones
        assert np.array_equal(getattr(scenario, name)[:, :2], getattr(DOG_CHASED_BALL, name)), name


def test_rope_dog_reproduces_its_docstring_from_a_plain_loop() -> None:
    scenario = preset("rope-dog")
    plain = _rope_weights_by_hand(scenario, 4, turned=False)
    turned = _rope_weights_by_hand(scenario, 4, turned=True)
    assert np.round(plain, 2).tolist() == [0.18, 0.15, 0.27, 0.16, 0.23]  # most on "chased"
    assert np.round(turned, 2).tolist() == [0.05, 0.03, 0.06, 0.23, 0.64]  # most on itself, then "the"
    from attention_math import rope_attention

    trace = rope_attention(scenario.embeddings, scenario.w_query, scenario.w_key, scenario.w_value)
    np.testing.assert_allclose(trace.weights[4], turned, rtol=1e-12)
    np.testing.assert_allclose(trace.plain.weights[4], plain, rtol=1e-12)
    assert trace.plain.scaled_scores[4].round(2).tolist() == [1.88, 1.71, 2.28, 1.78, 2.11]
    assert trace.scaled_scores[4].round(2).tolist() == [-0.42, -1.09, -0.25, 1.08, 2.11]


def test_rope_dog_shown_numbers_are_not_on_a_rounding_boundary() -> None:
    from attention_math import rope_attention

    scenario = preset("rope-dog")
    trace = rope_attention(scenario.embeddings, scenario.w_query, scenario.w_key, scenario.w_value)
    for numbers in (trace.scaled_scores, trace.weights, trace.plain.scaled_scores, trace.plain.weights):
        for number in np.ravel(numbers):
            hundredths = float(number) * 100
            assert abs(hundredths - math.floor(hundredths) - 0.5) > 0.005, number


# -- grouped-dog ----------------------------------------------------------------------------------


def _ball_weights_by_hand(x: np.ndarray, w_query: np.ndarray, w_key: np.ndarray) -> list[float]:
    """The weights of "ball" from the formula, in a plain loop: exp(q5 · k_j / √d_k) over their sum."""
    query = [sum(x[4][r] * w_query[r][c] for r in range(3)) for c in range(2)]
    keys = [[sum(x[j][r] * w_key[r][c] for r in range(3)) for c in range(2)] for j in range(5)]
    exps = [math.exp(sum(q * k for q, k in zip(query, key, strict=True)) / math.sqrt(2)) for key in keys]
    return [e / sum(exps) for e in exps]


def test_grouped_dog_shares_two_key_value_heads_among_four_query_heads() -> None:
    scenario = preset("grouped-dog")
    assert scenario is GROUPED_DOG and scenario.n_heads == 4 and scenario.query_token == "ball"
    assert scenario.tokens == DOG_CHASED_BALL.tokens
    assert np.array_equal(scenario.embeddings, DOG_CHASED_BALL.embeddings)
    for name in ("w_key", "w_value"):
        stack = getattr(scenario, name)
        assert np.array_equal(stack[0], stack[1]) and np.array_equal(stack[2], stack[3]), name
        assert not np.array_equal(stack[0], stack[2]), name
    assert not any(np.array_equal(scenario.w_query[a], scenario.w_query[b]) for a in range(4) for b in range(a))
    assert scenario.w_out.shape == (8, 3)


def test_grouped_dog_reproduces_its_docstring() -> None:
    scenario = preset("grouped-dog")
    expected = [[0.22, 0.34, 0.21, 0.11, 0.12], [0.17, 0.14, 0.17, 0.20, 0.32],
                [0.18, 0.16, 0.13, 0.38, 0.15], [0.18, 0.19, 0.16, 0.15, 0.31]]
    tops = []
    for k, row in enumerate(expected):
        weights = _ball_weights_by_hand(scenario.embeddings, scenario.w_query[k], scenario.w_key[k])
        assert np.round(weights, 2).tolist() == row, k
        order = np.argsort(weights)[::-1]
        # clearly on top, at the two decimals shown: at least 0.3, and 0.06 above the rest
        assert weights[order[0]] >= 0.3 and weights[order[0]] - weights[order[1]] >= 0.06, weights
        tops.append(scenario.tokens[int(order[0])])
    assert tops == ["dog", "ball", "the", "ball"]  # the heads of each group attend to different tokens
    assert np.all(np.abs(scenario.multi_head_trace().output[4]) >= 0.1)


def test_find_grouped_preset_reproduces_the_matrices() -> None:
    found = _load_tool(TOOLS / "find_grouped_preset.py").search()
    for name in ("w_query", "w_key", "w_value", "w_out"):
        assert np.array_equal(np.array(found[name]), getattr(GROUPED_DOG, name)), name


# -- the registry ------------------------------------------------------------------------------


def test_presets_by_name() -> None:
    assert sorted(PRESETS) == ["dog-chased-ball", "grouped-dog", "latent-dog", "learned", "masked-dog",
                               "raw-dot-product", "rope-dog", "softmax-saturation", "two-heads", "your-journey"]
    for name, scenario in PRESETS.items():
        assert preset(name) is scenario
        assert isinstance(scenario, Scenario)
    with pytest.raises(TypeError):
        PRESETS["mine"] = DOG_CHASED_BALL  # type: ignore[index]


@pytest.mark.parametrize("name", ["no-such-preset", "Dog-Chased-Ball", "", None, ["dog-chased-ball"]])
def test_unknown_preset_lists_the_known_ones(name: object) -> None:
    with pytest.raises(ScenarioError) as info:
        preset(name)  # type: ignore[arg-type]
    assert isinstance(info.value, ValueError)
    message = str(info.value)
    assert message.startswith("preset: unknown name")
    assert repr(name) in message
    for known in PRESETS:
        assert known in message


def test_learned_is_the_weights_the_lectures_training_run_learned() -> None:
    run = train_attention(0)
    learned = preset("learned")
    assert np.array_equal(learned.w_query, run.w_query[-1]) and np.array_equal(learned.w_key, run.w_key[-1])
    assert np.array_equal(learned.embeddings, run.embeddings) and np.array_equal(learned.w_value, run.w_value)
    assert learned.tokens == ("dog", "ball", "it", "it") and learned.query == 3  # the second "it": the ball
    assert (learned.precision, learned.rounded) == (2, True)
    assert int(np.argmax(learned.query_step().weights)) == 1


def test_latent_dog_is_dog_chased_ball_asking_about_ball() -> None:
    latent = preset("latent-dog")
    assert latent.tokens == DOG_CHASED_BALL.tokens and latent.query == 4
    assert np.array_equal(latent.embeddings, DOG_CHASED_BALL.embeddings)

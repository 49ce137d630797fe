"""The training run of W_Q and W_K: an exact gradient, checked by finite differences and plain loops.

The references here are written from the formulas, in plain Python (``math.exp``, loops over
indices, no numpy matmul): the loss ``−(1/m) Σ_queries Σ_j t_j log softmax(q kᵀ / √d_k)_j``,
its central finite differences, and the update ``W ← W − rate · ∂L/∂W``.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attention_math import (
    LossGradient,
    ScenarioError,
    TrainingTrace,
    gradient,
    preset,
    self_attention,
    train_attention,
)
from attention_math.training import EMBEDDINGS, QUERIES, REFERENTS, TARGETS, W_VALUE

FloatArray = npt.NDArray[np.float64]


def plain(matrix: npt.ArrayLike) -> list[list[float]]:
    """A matrix as lists of Python floats, for the loops below."""
    rows: list[list[float]] = np.asarray(matrix, dtype=np.float64).tolist()
    return rows


# -- references, from the formulas ---------------------------------------------------------------


def plain_scores(embeddings: npt.ArrayLike, weights_q: npt.ArrayLike, weights_k: npt.ArrayLike, i: int) -> list[float]:
    """``q_i · k_j / √d_k`` for every key ``j``, by loops."""
    x, w_query, w_key = plain(embeddings), plain(weights_q), plain(weights_k)
    d_in, d_k = len(w_query), len(w_query[0])
    q = [sum(x[i][a] * w_query[a][c] for a in range(d_in)) for c in range(d_k)]
    scores = []
    for row in x:
        k = [sum(row[a] * w_key[a][c] for a in range(d_in)) for c in range(d_k)]
        scores.append(sum(q[c] * k[c] for c in range(d_k)) / math.sqrt(d_k))
    return scores


def plain_row(scores: list[float]) -> list[float]:
    top = max(scores)
    exps = [math.exp(s - top) for s in scores]
    return [e / sum(exps) for e in exps]


def plain_loss(
    x: npt.ArrayLike, w_query: npt.ArrayLike, w_key: npt.ArrayLike, queries: Sequence[int], targets: npt.ArrayLike
) -> float:
    """The mean cross-entropy of the queries' rows against their targets."""
    total, target_rows = 0.0, plain(targets)
    for number, i in enumerate(queries):
        scores = plain_scores(x, w_query, w_key, i)
        top = max(scores)
        log_sum = top + math.log(sum(math.exp(s - top) for s in scores))
        total -= sum(t * (s - log_sum) for t, s in zip(target_rows[number], scores, strict=True))
    return total / len(queries)


def finite_differences(
    x: npt.ArrayLike, w_query: FloatArray, w_key: FloatArray, queries: Sequence[int], targets: npt.ArrayLike,
    h: float = 1e-5,
) -> tuple[FloatArray, FloatArray]:
    """Central differences ``(L(w + h) − L(w − h)) / 2h`` of :func:`plain_loss`, entry by entry."""
    found = []
    for which in (0, 1):
        grad = np.zeros_like(w_query if which == 0 else w_key)
        for index in np.ndindex(grad.shape):
            sides = []
            for sign in (1.0, -1.0):
                moved = [w_query.copy(), w_key.copy()]
                moved[which][index] += sign * h
                sides.append(plain_loss(x, moved[0], moved[1], queries, targets))
            grad[index] = (sides[0] - sides[1]) / (2 * h)
        found.append(grad)
    return found[0], found[1]


def relative_error(expected: FloatArray, actual: FloatArray) -> float:
    """The difference over the larger size, at least 1e-3: central differences with h = 1e-5 are good to about
    1e-11 in absolute terms, so a gradient of size 1e-6 cannot be matched to 1e-6 of itself (it failed so once)."""
    scale = max(float(np.linalg.norm(expected)), float(np.linalg.norm(actual)), 1e-3)
    return float(np.linalg.norm(expected - actual)) / scale


def plain_gradient(
    embeddings: npt.ArrayLike, weights_q: npt.ArrayLike, weights_k: npt.ArrayLike, queries: Sequence[int],
    target_rows: npt.ArrayLike,
) -> tuple[FloatArray, FloatArray]:
    """``∂L/∂W_Q[a, c] = Σ_i Σ_j (a_ij − t_ij) x_i[a] k_j[c] / (m √d_k)``, and likewise for keys, by loops."""
    x, w_query, w_key, targets = plain(embeddings), plain(weights_q), plain(weights_k), plain(target_rows)
    d_in, d_k, m = len(w_query), len(w_query[0]), len(queries)
    grad_query, grad_key = np.zeros((d_in, d_k)), np.zeros((d_in, d_k))
    keys = [[sum(row[a] * w_key[a][c] for a in range(d_in)) for c in range(d_k)] for row in x]
    for number, i in enumerate(queries):
        q = [sum(x[i][a] * w_query[a][c] for a in range(d_in)) for c in range(d_k)]
        row = plain_row(plain_scores(x, w_query, w_key, i))
        for j, weight in enumerate(row):
            pull = (weight - targets[number][j]) / (m * math.sqrt(d_k))
            for a in range(d_in):
                for c in range(d_k):
                    grad_query[a, c] += pull * x[i][a] * keys[j][c]
                    grad_key[a, c] += pull * x[j][a] * q[c]
    return grad_query, grad_key


@pytest.fixture(scope="module")
def run() -> TrainingTrace:
    return train_attention(seed=0)


# -- the gradient --------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", [0, 1, 2, 3, 4, 5])
def test_the_gradient_matches_central_differences_at_random_weights(seed: int) -> None:
    rng = np.random.default_rng(seed)
    w_query, w_key = rng.normal(size=(4, 2)), rng.normal(size=(4, 2))
    found = gradient(w_query, w_key)
    fd_query, fd_key = finite_differences(EMBEDDINGS, w_query, w_key, QUERIES, TARGETS)
    assert relative_error(fd_query, found.grad_query) < 1e-6
    assert relative_error(fd_key, found.grad_key) < 1e-6
    assert found.loss == pytest.approx(plain_loss(EMBEDDINGS, w_query, w_key, QUERIES, TARGETS), rel=1e-12)


@st.composite
def problems(draw: st.DrawFn) -> tuple[FloatArray, FloatArray, FloatArray, list[int], FloatArray]:
    """Any small problem: one token or several, d_k of 1 to 3, repeated queries, soft targets."""
    n, d_in, d_k = draw(st.integers(1, 5)), draw(st.integers(1, 4)), draw(st.integers(1, 3))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    queries = draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=3))
    if draw(st.booleans()):
        targets = rng.dirichlet(np.ones(n), size=len(queries))
    else:
        targets = np.eye(n)[rng.integers(0, n, size=len(queries))]
    return rng.uniform(-1, 1, (n, d_in)), rng.normal(size=(d_in, d_k)), rng.normal(size=(d_in, d_k)), queries, targets


@settings(max_examples=80, deadline=None)
@given(problems())
def test_the_gradient_matches_central_differences_on_any_small_problem(
    problem: tuple[FloatArray, FloatArray, FloatArray, list[int], FloatArray],
) -> None:
    x, w_query, w_key, queries, targets = problem
    found = gradient(w_query, w_key, embeddings=x, queries=queries, targets=targets)
    fd_query, fd_key = finite_differences(x, w_query, w_key, queries, targets)
    assert relative_error(fd_query, found.grad_query) < 1e-6
    assert relative_error(fd_key, found.grad_key) < 1e-6
    assert found.loss == pytest.approx(plain_loss(x, w_query, w_key, queries, targets), rel=1e-12, abs=1e-15)
    for number, i in enumerate(queries):
        np.testing.assert_allclose(found.rows[number], plain_row(plain_scores(x, w_query, w_key, i)), atol=1e-15)


def test_one_token_attends_only_to_itself_and_has_nothing_to_learn() -> None:
    found = gradient([[0.4], [-2.0]], [[1.0], [3.0]], embeddings=[[0.5, 0.7]], queries=[0], targets=[[1.0]])
    assert found.loss == 0.0 and found.rows.tolist() == [[1.0]]
    assert not np.any(found.grad_query) and not np.any(found.grad_key)


def test_huge_scores_give_a_finite_loss_and_the_plain_loops_gradient() -> None:
    rng = np.random.default_rng(7)
    w_query, w_key = 300 * rng.normal(size=(4, 2)), 300 * rng.normal(size=(4, 2))
    found = gradient(w_query, w_key)
    x, targets = EMBEDDINGS, TARGETS
    assert max(abs(s) for s in plain_scores(x, w_query, w_key, 2)) > 1_000  # far past exp's range
    assert math.isfinite(found.loss) and found.loss == pytest.approx(plain_loss(x, w_query, w_key, QUERIES, targets),
                                                                     rel=1e-9)
    loop_query, loop_key = plain_gradient(x, w_query, w_key, QUERIES, targets)
    np.testing.assert_allclose(found.grad_query, loop_query, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(found.grad_key, loop_key, rtol=1e-9, atol=1e-12)


def test_the_gradient_is_read_only_and_leaves_its_inputs_alone() -> None:
    w_query, w_key = np.full((4, 2), 0.3), np.arange(8.0).reshape(4, 2) / 10
    x, targets = EMBEDDINGS.copy(), TARGETS.copy()
    before = [w_query.copy(), w_key.copy(), x.copy(), targets.copy()]
    found = gradient(w_query, w_key, embeddings=x, queries=[2, 3], targets=targets)
    for array, copy in zip((w_query, w_key, x, targets), before, strict=True):
        assert np.array_equal(array, copy) and array.flags.writeable
    for array in (found.rows, found.grad_query, found.grad_key):
        assert not array.flags.writeable
        assert not any(np.shares_memory(array, given) for given in (w_query, w_key, x, targets))
    assert isinstance(found, LossGradient)


@pytest.mark.parametrize(
    ("arguments", "named"),
    [
        ({"w_query": np.zeros((3, 2))}, "w_query: expected 4 rows"),
        ({"w_key": np.zeros((4, 3))}, "w_key: expected 2 columns"),
        ({"w_query": [[1e200, 0.0]] * 4, "w_key": [[1e200, 0.0]] * 4}, "w_query: the scores overflow"),
        ({"w_query": [["a", 1]] * 4}, "w_query:"),
        ({"embeddings": [[np.nan] * 4] * 4}, "embeddings:"),
        ({"queries": []}, "queries: expected a non-empty list"),
        ({"queries": [2, 4]}, "queries: expected 0-based token rows from 0 to 3, got 4"),
        ({"queries": [True, 2]}, "queries:"),
        ({"queries": "23"}, "queries:"),
        ({"targets": np.eye(4)}, "targets: expected one row of 4 per query"),
        ({"targets": [[1.5, -0.5, 0, 0], [0, 1, 0, 0]]}, "targets: expected each row to be a distribution"),
        ({"targets": [[0.5, 0.4, 0, 0], [0, 1, 0, 0]]}, "targets: expected each row to be a distribution"),
    ],
)
def test_bad_arguments_to_the_gradient_are_named(arguments: dict[str, object], named: str) -> None:
    given = {"w_query": np.zeros((4, 2)), "w_key": np.zeros((4, 2)), **arguments}
    w_query, w_key = given.pop("w_query"), given.pop("w_key")
    with pytest.raises(ScenarioError, match="^" + named.replace("(", r"\(")) as caught:
        gradient(w_query, w_key, **given)  # type: ignore[arg-type]
    assert "\n" not in str(caught.value)


# -- the run -------------------------------------------------------------------------------------


def test_the_run_has_its_documented_shapes_and_arguments(run: TrainingTrace) -> None:
    assert (run.seed, run.steps, run.learning_rate) == (0, 60, 1.0)
    assert run.tokens == ("dog", "ball", "it", "it") and run.queries == (2, 3) and run.referents == (0, 1)
    assert run.w_query.shape == run.w_key.shape == (61, 4, 2)
    assert run.grad_query.shape == run.grad_key.shape == (60, 4, 2)
    assert run.rows.shape == (61, 2, 4) and run.losses.shape == (60,)
    assert np.array_equal(run.targets, [[1, 0, 0, 0], [0, 1, 0, 0]])
    assert np.array_equal(run.w_value, W_VALUE) and run.w_value.shape == (4, 2)


def test_the_embeddings_are_the_lectures_three_numbers_and_a_role() -> None:
    lecture = preset("raw-dot-product")  # it, dog, ball
    it, dog, ball = lecture.embeddings
    assert np.array_equal(EMBEDDINGS[:, :3], [dog, ball, it, it])
    assert EMBEDDINGS[:, 3].tolist() == [0.3, -0.3, 0.3, -0.3]  # subject +, object −
    raw = EMBEDDINGS @ EMBEDDINGS.T  # the module docstring's raw dot products of the first "it"
    assert raw[2].round(2).tolist() == [0.60, 0.42, 0.60, 0.42]
    assert plain_row(raw[2].tolist()) == pytest.approx([0.27, 0.23, 0.27, 0.23], abs=0.005)  # drowned


def test_training_starts_from_the_seeds_uniform_draw_w_query_first() -> None:
    for seed in (0, 11):
        rng = np.random.default_rng(seed)
        w_query, w_key = rng.uniform(-0.5, 0.5, (4, 2)), rng.uniform(-0.5, 0.5, (4, 2))
        trained = train_attention(seed, steps=1)
        assert np.array_equal(trained.w_query[0], w_query) and np.array_equal(trained.w_key[0], w_key)


def test_each_step_is_one_plain_gradient_descent_update(run: TrainingTrace) -> None:
    for t in range(run.steps):
        assert np.array_equal(run.w_query[t + 1], run.w_query[t] - run.learning_rate * run.grad_query[t])
        assert np.array_equal(run.w_key[t + 1], run.w_key[t] - run.learning_rate * run.grad_key[t])
        again = gradient(run.w_query[t], run.w_key[t])
        assert np.array_equal(again.grad_query, run.grad_query[t]) and np.array_equal(again.grad_key, run.grad_key[t])
        assert again.loss == run.losses[t] and np.array_equal(again.rows, run.rows[t])
    assert gradient(run.w_query[-1], run.w_key[-1]).loss == run.final_loss


@pytest.mark.parametrize("step", [0, 1, 17, 30, 59, 60])
def test_rows_and_losses_are_the_softmax_of_the_stored_weights_scores(run: TrainingTrace, step: int) -> None:
    x, w_query, w_key = EMBEDDINGS, run.w_query[step], run.w_key[step]
    for number, i in enumerate(QUERIES):
        np.testing.assert_allclose(run.rows[step, number], plain_row(plain_scores(x, w_query, w_key, i)),
                                   rtol=1e-12, atol=1e-15)
    loss = run.final_loss if step == run.steps else run.losses[step]
    assert loss == pytest.approx(plain_loss(x, w_query, w_key, QUERIES, TARGETS), rel=1e-12)


def test_the_loss_falls_from_about_log_4_to_a_tenth_of_it(run: TrainingTrace) -> None:
    assert run.losses[0] == pytest.approx(math.log(4), abs=0.05)  # an even row over four keys
    assert run.final_loss < run.losses[0] / 10
    assert np.all(np.diff([*run.losses, run.final_loss]) <= 0)  # seed 0 never goes up


def test_each_it_starts_on_dog_and_ball_alike_and_ends_on_its_noun(run: TrainingTrace) -> None:
    first, last = run.rows[0], run.rows[-1]
    for number, (noun, other) in enumerate(zip(REFERENTS, REFERENTS[::-1], strict=True)):
        assert abs(first[number, noun] - first[number, other]) < 0.1
        assert int(np.argmax(last[number])) == noun
        assert last[number, noun] > 0.5 and last[number, other] < 0.2


@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5, 8])
def test_other_seeds_start_elsewhere_and_still_learn(run: TrainingTrace, seed: int) -> None:
    other = train_attention(seed)
    assert not np.array_equal(other.w_query[0], run.w_query[0]) and not np.array_equal(other.rows, run.rows)
    assert other.final_loss < other.losses[0] / 5
    for number, (noun, rival) in enumerate(zip(REFERENTS, REFERENTS[::-1], strict=True)):
        assert other.rows[-1, number, noun] > 0.5 and other.rows[-1, number, rival] < 0.2


def test_the_same_seed_gives_the_same_numbers_bit_for_bit(run: TrainingTrace) -> None:
    again = train_attention(seed=0)
    for field in ("embeddings", "targets", "w_query", "w_key", "w_value", "grad_query", "grad_key", "rows", "losses"):
        assert np.array_equal(getattr(run, field), getattr(again, field)), field
    assert again.final_loss == run.final_loss


def test_a_notebooks_plain_loop_trains_the_same_run(run: TrainingTrace) -> None:
    # What the lecture's notebook restates, in a few lines of numpy: it must print the same numbers.
    x = np.array([[0.9, 0.1, 0.1, 0.3], [0.1, 0.9, 0.1, -0.3], [0.5, 0.5, 0.1, 0.3], [0.5, 0.5, 0.1, -0.3]])
    t = np.array([[1.0, 0, 0, 0], [0, 1.0, 0, 0]])
    rng = np.random.default_rng(0)
    wq, wk = rng.uniform(-0.5, 0.5, (4, 2)), rng.uniform(-0.5, 0.5, (4, 2))
    losses = []
    for _ in range(60):
        q, k = x[[2, 3]] @ wq, x @ wk
        s = q @ k.T / np.sqrt(2)
        a = np.exp(s - s.max(axis=1, keepdims=True))
        a /= a.sum(axis=1, keepdims=True)
        losses.append(-np.sum(t * np.log(a)) / 2)
        g = (a - t) / 2 / np.sqrt(2)
        wq, wk = wq - 1.0 * x[[2, 3]].T @ g @ k, wk - 1.0 * x.T @ g.T @ q
    np.testing.assert_allclose(losses, run.losses, rtol=1e-12)
    np.testing.assert_allclose(wq, run.w_query[-1], rtol=1e-12)
    np.testing.assert_allclose(wk, run.w_key[-1], rtol=1e-12)


def test_the_run_is_read_only(run: TrainingTrace) -> None:
    for field in ("embeddings", "targets", "w_query", "w_key", "w_value", "grad_query", "grad_key", "rows", "losses"):
        array = getattr(run, field)
        assert not array.flags.writeable, field
        assert array.base is None or not array.base.flags.writeable, field
        with pytest.raises(ValueError):
            array.flat[0] = 1.0
    with pytest.raises(AttributeError):
        run.final_loss = 0.0  # type: ignore[misc]


def test_the_learned_weights_run_through_the_lectures_pipeline(run: TrainingTrace) -> None:
    for step in (0, 30, 60):
        trace = run.trace_at(step)
        expected = self_attention(EMBEDDINGS, run.w_query[step], run.w_key[step], W_VALUE)
        assert np.array_equal(trace.weights, expected.weights)
        np.testing.assert_allclose(trace.weights[list(QUERIES)], run.rows[step], rtol=1e-12, atol=1e-15)
    assert np.array_equal(run.trace_at(-1).weights, run.trace_at(60).weights)
    assert np.array_equal(run.trace_at(-61).w_query, run.w_query[0])
    learned = run.scenario()
    assert learned.query == 3 and learned.precision == 2 and learned.title == "Learned by gradient descent"
    assert np.array_equal(learned.trace().weights, run.trace_at().weights)
    first = run.scenario(0, query=2)
    assert first.query_token == "it" and first.title == "After 0 steps of gradient descent"
    assert np.array_equal(first.w_key, run.w_key[0])
    # the first "it" takes its value from the dog: its context vector is near the dog's (0.9, 0.1)
    assert run.trace_at().context[2] == pytest.approx([0.9, 0.1], abs=0.05)


@pytest.mark.parametrize(
    ("arguments", "named"),
    [
        ({"steps": 0}, "steps: expected a whole number from 1 to 10,000, got 0"),
        ({"steps": -3}, "steps:"),
        ({"steps": 2.0}, "steps:"),
        ({"steps": True}, "steps:"),
        ({"steps": 10_001}, "steps:"),
        ({"learning_rate": 0}, "learning_rate: expected a positive finite number, got 0"),
        ({"learning_rate": -0.5}, "learning_rate:"),
        ({"learning_rate": math.nan}, "learning_rate:"),
        ({"learning_rate": math.inf}, "learning_rate:"),
        ({"learning_rate": "1"}, "learning_rate: expected a positive number"),
        ({"learning_rate": True}, "learning_rate:"),
        ({"learning_rate": 1e300}, r"learning_rate: 1e\+300 makes the weights overflow at step 1"),
        ({"seed": -1}, "seed:"),
        ({"seed": "0"}, "seed:"),
    ],
)
def test_bad_arguments_to_the_run_are_named(arguments: dict[str, object], named: str) -> None:
    with pytest.raises(ScenarioError, match="^" + named) as caught:
        train_attention(**arguments)  # type: ignore[arg-type]
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize("step", [61, -62, 1.0, True])
def test_a_step_outside_the_run_is_named(run: TrainingTrace, step: object) -> None:
    with pytest.raises(ScenarioError, match=r"^step: expected a whole number from 0 to 60"):
        run.trace_at(step)  # type: ignore[arg-type]
    with pytest.raises(ScenarioError, match=r"^step:"):
        run.scenario(step)  # type: ignore[arg-type]


def test_a_run_takes_well_under_a_second() -> None:
    times = []
    for _ in range(3):
        start = time.perf_counter()
        train_attention()
        times.append(time.perf_counter() - start)
    assert min(times) < 0.2


# -- what the learned lecture's scenes read: every step numbered, every step's loss ----------------------


@pytest.mark.parametrize(("seed", "steps", "rate"), [(0, 60, 1.0), (5, 40, 0.5), (3, 1, 2.0)])
def test_step_losses_are_each_steps_plain_loss_the_learned_ones_last(seed: int, steps: int, rate: float) -> None:
    run = train_attention(seed, steps=steps, learning_rate=rate)
    assert run.step_losses.shape == (steps + 1,) and run.step_numbers.shape == (steps + 1,)
    assert run.step_numbers.tolist() == [float(t) for t in range(steps + 1)]
    for t in sorted({0, 1, steps // 2, steps}):
        loss = plain_loss(EMBEDDINGS, run.w_query[t], run.w_key[t], QUERIES, TARGETS)
        assert run.step_losses[t] == pytest.approx(loss, rel=1e-12), t
    assert run.step_losses[-1] == run.final_loss and np.array_equal(run.step_losses[:-1], run.losses)
    for array in (run.step_losses, run.step_numbers):
        with pytest.raises(ValueError):
            array[0] = 1.0

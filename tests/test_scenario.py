"""Scenarios: validation (every ScenarioError names its field), sentences, TOML files, queries."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scenario_errors import assert_scenario_error

from attention_math import (
    Scenario,
    load_scenario,
    preset,
    resolve_query,
    scenario_from_mapping,
    self_attention,
)
from attention_math.scenario import MAX_RANDOM_SIZE

FAST = settings(max_examples=60, deadline=None)
TOKENS = ("The", "dog", "chased", "the", "ball")
X = [[0.2, 0.7, 0.8], [0.2, 0.9, 0.6], [0.2, 0.8, 1.0], [0.0, 0.2, 1.0], [0.7, 0.6, 0.9]]
WQ = [[0.7, 0.8], [0.1, 0.7], [0.2, 0.8]]
WK = [[0.8, 0.6], [0.0, 0.9], [0.7, 0.8]]
WV = [[-0.8, -1.0], [-1.0, -0.2], [0.7, 1.0]]
MATRICES = ("embeddings", "w_query", "w_key", "w_value")


def make(**changes: object) -> Scenario:
    """The lecture's default scenario, with some arguments replaced."""
    arguments: dict[str, object] = {
        "title": "t", "tokens": TOKENS, "embeddings": X, "w_query": WQ, "w_key": WK, "w_value": WV,
    }
    arguments.update(changes)
    return Scenario(**arguments)  # type: ignore[arg-type]


def write(tmp_path: Path, text: str, name: str = "scenario.toml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


# -- a valid scenario --------------------------------------------------------------------------


@pytest.mark.parametrize("query", [0, 4])
def test_simplified_is_x_in_every_role_unscaled(query: int) -> None:
    scenario = make(query=query, precision=3)
    simple = scenario.simplified()
    assert (simple.title, simple.tokens, simple.query, simple.precision) == ("t", TOKENS, query, 3)
    assert np.array_equal(simple.embeddings, scenario.embeddings)
    for name in ("w_query", "w_key", "w_value"):
        assert getattr(simple, name).tolist() == [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]
    assert not simple.scaled and (simple.d_k, simple.d_v) == (3, 3)
    trace = simple.trace()
    # the raw dot products x_i · x_j, summed by hand
    for i in range(5):
        for j in range(5):
            assert trace.scores[i, j] == pytest.approx(sum(a * b for a, b in zip(X[i], X[j], strict=True)), rel=1e-12)
    expected = self_attention(X, np.eye(3), np.eye(3), np.eye(3), scaled=False)
    np.testing.assert_allclose(trace.weights, expected.weights, rtol=1e-12)
    np.testing.assert_allclose(trace.context, expected.weights @ np.array(X), rtol=1e-12)
    # the original is untouched
    assert scenario.w_key.tolist() == WK and scenario.scaled



def test_scenario_keeps_its_inputs_and_derives_sizes() -> None:
    scenario = make(query=2, precision=3)
    assert scenario.tokens == TOKENS
    assert isinstance(scenario.tokens, tuple)
    for name, given_matrix in zip(MATRICES, (X, WQ, WK, WV), strict=True):
        matrix = getattr(scenario, name)
        assert matrix.tolist() == given_matrix
        assert matrix.dtype == np.float64 and not matrix.flags.writeable
    assert (scenario.n_tokens, scenario.d_in, scenario.d_k, scenario.d_v) == (5, 3, 2, 2)
    assert (scenario.query, scenario.query_token, scenario.precision, scenario.scaled) == (2, "chased", 3, True)
    assert make().query == 4  # default: the last token
    expected = self_attention(X, WQ, WK, WV)
    assert np.array_equal(scenario.trace().weights, expected.weights)
    assert np.array_equal(scenario.query_step().weights, expected.weights[2])
    assert scenario.query_step().index == 2
    causal = scenario.trace(causal=True)
    assert causal.causal and np.array_equal(causal.weights, self_attention(X, WQ, WK, WV, causal=True).weights)
    assert not make(scaled=False).trace().scaled


def test_scenario_is_frozen() -> None:
    scenario = make()
    with pytest.raises(dataclasses.FrozenInstanceError):
        scenario.query = 1  # type: ignore[misc]
    with pytest.raises(ValueError, match="read-only"):
        scenario.embeddings[0, 0] = 5.0


def test_scenario_does_not_share_memory_with_array_inputs() -> None:
    embeddings = np.array(X)
    scenario = make(embeddings=embeddings)
    embeddings[0, 0] = 99.0
    assert scenario.embeddings[0, 0] == 0.2
    assert scenario.trace().embeddings[0, 0] == 0.2


def test_to_dict_round_trips_through_scenario_from_mapping() -> None:
    scenario = make(query=1, precision=4, scaled=False)
    data = scenario.to_dict()
    assert data["query"] == 2  # files count from 1
    again = scenario_from_mapping(data)
    assert again.to_dict() == data
    assert np.array_equal(again.trace().weights, scenario.trace().weights)


# -- with_query and resolve_query ---------------------------------------------------------------


@pytest.mark.parametrize(("spec", "row"), [(3, 2), ("3", 2), (" 3 ", 2), ("chased", 2), (1, 0), ("The", 0), ("the", 3)])
def test_with_query_accepts_number_digits_or_token(spec: int | str, row: int) -> None:
    scenario = make()
    moved = scenario.with_query(spec)
    assert moved.query == row
    assert moved.query_token == TOKENS[row]
    assert np.array_equal(moved.query_step().weights, scenario.trace().weights[row])
    assert scenario.query == 4  # the original is unchanged
    assert np.array_equal(moved.trace().weights, scenario.trace().weights)


@pytest.mark.parametrize(
    ("spec", "words"),
    [
        (0, ("1 to 5",)),
        (6, ("1 to 5",)),
        (-1, ("1 to 5",)),
        ("0", ("1 to 5",)),
        ("6", ("1 to 5",)),
        ("cat", ("'cat'", "'ball'")),
        ("", ()),
        ("Ball", ("'Ball'",)),
        (True, ()),
        (2.0, ()),
        (None, ()),
        ("²", ("'²'",)),  # a digit to str.isdigit, not to int()
    ],
)
def test_with_query_rejects_bad_queries(spec: object, words: tuple[str, ...]) -> None:
    assert_scenario_error(lambda: make().with_query(spec), "query", *words)  # type: ignore[arg-type]


def test_ambiguous_query_token_names_its_positions() -> None:
    scenario = Scenario.from_sentence("a b a")
    assert_scenario_error(lambda: scenario.with_query("a"), "query", "'a'", "1, 3", "number")
    assert scenario.with_query("b").query == 1
    assert scenario.with_query(3).query == 2


def test_resolve_query_directly() -> None:
    assert resolve_query(TOKENS, 5) == 4
    assert resolve_query(TOKENS, np.int64(2)) == 1
    assert resolve_query(["7", "x"], "2") == 1  # digits are a number, even when a token is digits
    assert_scenario_error(lambda: resolve_query(["7", "x"], "7"), "query", "1 to 2")


# -- invalid scenarios: each names its field ---------------------------------------------------


@pytest.mark.parametrize(
    ("changes", "field", "words"),
    [
        pytest.param({"w_query": [[0.1, 0.2], [0.3, 0.4]]}, "w_query", ("3 rows", "2"), id="w_query rows != d_in"),
        pytest.param({"w_value": [[0.1], [0.2]]}, "w_value", ("3 rows",), id="w_value rows != d_in"),
        pytest.param({"w_key": [[0.1], [0.2], [0.3]]}, "w_key", ("2 columns", "w_query"), id="w_key cols != w_query"),
        pytest.param({"embeddings": [*X[:4], [0.1, 0.2]]}, "embeddings", ("ragged", "row 5"), id="ragged rows"),
        pytest.param({"w_key": [[0.1, 0.2], [0.3], [0.4, 0.5]]}, "w_key", ("ragged", "row 2"), id="ragged w_key"),
        pytest.param({"w_query": [[0.1, float("nan")], *WQ[1:]]}, "w_query", ("finite", "row 1, column 2"), id="nan"),
        pytest.param({"w_value": [*WV[:2], [float("inf"), 0.1]]}, "w_value", ("finite", "row 3, column 1"), id="inf"),
        pytest.param({"embeddings": [[0.1, 0.2, -np.inf], *X[1:]]}, "embeddings", ("finite",), id="-inf"),
        pytest.param({"w_key": [[0.1, "0.2"], *WK[1:]]}, "w_key", ("number", "'0.2'"), id="string entry"),
        pytest.param({"w_key": [[0.1, True], *WK[1:]]}, "w_key", ("number", "True"), id="boolean entry"),
        pytest.param({"w_key": np.ones((3, 2), dtype=bool)}, "w_key", ("numbers", "bool"), id="boolean array"),
        pytest.param({"w_key": np.array([["a", "b"]] * 3)}, "w_key", ("numbers",), id="string array"),
        pytest.param({"w_query": [[None, 0.1], *WQ[1:]]}, "w_query", ("number", "None"), id="None entry"),
        pytest.param({"w_query": [[1j, 0.1], *WQ[1:]]}, "w_query", ("number",), id="complex entry"),
        pytest.param({"embeddings": []}, "embeddings", ("empty",), id="empty matrix"),
        pytest.param({"w_value": [[], [], []]}, "w_value", ("empty",), id="empty rows"),
        pytest.param({"w_query": np.zeros((3, 0))}, "w_query", ("empty",), id="empty array"),
        pytest.param({"embeddings": "0.1 0.2"}, "embeddings", ("matrix",), id="string matrix"),
        pytest.param({"embeddings": [0.1, 0.2, 0.3]}, "embeddings", ("row 1",), id="flat list"),
        pytest.param({"embeddings": np.ones(3)}, "embeddings", ("2-d",), id="1-d array"),
        pytest.param({"embeddings": 5}, "embeddings", ("matrix",), id="a number"),
        pytest.param({"tokens": TOKENS[:4]}, "tokens", ("one token per row", "(5)", "4"), id="too few tokens"),
        pytest.param({"tokens": (*TOKENS, "x")}, "tokens", ("one token per row", "6"), id="too many tokens"),
        pytest.param({"tokens": "The dog chased the ball"}, "tokens", ("list of strings",), id="tokens a string"),
        pytest.param({"tokens": ("The", "dog", " ", "the", "ball")}, "tokens", ("token 3",), id="blank token"),
        pytest.param({"tokens": ("The", "dog", 3, "the", "ball")}, "tokens", ("token 3",), id="non-text token"),
        pytest.param({"title": None}, "title", ("text",), id="title"),
        pytest.param({"query": 5}, "query", ("0 to 4", "5"), id="query too large"),
        pytest.param({"query": -1}, "query", ("0 to 4",), id="query negative"),
        pytest.param({"query": True}, "query", ("index",), id="query boolean"),
        pytest.param({"query": "ball"}, "query", ("index",), id="query text"),
        pytest.param({"precision": 5}, "precision", ("0 to 4", "5"), id="precision too large"),
        pytest.param({"precision": -1}, "precision", ("0 to 4",), id="precision negative"),
        pytest.param({"precision": True}, "precision", (), id="precision boolean"),
        pytest.param({"precision": 2.0}, "precision", (), id="precision float"),
        pytest.param({"scaled": "yes"}, "scaled", ("true or false",), id="scaled not boolean"),
        pytest.param({"scaled": 1}, "scaled", ("true or false",), id="scaled a number"),
    ],
)
def test_invalid_scenario_names_the_field(changes: dict[str, object], field: str, words: tuple[str, ...]) -> None:
    assert_scenario_error(lambda: make(**changes), field, *words)


@pytest.mark.parametrize(
    "changes",
    [
        pytest.param({"embeddings": [[1e308, 1e308, 1e308], *X[1:]]}, id="1e308 embedding"),
        pytest.param({"w_query": [[1e308, 1e308]] * 3}, id="1e308 weights"),
        pytest.param({"w_value": [[1.7e308, 1.7e308]] * 3}, id="values overflow"),
        pytest.param({"embeddings": [[1e155, 0.0, 0.0], *X[1:]], "w_key": [[1e155, 0.0]] * 3}, id="products"),
        pytest.param(
            {
                "embeddings": [[1.0, 0.0, 0.0], [-1.0, 0.0, 0.0], *X[2:]],
                "w_query": [[1.7e308, 0.0], [0.0, 0.0], [0.0, 0.0]],
                "w_key": [[1.0, 0.0], [0.0, 0.0], [0.0, 0.0]],
            },
            id="scores spread beyond float64",
        ),
    ],
)
def test_overflow_is_a_scenario_error_naming_a_field(changes: dict[str, object]) -> None:
    assert_scenario_error(lambda: make(**changes), "embeddings", "too large")


@pytest.mark.parametrize("big", [10**309, -(10**400)], ids=["10**309", "-10**400"])
def test_integers_beyond_float64_are_a_scenario_error(big: int) -> None:
    assert_scenario_error(lambda: make(w_value=[[big, 0], *WV[1:]]), "w_value", "finite", "row 1, column 1")


# -- sentences ---------------------------------------------------------------------------------


@FAST
@given(
    st.lists(st.text(st.characters(categories=("L", "N", "P")), min_size=1, max_size=6), min_size=1, max_size=8),
    st.sampled_from([" ", "  ", "\t", "\n", " \t "]),
    st.integers(0, 2**32),
    st.integers(1, 5),
    st.integers(1, 4),
)
def test_from_sentence_is_reproducible_one_decimal_and_tokenized_by_whitespace(
    words: list[str], gap: str, seed: int, d_model: int, d_k: int
) -> None:
    sentence = gap + gap.join(words) + gap
    scenario = Scenario.from_sentence(sentence, seed=seed, d_model=d_model, d_k=d_k)
    again = Scenario.from_sentence(sentence, seed=seed, d_model=d_model, d_k=d_k)
    assert scenario.tokens == tuple(words)
    assert scenario.title == " ".join(words)
    assert scenario.query == len(words) - 1
    assert scenario.embeddings.shape == (len(words), d_model)
    for name in MATRICES[1:]:
        assert getattr(scenario, name).shape == (d_model, d_k)
    for name in MATRICES:
        matrix = getattr(scenario, name)
        assert np.array_equal(matrix, getattr(again, name)), name
        tenths = matrix * 10
        assert np.all(np.abs(tenths - np.round(tenths)) < 1e-9), name
        assert np.all(np.abs(matrix) <= 1.0), name
        assert not np.any(np.signbit(matrix[matrix == 0])), name  # no -0.0 on screen
    rows = scenario.embeddings
    if len(words) <= 20:  # a d_model of 1 has 20 rows to give
        assert len({row.tobytes() for row in rows}) == len(words), "two words share an embedding"
        assert rows.any(axis=1).all(), "an embedding of zeros"


def test_from_sentence_never_gives_two_words_one_embedding() -> None:
    # seed 11 drew (-0.9, -0.7, 0.9) for both "cat" and "sat": one point in every space, tied scores
    sentence = "the cat sat on the mat and then the dog ran to the red ball"
    scenario = Scenario.from_sentence(sentence, seed=11)
    assert len({row.tobytes() for row in scenario.embeddings}) == 15
    assert scenario.embeddings[1].tolist() == [-0.9, -0.7, 0.9]  # the first of the two is kept
    assert scenario.embeddings[2].tolist() != [-0.9, -0.7, 0.9]
    first = np.round(np.random.default_rng(11).uniform(-1.0, 1.0, size=(15, 3)), 1) + 0.0
    kept = [i for i in range(15) if i != 2]
    assert np.array_equal(scenario.embeddings[kept], first[kept])  # every other row as drawn
    drawn_after = Scenario.from_sentence(sentence, seed=11)
    rng = np.random.default_rng(11)
    rng.uniform(-1.0, 1.0, size=(15, 3))
    assert np.array_equal(drawn_after.w_query, np.round(rng.uniform(-1.0, 1.0, size=(3, 2)), 1) + 0.0)  # W_Q too
    one = Scenario.from_sentence(" ".join(f"w{i}" for i in range(20)), seed=0, d_model=1)
    assert sorted(one.embeddings[:, 0].tolist()) == [v / 10 for v in range(-10, 11) if v]  # all 20 non-zero rows


def test_from_sentence_depends_on_the_seed_and_keeps_punctuation() -> None:
    a = Scenario.from_sentence("Hello, world! How are you?", seed=1)
    b = Scenario.from_sentence("Hello, world! How are you?", seed=2)
    assert a.tokens == ("Hello,", "world!", "How", "are", "you?")
    assert not np.array_equal(a.embeddings, b.embeddings)
    assert (a.d_in, a.d_k, a.d_v) == (3, 2, 2)
    named = Scenario.from_sentence("a b c", query="b", title="Mine", precision=4)
    assert (named.query, named.title, named.precision) == (1, "Mine", 4)
    assert Scenario.from_sentence("a b c", query=1).query == 0
    assert Scenario.from_sentence("a b c", query="3").query == 2


@pytest.mark.parametrize(
    ("arguments", "field"),
    [
        ({"sentence": ""}, "sentence"),
        ({"sentence": "  \t\n"}, "sentence"),
        ({"sentence": 5}, "sentence"),
        ({"sentence": "a b", "d_k": 0}, "d_k"),
        ({"sentence": "a b", "d_k": MAX_RANDOM_SIZE + 1}, "d_k"),
        ({"sentence": "a b", "d_k": 1.5}, "d_k"),
        ({"sentence": "a b", "d_model": 0}, "d_model"),
        ({"sentence": "a b", "seed": -1}, "seed"),
        ({"sentence": "a b", "seed": "1"}, "seed"),
        ({"sentence": "a b", "seed": True}, "seed"),
        ({"sentence": "a b", "query": 3}, "query"),
        ({"sentence": "a b", "query": "c"}, "query"),
        ({"sentence": "a b", "precision": 9}, "precision"),
        ({"sentence": "a b", "precision": 5}, "precision"),
        ({"sentence": "a b", "d_v": 0}, "d_v"),
        ({"sentence": "a b", "d_v": MAX_RANDOM_SIZE + 1}, "d_v"),
        ({"sentence": "a b", "d_v": "2"}, "d_v"),
        ({"sentence": "a b", "heads": 0}, "heads"),
        ({"sentence": "a b", "heads": 1.0}, "heads"),
        ({"sentence": "a b", "title": 7}, "title"),
    ],
)
def test_from_sentence_rejects_bad_arguments(arguments: dict[str, object], field: str) -> None:
    sentence = arguments.pop("sentence")
    assert_scenario_error(lambda: Scenario.from_sentence(sentence, **arguments), field)  # type: ignore[arg-type]


def test_from_sentence_draws_values_of_their_own_size() -> None:
    same = Scenario.from_sentence("the cat sat", seed=5, d_k=2)
    wide = Scenario.from_sentence("the cat sat", seed=5, d_k=2, d_v=3)
    narrow = Scenario.from_sentence("the cat sat", seed=5, d_k=2, d_v=1)
    assert (wide.d_k, wide.d_v, narrow.d_v, same.d_v) == (2, 3, 1, 2)
    assert wide.trace().context.shape == (3, 3) and narrow.trace().values.shape == (3, 1)
    for name in ("embeddings", "w_query", "w_key"):  # drawn before W_V: the same numbers
        assert np.array_equal(getattr(wide, name), getattr(same, name)), name
    # d_v = d_k draws exactly what leaving it out draws
    assert Scenario.from_sentence("the cat sat", seed=5, d_v=2).to_dict() == same.to_dict()
    assert np.array_equal(wide.trace().weights, same.trace().weights)  # W_V does not touch the weights


# -- precision: the default and "rounded" ------------------------------------------------------


@pytest.mark.parametrize(
    ("embeddings", "weights", "input_decimals", "exact", "precision"),
    [
        pytest.param([[1.0, 2.0], [3.0, -4.0]], [[1.0], [2.0]], 0, 0, 2, id="whole numbers: 2 at least"),
        pytest.param([[0.1, 0.2], [0.3, 0.4]], [[0.5], [0.6]], 1, 2, 2, id="one decimal: 2"),
        pytest.param([[0.1 + 0.2, 0.7], [0.3, 0.4]], [[0.5], [0.6]], 1, 2, 2, id="binary noise forgiven"),
        pytest.param([[0.43, 0.15], [0.55, 0.87]], [[0.5], [0.6]], 2, 3, 3, id="two and one: 3"),
        pytest.param([[0.43, 0.15], [0.55, 0.87]], [[0.25], [0.5]], 2, 4, 4, id="two and two: 4"),
        pytest.param([[0.43, 0.15], [0.55, 0.87]], [[0.2961], [0.5]], 4, 6, 4, id="four decimals: 4 at most"),
        pytest.param([[1 / 3, 0.0], [0.0, 1.0]], [[1.0], [0.5]], 6, 7, 4, id="a third: 6 or more"),
    ],
)
def test_the_default_precision_shows_the_inputs_products(
    embeddings: list[list[float]], weights: list[list[float]], input_decimals: int, exact: int, precision: int
) -> None:
    scenario = Scenario("p", ["a", "b"], embeddings, weights, weights, weights)
    assert (scenario.input_decimals, scenario.exact_decimals, scenario.precision) == (input_decimals, exact, precision)
    assert scenario.rounded == (exact > 4)
    # at the exact precision every projection term x·w, and so every entry of Q, is shown exactly
    if not scenario.rounded:
        terms = scenario.embeddings[:, :, None] * scenario.w_query[None, :, :]
        scale = 10.0**scenario.precision
        assert np.allclose(terms * scale, np.round(terms * scale), atol=1e-6)
        assert np.allclose(scenario.trace().queries * scale, np.round(scenario.trace().queries * scale), atol=1e-6)


def test_a_chosen_precision_is_kept_and_rounded_says_when_it_is_too_few() -> None:
    for precision in range(5):
        scenario = make(precision=precision)
        assert scenario.precision == precision
        assert scenario.rounded == (precision < 2)  # one-decimal inputs: products have 2 decimals
    assert make().precision == 2 and not make().rounded
    assert make(precision=None).precision == 2
    assert replace_query(make(precision=3)).precision == 3  # kept through with_query and simplified
    assert make(precision=3).simplified().precision == 3


def replace_query(scenario: Scenario) -> Scenario:
    return scenario.with_query(1)


def test_input_decimals_counts_every_weight_matrix() -> None:
    scenario = make(w_value=[[-0.85, -1.0], [-1.0, -0.2], [0.7, 1.0]])
    assert (scenario.input_decimals, scenario.exact_decimals, scenario.precision) == (2, 3, 3)


# -- mappings and TOML files -------------------------------------------------------------------

EXPLICIT_TOML = """\
title = "Two cats"
tokens = ["the", "cat", "sat"]
embeddings = [
  [0.1, 0.2],
  [0.3, -0.4],
  [1, 0.5],
]
w_query = [[0.5], [1.0]]
w_key = [[1.0], [-0.5]]
w_value = [[0.2, 0.1, 0.0], [0.3, 0.0, -1.0]]
query = "cat"
precision = 3
scaled = false
"""

SENTENCE_TOML = """\
# The numbers are drawn from the seed.
sentence = "the cat sat on the mat"
seed = 11
d_model = 4
d_k = 3
query = 2
title = "Cats"
precision = 1
"""


def asking(query_line: str) -> str:
    """EXPLICIT_TOML with another query line."""
    return EXPLICIT_TOML.replace('query = "cat"', query_line)


def test_load_explicit_toml(tmp_path: Path) -> None:
    scenario = load_scenario(write(tmp_path, EXPLICIT_TOML))
    assert scenario.title == "Two cats"
    assert scenario.tokens == ("the", "cat", "sat")
    assert scenario.embeddings.tolist() == [[0.1, 0.2], [0.3, -0.4], [1.0, 0.5]]
    assert scenario.w_query.tolist() == [[0.5], [1.0]]
    assert scenario.w_key.tolist() == [[1.0], [-0.5]]
    assert scenario.w_value.tolist() == [[0.2, 0.1, 0.0], [0.3, 0.0, -1.0]]
    assert (scenario.query, scenario.precision, scenario.scaled) == (1, 3, False)
    assert (scenario.d_k, scenario.d_v) == (1, 3)
    expected = self_attention(scenario.embeddings, scenario.w_query, scenario.w_key, scenario.w_value, scaled=False)
    assert np.array_equal(scenario.trace().weights, expected.weights)
    # A path given as text works too, and the file's query can be a number from 1.
    assert load_scenario(str(write(tmp_path, asking("query = 3"), "b.toml"))).query == 2


def test_explicit_mapping_defaults() -> None:
    scenario = scenario_from_mapping({"tokens": ["a", "b"], "embeddings": [[1.0], [2.0]],
                                      "w_query": [[1.0]], "w_key": [[1.0]], "w_value": [[1.0]]})
    assert (scenario.title, scenario.query, scenario.precision, scenario.scaled) == ("a b", 1, 2, True)


def test_load_sentence_toml(tmp_path: Path) -> None:
    scenario = load_scenario(write(tmp_path, SENTENCE_TOML))
    expected = Scenario.from_sentence("the cat sat on the mat", seed=11, d_model=4, d_k=3, query=2, title="Cats",
                                      precision=1)
    assert scenario.tokens == ("the", "cat", "sat", "on", "the", "mat")
    assert (scenario.title, scenario.query, scenario.precision, scenario.scaled) == ("Cats", 1, 1, True)
    for name in MATRICES:
        assert np.array_equal(getattr(scenario, name), getattr(expected, name)), name
    unscaled = load_scenario(write(tmp_path, SENTENCE_TOML + "scaled = false\n", "u.toml"))
    assert not unscaled.scaled and not unscaled.trace().scaled
    assert np.array_equal(unscaled.embeddings, scenario.embeddings)
    assert load_scenario(write(tmp_path, 'sentence = "x y z"\n', "plain.toml")).to_dict() == (
        Scenario.from_sentence("x y z").to_dict()
    )


@pytest.mark.parametrize(
    ("text", "field", "words"),
    [
        pytest.param('sentense = "a b"\n', "sentense", ("unknown key", "did you mean 'sentence'"), id="typo"),
        pytest.param(EXPLICIT_TOML + "w_qeury = 1\n", "w_qeury", ("did you mean 'w_query'",), id="typo explicit"),
        pytest.param('zzz = 1\nsentence = "a"\n', "zzz", ("unknown key",), id="unknown key"),
        pytest.param('sentence = "a b"\ntokens = ["a", "b"]\n', "tokens", ("not allowed with 'sentence'",),
                     id="explicit key with sentence"),
        pytest.param(EXPLICIT_TOML + "seed = 3\n", "seed", ("only allowed together with 'sentence'",),
                     id="sentence key without sentence"),
        pytest.param(EXPLICIT_TOML.replace("w_key = [[1.0], [-0.5]]\n", ""), "w_key", ("missing",), id="missing"),
        pytest.param('title = "x"\n', "tokens", ("missing",), id="nothing"),
        pytest.param(asking('query = "dog"'), "query", ("'dog'",), id="unknown query token"),
        pytest.param(asking("query = 4"), "query", ("1 to 3",), id="query out of range"),
        pytest.param(asking("query = 0"), "query", ("1 to 3",), id="query zero"),
        pytest.param(asking('query = "sat"').replace('"the"', '"sat"'), "query", ("1, 3",),
                     id="ambiguous query token"),
        pytest.param(EXPLICIT_TOML.replace('query = "cat"\n', "").replace('"sat"]', "4]"), "tokens", ("token 3",),
                     id="token not text"),
        pytest.param(EXPLICIT_TOML.replace('"sat"]', "4]"), "tokens", ("strings",), id="token not text with query"),
        pytest.param(EXPLICIT_TOML.replace('"sat"]', "]"), "tokens", ("one token per row",), id="tokens != rows"),
        pytest.param(EXPLICIT_TOML.replace("[1, 0.5]", "[1]"), "embeddings", ("ragged", "row 3"), id="ragged"),
        pytest.param(EXPLICIT_TOML.replace("[1, 0.5]", "[nan, 0.5]"), "embeddings", ("finite",), id="nan"),
        pytest.param(EXPLICIT_TOML.replace("[1, 0.5]", "[-inf, 0.5]"), "embeddings", ("finite",), id="inf"),
        pytest.param(EXPLICIT_TOML.replace("[1, 0.5]", '["1", 0.5]'), "embeddings", ("number",), id="string"),
        pytest.param(EXPLICIT_TOML.replace("[1, 0.5]", "[true, 0.5]"), "embeddings", ("number",), id="boolean"),
        pytest.param(EXPLICIT_TOML.replace("w_query = [[0.5], [1.0]]", "w_query = []"), "w_query", ("empty",),
                     id="empty"),
        pytest.param(EXPLICIT_TOML.replace("w_key = [[1.0], [-0.5]]", "w_key = [[1.0, 0.0], [-0.5, 0.0]]"), "w_key",
                     ("columns",), id="w_key cols != w_query"),
        pytest.param(EXPLICIT_TOML.replace("w_query = [[0.5], [1.0]]", "w_query = [[0.5]]"), "w_query",
                     ("2 rows",), id="w_query rows != d_in"),
        pytest.param(EXPLICIT_TOML.replace("[1, 0.5]", "[1e308, 1e308]").replace("[[0.5], [1.0]]", "[[1e10], [1e10]]"),
                     "embeddings", ("too large",), id="overflow"),
        pytest.param(EXPLICIT_TOML.replace("[1, 0.5]", "[1" + "0" * 400 + ", 0.5]"), "embeddings", ("finite",),
                     id="integer beyond float64"),
        pytest.param(EXPLICIT_TOML.replace("precision = 3", "precision = 12"), "precision", (), id="precision"),
        pytest.param(EXPLICIT_TOML.replace("scaled = false", 'scaled = "no"'), "scaled", (), id="scaled"),
        pytest.param(EXPLICIT_TOML.replace('"Two cats"', "2"), "title", (), id="title"),
        pytest.param('sentence = "a b"\nd_k = 0\n', "d_k", ("1 to 64",), id="sentence d_k 0"),
        pytest.param('sentence = "a b"\nd_model = 65\n', "d_model", ("1 to 64",), id="sentence d_model 65"),
        pytest.param('sentence = "a b"\nseed = -3\n', "seed", (), id="sentence seed"),
        pytest.param('sentence = ""\n', "sentence", (), id="empty sentence"),
        pytest.param('sentence = ["a"]\n', "sentence", (), id="sentence not text"),
        pytest.param('sentence = "a b"\nquery = "c"\n', "query", ("'c'",), id="sentence query"),
        pytest.param('sentence = "a b"\nscaled = 0\n', "scaled", (), id="sentence scaled"),
    ],
)
def test_invalid_toml_scenarios_name_the_field(tmp_path: Path, text: str, field: str, words: tuple[str, ...]) -> None:
    assert_scenario_error(lambda: load_scenario(write(tmp_path, text)), field, *words)


def test_invalid_toml_reports_line_and_column(tmp_path: Path) -> None:
    path = write(tmp_path, 'title = "x"\ntokens = ["a", "b"\nembeddings = 3\n')
    message = assert_scenario_error(lambda: load_scenario(path), "scenario", "invalid TOML", str(path))
    assert "line 3" in message and "column" in message
    message = assert_scenario_error(lambda: load_scenario(write(tmp_path, "a = = 1\n", "b.toml")), "scenario")
    assert "line 1, column 5" in message


def test_invalid_toml_at_the_end_of_the_file_still_has_line_and_column(tmp_path: Path) -> None:
    # tomllib says only "(at end of document)" for these
    unclosed = write(tmp_path, 'title = "x"\ntokens = ["a", "b"\n')
    message = assert_scenario_error(lambda: load_scenario(unclosed), "scenario")
    assert "Unclosed array (at end of document, line 3, column 1)" in message
    message = assert_scenario_error(lambda: load_scenario(write(tmp_path, 'title = "x', "b.toml")), "scenario")
    assert "(at end of document, line 1, column 11)" in message


def test_missing_file_directory_and_non_utf8(tmp_path: Path) -> None:
    missing = tmp_path / "nope.toml"
    assert_scenario_error(lambda: load_scenario(missing), "scenario", "no such file", str(missing))
    assert_scenario_error(lambda: load_scenario(tmp_path), "scenario", "directory", str(tmp_path))
    latin1 = tmp_path / "latin1.toml"
    latin1.write_bytes('title = "café"\nsentence = "a b"\n'.encode("latin-1"))
    assert_scenario_error(lambda: load_scenario(latin1), "scenario", "UTF-8", "byte 13")
    utf8 = write(tmp_path, 'title = "café"\nsentence = "a b"\n', "utf8.toml")
    assert load_scenario(utf8).title == "café"


def test_scenario_from_mapping_checks_keys_before_anything_else() -> None:
    assert_scenario_error(lambda: scenario_from_mapping({"tokenz": ["a"]}), "tokenz", "did you mean 'tokens'")
    assert_scenario_error(lambda: scenario_from_mapping({"qwerty": 1}), "qwerty", "unknown key")
    assert_scenario_error(lambda: scenario_from_mapping({}), "tokens", "missing")
    assert_scenario_error(
        lambda: scenario_from_mapping({"tokens": "ab", "embeddings": [[1.0]], "w_query": [[1.0]], "w_key": [[1.0]],
                                       "w_value": [[1.0]]}),
        "tokens", "list of strings",
    )


def test_presets_are_scenarios() -> None:
    assert isinstance(preset("dog-chased-ball"), Scenario)

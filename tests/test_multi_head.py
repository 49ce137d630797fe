"""Multi-head attention: the function against a plain loop, its errors, and scenarios with heads."""

from __future__ import annotations

import dataclasses
import math
import tomllib
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scenario_errors import assert_scenario_error
from strategies import FAST

from attention_math import (
    MultiHeadTrace,
    Scenario,
    format_walkthrough,
    load_scenario,
    multi_head_attention,
    preset,
    scenario_from_mapping,
    scenario_to_toml,
    self_attention,
    walkthrough_data,
)

X = [[0.2, 0.7, 0.8], [0.2, 0.9, 0.6], [0.2, 0.8, 1.0]]
WQ = [[[0.7, 0.8], [0.1, 0.7], [0.2, 0.8]], [[0.5, -0.1], [0.3, 0.0], [-0.4, 0.9]]]
WK = [[[0.8, 0.6], [0.0, 0.9], [0.7, 0.8]], [[-0.2, 0.4], [0.6, 0.1], [0.3, -0.5]]]
WV = [[[-0.8, -1.0, 0.1], [-1.0, -0.2, 0.3], [0.7, 1.0, 0.0]], [[0.1, 0.2, 0.3], [0.4, 0.5, 0.6], [0.7, 0.8, 0.9]]]
WO = [[0.1, 0.2], [0.3, 0.4], [0.5, 0.6], [-0.1, -0.2], [-0.3, -0.4], [-0.5, -0.6]]


def plain_multi_head(
    x: list[list[float]], wq: list[list[list[float]]], wk: list[list[list[float]]],
    wv: list[list[list[float]]], wo: list[list[float]], causal: bool, scaled: bool,
) -> list[list[float]]:
    """Multi-head attention written as loops over Python floats, from the paper's formula."""

    def matmul(a: list[list[float]], b: list[list[float]]) -> list[list[float]]:
        return [[sum(a[i][m] * b[m][j] for m in range(len(b))) for j in range(len(b[0]))] for i in range(len(a))]

    n, concat = len(x), [[] for _ in x]  # type: list[list[float]]
    for h in range(len(wq)):
        q, k, v = matmul(x, wq[h]), matmul(x, wk[h]), matmul(x, wv[h])
        divisor = math.sqrt(len(wk[h][0])) if scaled else 1.0
        for i in range(n):
            seen = range(i + 1) if causal else range(n)
            scores = [sum(a * b for a, b in zip(q[i], k[j], strict=True)) / divisor for j in seen]
            top = max(scores)
            exps = [math.exp(s - top) for s in scores]
            weights = [e / sum(exps) for e in exps]
            concat[i] += [sum(w * v[j][c] for w, j in zip(weights, seen, strict=True)) for c in range(len(v[0]))]
    return matmul(concat, wo)


@st.composite
def problems(draw: st.DrawFn) -> tuple[list[list[float]], ...]:
    n, d_in, h = draw(st.integers(1, 5)), draw(st.integers(1, 4)), draw(st.integers(1, 3))
    d_k, d_v, d_out = draw(st.integers(1, 3)), draw(st.integers(1, 3)), draw(st.integers(1, 3))
    number = st.floats(-3, 3, allow_nan=False).map(lambda v: round(v, 2))

    def array(*shape: int) -> list:  # type: ignore[type-arg]
        if len(shape) == 1:
            return draw(st.lists(number, min_size=shape[0], max_size=shape[0]))
        return [array(*shape[1:]) for _ in range(shape[0])]

    return (array(n, d_in), array(h, d_in, d_k), array(h, d_in, d_k), array(h, d_in, d_v), array(h * d_v, d_out))


@FAST
@given(problems(), st.booleans(), st.booleans())
def test_multi_head_attention_equals_a_plain_loop(problem: tuple[list, ...], causal: bool, scaled: bool) -> None:  # type: ignore[type-arg]
    x, wq, wk, wv, wo = problem
    trace = multi_head_attention(x, wq, wk, wv, wo, causal=causal, scaled=scaled)
    expected = plain_multi_head(x, wq, wk, wv, wo, causal, scaled)
    np.testing.assert_allclose(trace.output, expected, rtol=1e-9, atol=1e-9)
    assert trace.n_heads == len(wq)
    assert trace.concat.shape == (len(x), len(wq) * len(wv[0][0]))
    for h, head in enumerate(trace.heads):
        alone = self_attention(x, wq[h], wk[h], wv[h], causal=causal, scaled=scaled)
        assert np.array_equal(head.weights, alone.weights)
        assert np.array_equal(trace.concat[:, h * alone.context.shape[1] : (h + 1) * alone.context.shape[1]],
                              alone.context)
    assert np.array_equal(trace.output, trace.concat @ trace.w_out)


def test_the_trace_is_frozen_and_the_inputs_untouched() -> None:
    arrays = [np.array(a) for a in (X, WQ, WK, WV, WO)]
    copies = [a.copy() for a in arrays]
    trace = multi_head_attention(*arrays)
    for array, copy in zip(arrays, copies, strict=True):
        assert np.array_equal(array, copy) and array.flags.writeable
    with pytest.raises(dataclasses.FrozenInstanceError):
        trace.output = trace.concat  # type: ignore[misc]
    for array in (trace.concat, trace.w_out, trace.output, *(head.weights for head in trace.heads)):
        assert not array.flags.writeable
        assert not any(np.shares_memory(array, given) for given in arrays)
    assert isinstance(trace, MultiHeadTrace)


@pytest.mark.parametrize(
    ("changes", "field", "words"),
    [
        pytest.param({"w_query": WQ[0]}, "w_query", ("3-d", "(3, 2)"), id="a matrix for a stack"),
        pytest.param({"w_key": WK[:1]}, "w_key", ("2 heads", "got 1"), id="fewer heads"),
        pytest.param({"w_value": [*WV, WV[0]]}, "w_value", ("2 heads", "got 3"), id="more heads"),
        pytest.param({"w_query": [m[:2] for m in WQ]}, "w_query", ("3 rows per head",), id="rows"),
        pytest.param({"w_key": [[[*r, 0.0] for r in m] for m in WK]}, "w_key", ("2 columns", "d_k"), id="d_k"),
        pytest.param({"w_out": WO[:5]}, "w_out", ("6 rows", "2 × 3", "got 5"), id="w_out rows"),
        pytest.param({"w_out": [0.1] * 6}, "w_out", ("2-d",), id="w_out flat"),
        pytest.param({"w_value": [[[math.nan] * 3] * 3] * 2}, "w_value", ("finite",), id="NaN"),
        pytest.param({"w_query": "WQ"}, "w_query", (), id="text"),
        pytest.param({"embeddings": [[]]}, "embeddings", ("non-empty",), id="empty"),
        pytest.param({"w_out": [[1e308, 1e308]] * 6, "w_value": [[[1e3] * 3] * 3] * 2}, "w_out", ("too large",),
                     id="output overflows"),
    ],
)
def test_bad_input_names_the_field(changes: dict[str, object], field: str, words: tuple[str, ...]) -> None:
    given_ = {"embeddings": X, "w_query": WQ, "w_key": WK, "w_value": WV, "w_out": WO, **changes}
    assert_scenario_error(lambda: multi_head_attention(**given_), field, *words)  # type: ignore[arg-type]


# -- scenarios with heads ------------------------------------------------------------------------


def two_heads(**changes: object) -> Scenario:
    arguments: dict[str, object] = {"title": "t", "tokens": ["a", "b", "c"], "embeddings": X,
                                    "w_query": WQ, "w_key": WK, "w_value": WV, "w_out": WO, **changes}
    return Scenario(**arguments)  # type: ignore[arg-type]


def test_a_scenario_with_heads_is_their_multi_head_attention() -> None:
    scenario = two_heads(query=1)
    direct = multi_head_attention(X, WQ, WK, WV, WO)
    trace = scenario.multi_head_trace()
    assert np.array_equal(trace.output, direct.output) and np.array_equal(trace.concat, direct.concat)
    assert (scenario.n_heads, scenario.d_k, scenario.d_v, scenario.w_query.shape) == (2, 2, 3, (2, 3, 2))
    assert [head.title for head in scenario.heads] == ["t: head 1", "t: head 2"]
    for h, head in enumerate(scenario.heads):
        assert head.w_out is None and head.n_heads == 1 and head.heads == (head,)
        assert (head.query, head.precision, head.tokens) == (1, scenario.precision, scenario.tokens)
        assert np.array_equal(head.trace().weights, direct.heads[h].weights)
        assert np.array_equal(head.w_query, np.array(WQ[h]))
    # as one self-attention, a multi-head scenario is its first head
    assert np.array_equal(scenario.trace().context, direct.heads[0].context)
    assert np.array_equal(scenario.query_step().weights, direct.heads[0].weights[1])
    assert np.array_equal(scenario.trace(causal=True).weights, scenario.heads[0].trace(causal=True).weights)
    causal = scenario.multi_head_trace(causal=True)
    assert np.array_equal(causal.output, multi_head_attention(X, WQ, WK, WV, WO, causal=True).output)
    assert scenario.simplified().title == "t" and scenario.simplified().w_out is None
    assert scenario.with_query("a").multi_head_trace().output.tolist() == trace.output.tolist()


def test_a_one_head_scenario_has_no_multi_head_trace() -> None:
    scenario = preset("dog-chased-ball")
    assert scenario.n_heads == 1 and scenario.heads == (scenario,) and scenario.w_out is None
    assert_scenario_error(scenario.multi_head_trace, "w_out", "one-head")


@pytest.mark.parametrize(
    ("changes", "field", "words"),
    [
        pytest.param({"w_query": WQ[0]}, "w_query", ("one matrix per head",), id="a matrix"),
        pytest.param({"w_key": np.zeros((3, 2))}, "w_key", ("one matrix per head", "2-d"), id="a 2-d array"),
        pytest.param({"w_key": []}, "w_key", ("one per head",), id="no heads"),
        pytest.param({"w_value": [WV[0], [r[:2] for r in WV[1]]]}, "w_value, head 2", ("3 × 3 like head 1",),
                     id="heads of two shapes"),
        pytest.param({"w_query": [WQ[0], [[0.1, "x"], *WQ[1][1:]]]}, "w_query, head 2", ("row 1, column 2",),
                     id="a bad entry"),
        pytest.param({"w_out": [[1.0]]}, "w_out", ("6 rows",), id="w_out"),
    ],
)
def test_bad_heads_name_the_field(changes: dict[str, object], field: str, words: tuple[str, ...]) -> None:
    assert_scenario_error(lambda: two_heads(**changes), field, *words)


def test_from_sentence_with_heads_draws_them_reproducibly() -> None:
    one = Scenario.from_sentence("a b c d", seed=4)
    two = Scenario.from_sentence("a b c d", seed=4, heads=3, d_k=2, d_v=1)
    assert one.w_out is None and one.n_heads == 1
    assert two.w_query.shape == (3, 3, 2) and two.w_value.shape == (3, 3, 1) and two.w_out is not None
    assert two.w_out.shape == (3, 3)
    assert np.array_equal(two.embeddings, one.embeddings)  # X is drawn first either way
    again = Scenario.from_sentence("a b c d", seed=4, heads=3, d_k=2, d_v=1)
    for name in ("w_query", "w_key", "w_value", "w_out"):
        assert np.array_equal(getattr(two, name), getattr(again, name)), name
    assert np.all(np.round(two.w_out * 10) == two.w_out * 10)  # one decimal
    assert two.precision == 2 and not two.rounded
    assert_scenario_error(lambda: Scenario.from_sentence("a b", heads=0), "heads", "1 to 64")


TWO_HEADS_TOML = """
title = "Two heads"
tokens = ["a", "b", "c"]
embeddings = [[0.2, 0.7, 0.8], [0.2, 0.9, 0.6], [0.2, 0.8, 1.0]]
w_out = [[0.1, 0.2], [0.3, 0.4], [0.5, 0.6], [-0.1, -0.2], [-0.3, -0.4], [-0.5, -0.6]]
query = "b"

[[heads]]
w_query = [[0.7, 0.8], [0.1, 0.7], [0.2, 0.8]]
w_key = [[0.8, 0.6], [0.0, 0.9], [0.7, 0.8]]
w_value = [[-0.8, -1.0, 0.1], [-1.0, -0.2, 0.3], [0.7, 1.0, 0.0]]

[[heads]]
w_query = [[0.5, -0.1], [0.3, 0.0], [-0.4, 0.9]]
w_key = [[-0.2, 0.4], [0.6, 0.1], [0.3, -0.5]]
w_value = [[0.1, 0.2, 0.3], [0.4, 0.5, 0.6], [0.7, 0.8, 0.9]]
"""


def test_a_file_with_heads_tables(tmp_path: Path) -> None:
    path = tmp_path / "two.toml"
    path.write_text(TWO_HEADS_TOML, encoding="utf-8")
    loaded = load_scenario(path)
    assert loaded.n_heads == 2 and loaded.query == 1 and loaded.title == "Two heads"
    assert np.array_equal(loaded.multi_head_trace().output, two_heads().multi_head_trace().output)
    back = scenario_from_mapping(tomllib.loads(scenario_to_toml(loaded)))
    for name in ("embeddings", "w_query", "w_key", "w_value", "w_out"):
        assert np.array_equal(getattr(back, name), getattr(loaded, name)), name
    assert (back.title, back.query, back.precision) == (loaded.title, loaded.query, loaded.precision)


def test_the_two_heads_preset_round_trips_through_toml() -> None:
    scenario = preset("two-heads")
    back = scenario_from_mapping(tomllib.loads(scenario_to_toml(scenario)))
    assert np.array_equal(back.multi_head_trace().output, scenario.multi_head_trace().output)


@pytest.mark.parametrize(
    ("edit", "field", "words"),
    [
        pytest.param(lambda d: d.pop("w_out"), "w_out", ("missing", "[[heads]]"), id="no w_out"),
        pytest.param(lambda d: d.pop("heads"), "heads", ("missing",), id="w_out without heads"),
        pytest.param(lambda d: d.update(w_query=[[1.0]]), "w_query", ("not allowed beside [[heads]]",),
                     id="a top-level w_query"),
        pytest.param(lambda d: d.update(heads=2), "heads", ("[[heads]] tables", "'sentence'"), id="a number"),
        pytest.param(lambda d: d.update(heads=[]), "heads", ("[[heads]] tables",), id="no tables"),
        pytest.param(lambda d: d["heads"][1].pop("w_key"), "heads", ("table 2 has no w_key",), id="missing key"),
        pytest.param(lambda d: d["heads"][0].update(w_qeury=1), "heads", ("table 1", "did you mean 'w_query'"),
                     id="unknown key"),
        pytest.param(lambda d: d.update(d_v=2), "d_v", ("only allowed together with 'sentence'",), id="d_v"),
    ],
)
def test_bad_heads_tables_name_the_field(
    edit: Callable[[dict[str, object]], object], field: str, words: tuple[str, ...]
) -> None:
    data = tomllib.loads(TWO_HEADS_TOML)
    edit(data)
    assert_scenario_error(lambda: scenario_from_mapping(data), field, *words)


def test_a_sentence_file_with_heads_and_d_v() -> None:
    scenario = scenario_from_mapping({"sentence": "a b c", "heads": 2, "d_v": 3, "seed": 1})
    same = Scenario.from_sentence("a b c", heads=2, d_v=3, seed=1)
    assert np.array_equal(scenario.w_out, same.w_out)  # type: ignore[arg-type]
    assert scenario.w_value.shape == (2, 3, 3)


# -- the walkthrough per head ---------------------------------------------------------------------


def test_the_walkthrough_has_every_head_and_the_joined_output() -> None:
    scenario = preset("two-heads")
    text = format_walkthrough(scenario)
    for head in scenario.heads:
        alone = format_walkthrough(head)
        # each head's sections, from W_Q on, as its own walkthrough writes them
        body = alone[alone.index("W_Q (3 × 2)") :]
        assert body in text
    trace = scenario.multi_head_trace()
    out = [f"{v:.2f}" for v in trace.output[4]]
    assert f"= {out[0]}" in text and "Join the heads" in text
    assert text.count("Head ") == 2
    data = walkthrough_data(scenario)
    assert data["query"]["output"] == trace.output[4].tolist()
    assert data["heads"][0] == walkthrough_data(scenario.heads[0])
    markdown = format_walkthrough(scenario, "markdown")
    assert "\n## Head 1\n" in markdown and "\n### W_Q (3 × 2)\n" in markdown

"""Each lecture's handout: its CSVs hold attention_math's arrays, its LaTeX the lecture's numbers, and the
page lists its files; the registry has every lecture.

The expected arrays are computed here from the scenario with attention_math's functions and plain numpy
(``np.triu`` for the mask, ``default_rng(seed).random(shape) >= p`` for the dropout), never read back
from the handout code. No render: the functions are called on scenarios.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import numpy as np
import pytest

from attention_explainer.outputs.handout import (
    handout_files,
    handout_names,
    latex_escape,
    read_matrix_csv,
)
from attention_explainer.outputs.lectures import lecture_steps
from attention_explainer.outputs.page import handout_section
from attention_explainer.outputs.steps import LectureSteps
from attention_explainer.plan import BundlePlan, BundleSettings
from attention_math import (
    Scenario,
    attention_dropout,
    causal_mask,
    fused_multi_head,
    masked_scores,
    preset,
    renormalised_weights,
)
from scenes.learned import LEARNED_TRAINING
from scenes.masked import MASKED_DROPOUT
from scenes.registry import lecture_names
from scenes.self_attention.handout import HANDOUT_MATRICES

HOSTILE = ("\\input{/etc/hostname}", "50% & $x_1$", '"); import os #', "\u202eevil\u200b", "{{ x }}")

MASKED_SCENARIOS = {
    "two tokens": Scenario.from_sentence("hello there", seed=2),
    "dog-chased-ball": preset("dog-chased-ball"),
    "thirteen tokens": Scenario.from_sentence("a b c d e f g h i j k l m", seed=5),
    "two heads (head 1)": preset("two-heads"),
    "unscaled": dataclasses.replace(preset("your-journey"), scaled=False),
}
MULTI_HEAD_SCENARIOS = {
    "two-heads": preset("two-heads"),
    "three heads, twelve tokens": Scenario.from_sentence("a b c d e f g h i j k l", heads=3, seed=6),
    "two heads of d_v 3, unscaled": dataclasses.replace(
        Scenario.from_sentence("the cat sat", heads=2, d_k=2, d_v=3, seed=1), scaled=False
    ),
}


def _csvs(files: dict[str, str]) -> dict[str, tuple[list[str], list[str], np.ndarray]]:
    read = {name[:-4]: read_matrix_csv(text) for name, text in files.items() if name.endswith(".csv")}
    return {stem: (labels, columns, np.array(values, dtype=float)) for stem, (labels, columns, values) in read.items()}


def _equal(actual: np.ndarray, expected: object, name: str) -> None:
    """Bit for bit (``repr`` writes every float64 to the last bit; -inf where -inf)."""
    expected = np.asarray(expected, dtype=float)
    assert actual.shape == expected.shape, name
    assert np.array_equal(actual, expected), name


# -- the registry -----------------------------------------------------------------------------------


def test_every_lecture_has_its_handout_and_notebook() -> None:
    assert all(isinstance(lecture_steps(name), LectureSteps) for name in lecture_names())
    assert {"self-attention", "masked", "multi-head", "rope"} <= set(lecture_names())
    with pytest.raises(KeyError, match="unknown lecture 'no-such-lecture'; expected one of self-attention, "):
        lecture_steps("no-such-lecture")


@pytest.mark.parametrize("lecture", sorted(lecture_names()))
def test_every_table_is_a_csv_and_a_latex_file(lecture: str) -> None:
    scenario = preset("two-heads")
    steps = lecture_steps(lecture)
    stems = [table.stem for table in steps.tables(scenario)]
    assert len(set(stems)) == len(stems)
    expected = {f"{stem}.{ext}" for stem in stems for ext in ("csv", "tex")} | (
        {"walkthrough.md"} if steps.walkthrough else set()
    )
    assert set(handout_files(scenario, lecture)) == expected
    assert handout_names(scenario, lecture) == sorted(expected)  # what the bundle's manifest lists
    assert steps.probe in stems


def test_the_self_attention_handout_is_the_default_and_lecture_6s_matrices() -> None:
    scenario = preset("your-journey")
    files = handout_files(scenario)
    assert files == handout_files(scenario, "self-attention")
    assert set(files) == {f"{stem}.{ext}" for stem, *_ in HANDOUT_MATRICES for ext in ("csv", "tex")} | {
        "walkthrough.md"
    }
    trace = scenario.trace()
    for stem, field, *_ in HANDOUT_MATRICES:
        _equal(_csvs(files)[stem][2], getattr(trace, field), stem)


def test_a_bundle_plan_knows_its_lecture_from_its_scenes(tmp_path: Path) -> None:
    from attention_explainer.selection import select_scenes

    def lecture(name: str) -> str:
        chosen = tuple(select_scenes(None, name))
        return BundlePlan(preset("two-heads"), tmp_path, BundleSettings(), chosen, "", {}, {}, tmp_path).lecture

    assert [lecture(name) for name in lecture_names()] == list(lecture_names())


# -- masked ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", MASKED_SCENARIOS)
def test_the_masked_handout_holds_attention_maths_arrays(name: str) -> None:
    scenario = MASKED_SCENARIOS[name]
    csvs = _csvs(handout_files(scenario, "masked"))
    plain, causal = scenario.trace(), scenario.trace(causal=True)
    n, (p, seed) = scenario.n_tokens, MASKED_DROPOUT
    route = renormalised_weights(plain.scaled_scores)
    drop = attention_dropout(causal.weights, p, seed=seed)
    expected = {
        "X": plain.embeddings, "W_Q": plain.w_query, "W_K": plain.w_key, "W_V": plain.w_value,
        "scaled_scores": plain.scaled_scores,
        "mask": np.triu(np.ones((n, n)), k=1),
        "masked_scores": masked_scores(plain.scaled_scores),
        "weights": causal.weights,
        "full": route.full, "zeroed": route.zeroed, "row_sums": route.row_sums[:, None],
        "kept": np.random.default_rng(seed).random((n, n)) >= p,
        "dropped": drop.weights, "dropped_row_sums": drop.row_sums[:, None],
        "V": plain.values, "Z": causal.context,
    }
    assert list(csvs) == list(expected)
    for stem, values in expected.items():
        _equal(csvs[stem][2], values, stem)
        if not stem.startswith("W_"):
            assert csvs[stem][0] == list(scenario.tokens), stem
    assert np.array_equal(np.isneginf(csvs["masked_scores"][2]), causal_mask(n))
    assert csvs["weights"][1] == csvs["mask"][1] == list(scenario.tokens)
    assert csvs["row_sums"][1] == ["row sum"]


def test_the_masked_handout_writes_minus_infinity_and_the_mask_as_whole_numbers() -> None:
    scenario = preset("dog-chased-ball")
    files = handout_files(scenario, "masked")
    n = scenario.n_tokens
    assert files["masked_scores.csv"].count(",-inf") == n * (n - 1) // 2
    assert files["masked_scores.tex"].count(r"$-\infty$") == n * (n - 1) // 2
    assert "inf" not in files["weights.csv"] and r"\infty" not in files["weights.tex"]
    assert files["mask.csv"].splitlines()[1] == "The,0,1,1,1,1"
    mask_rows = [line for line in files["mask.tex"].splitlines() if line.startswith("dog &")]
    assert mask_rows == [r"dog & $0$ & $0$ & $1$ & $1$ & $1$ \\"]
    kept_rows = [line for line in files["kept.tex"].splitlines() if line.endswith(r"\\")][1:]
    assert all(re.fullmatch(r"[^&]+( & \$[01]\$)+ \\\\", line) for line in kept_rows), kept_rows
    # the weights at the lecture's precision, as on screen (0.31 for "ball" in its own row)
    assert r"ball & $0.17$ & $0.16$ & $0.25$ & $0.10$ & $0.31$ \\" in files["weights.tex"]


def test_the_masked_dropout_is_the_lectures_own_p_and_seed() -> None:
    p, seed = MASKED_DROPOUT
    assert 0 < p < 1 and isinstance(seed, int)
    files = handout_files(preset("dog-chased-ball"), "masked")
    assert f"p = {p}, seed {seed}" in files["kept.tex"].splitlines()[0]
    other = attention_dropout(preset("dog-chased-ball").trace(causal=True).weights, p, seed=seed + 1)
    assert not np.array_equal(_csvs(files)["kept"][2], other.kept)  # the seed decides which weights stay


def test_the_masked_lecture_has_no_walkthrough_and_the_page_says_so() -> None:
    scenario = preset("dog-chased-ball")
    assert "walkthrough.md" not in handout_files(scenario, "masked")
    assert "walkthrough" not in handout_section(scenario, "masked")
    assert 'href="handout/walkthrough.md"' in handout_section(scenario, "self-attention")


# -- multi-head ------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", MULTI_HEAD_SCENARIOS)
def test_the_multi_head_handout_holds_attention_maths_arrays(name: str) -> None:
    scenario = MULTI_HEAD_SCENARIOS[name]
    csvs = _csvs(handout_files(scenario, "multi-head"))
    multi = scenario.multi_head_trace()
    fused = fused_multi_head(scenario.embeddings, scenario.w_query, scenario.w_key, scenario.w_value,
                             scenario.w_out, scaled=scenario.scaled)
    expected: dict[str, object] = {"X": scenario.embeddings}
    for k, head in enumerate(multi.heads, start=1):
        for stem, field in (("W_Q", "w_query"), ("W_K", "w_key"), ("W_V", "w_value"), ("Q", "queries"),
                            ("K", "keys"), ("V", "values"), ("scaled_scores", "scaled_scores"),
                            ("weights", "weights"), ("Z", "context")):
            expected[f"{stem}_{k}"] = getattr(head, field)
    expected.update(concat=multi.concat, W_O=scenario.w_out, output=multi.output)
    expected.update(W_Q_big=fused.w_query_big, W_K_big=fused.w_key_big, W_V_big=fused.w_value_big,
                    Q_big=fused.queries_big, K_big=fused.keys_big, V_big=fused.values_big)
    assert list(csvs) == list(expected)
    for stem, values in expected.items():
        _equal(csvs[stem][2], values, stem)
    h, d_v = scenario.n_heads, scenario.d_v
    joined = [f"h{k} z{j}" for k in range(1, h + 1) for j in range(1, d_v + 1)]
    assert csvs["concat"][1] == joined and csvs["W_O"][0] == joined  # W_O's rows are concat's columns
    assert csvs["Q_big"][1][: scenario.d_k + 1] == [*(f"h1 q{j}" for j in range(1, scenario.d_k + 1)), "h2 q1"]
    assert csvs["weights_2"][0] == csvs["weights_2"][1] == list(scenario.tokens)


def test_a_one_head_scenario_has_its_heads_steps_and_no_w_o() -> None:
    scenario = preset("dog-chased-ball")
    csvs = _csvs(handout_files(scenario, "multi-head"))
    assert list(csvs) == ["X", "W_Q_1", "W_K_1", "W_V_1", "Q_1", "K_1", "V_1", "scaled_scores_1", "weights_1", "Z_1"]
    _equal(csvs["Z_1"][2], scenario.trace().context, "Z_1")


# -- the page and hostile tokens --------------------------------------------------------------------


@pytest.mark.parametrize("lecture", sorted(lecture_names()))
def test_the_page_lists_every_file_of_the_lectures_handout(lecture: str) -> None:
    scenario = preset("two-heads")
    section = handout_section(scenario, lecture)
    linked = set(re.findall(r'href="handout/([^"]+)"', section))
    assert linked == set(handout_files(scenario, lecture)) | {"notebook.ipynb"}
    captions = re.findall(r"<caption>(.*?)</caption>", section)
    assert len(captions) == len(lecture_steps(lecture).tables(scenario))


@pytest.mark.parametrize("lecture", sorted(lecture_names()))
def test_hostile_tokens_are_whole_in_csv_and_escaped_in_latex(lecture: str) -> None:
    scenario = Scenario.from_sentence(" ".join(f"t{i}" for i in range(len(HOSTILE))), heads=2, seed=3)
    scenario = dataclasses.replace(scenario, tokens=HOSTILE, title=HOSTILE[0])
    files = handout_files(scenario, lecture)
    for table in lecture_steps(lecture).tables(scenario):
        labels, columns, _ = read_matrix_csv(files[f"{table.stem}.csv"])
        latex_rows = [line.split(" & ")[0] for line in files[f"{table.stem}.tex"].splitlines() if line.endswith("\\\\")]
        if table.token_rows:
            assert labels == list(HOSTILE), table.stem
            assert latex_rows[1:] == [latex_escape(token) for token in HOSTILE], table.stem
        if columns == list(HOSTILE):
            assert latex_rows[0] == "" and files[f"{table.stem}.tex"].count(latex_escape(HOSTILE[0])) >= 2
        assert "\\input" not in files[f"{table.stem}.tex"] and "\u202e" not in files[f"{table.stem}.tex"]
    section = handout_section(scenario, lecture)
    assert "&quot;); import os #" in section and "\u202e" not in section


# -- learned -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["learned", "dog-chased-ball"])
def test_the_learned_handout_holds_the_runs_arrays_and_the_scenarios_pipeline(name: str) -> None:
    from attention_math import train_attention

    scenario = preset(name)
    seed, steps, rate = LEARNED_TRAINING
    run = train_attention(seed, steps=steps, learning_rate=rate)  # trained again here, from the settings
    csvs = _csvs(handout_files(scenario, "learned"))
    labels, columns, losses = csvs["step_losses"]
    assert labels == [f"step {t}" for t in range(steps + 1)] and columns == ["loss"]
    _equal(losses[:-1, 0], run.losses, "step_losses")
    _equal(losses[-1:, 0], [run.final_loss], "step_losses")
    for m, stem in enumerate(("rows_first", "rows_second")):
        _equal(csvs[stem][2], run.rows[:, m, :], stem)
        assert csvs[stem][1] == list(run.tokens)
    trace = scenario.trace()
    for stem, field in (("W_Q", "w_query"), ("W_K", "w_key"), ("weights", "weights"), ("Z", "context")):
        _equal(csvs[stem][2], getattr(trace, field), stem)
    if name == "learned":
        _equal(csvs["W_Q"][2], run.w_query[-1], "W_Q")


# -- rope -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["rope-dog", "two tokens", "two heads (head 1)"])
def test_the_rope_handout_holds_attention_maths_arrays(name: str) -> None:
    """Each turned matrix from attention_math's ``rope`` at positions 0 … n − 1; the scores and weights from them by
    plain numpy; the frequencies from RoFormer's formula."""
    from attention_math import rope

    scenario = preset("rope-dog") if name == "rope-dog" else MASKED_SCENARIOS[name]
    head = scenario.heads[0] if scenario.w_out is not None else scenario
    csvs = _csvs(handout_files(scenario, "rope"))
    x, d_k = head.embeddings, head.w_query.shape[1]
    positions = np.arange(scenario.n_tokens)
    theta = 10000.0 ** (-2 * np.arange(d_k // 2) / d_k)
    np.testing.assert_allclose(csvs["theta"][2], [theta], rtol=1e-15)
    np.testing.assert_allclose(csvs["angles"][2], np.outer(positions, theta), rtol=1e-15)
    q_rot, k_rot = rope(x @ head.w_query, positions), rope(x @ head.w_key, positions)
    np.testing.assert_allclose(csvs["Q_rot"][2], q_rot, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(csvs["K_rot"][2], k_rot, rtol=1e-12, atol=1e-15)
    scaled = q_rot @ k_rot.T / np.sqrt(d_k)
    np.testing.assert_allclose(csvs["rope_scaled_scores"][2], scaled, rtol=1e-12, atol=1e-15)
    exps = np.exp(scaled - scaled.max(axis=1, keepdims=True))
    weights = exps / exps.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(csvs["rope_weights"][2], weights, rtol=1e-12)
    np.testing.assert_allclose(csvs["Z"][2], weights @ (x @ head.w_value), rtol=1e-12, atol=1e-15)
    _equal(csvs["weights"][2], head.trace().weights, "weights")  # without positions: lecture 6's
    assert csvs["rope_weights"][0] == list(scenario.tokens) and csvs["rope_weights"][1] == list(scenario.tokens)


@pytest.mark.parametrize("name", ["grouped-dog", "two tokens", "thirteen tokens"])
def test_the_inference_handout_holds_masked_attentions_rows_step_by_step(name: str) -> None:
    """The caches are K and V; step t's weights and context are row t of masked attention (of head 1), computed
    here with attention_math's self_attention; the multiplies counted from the shapes."""
    from attention_math import self_attention

    scenario = preset("grouped-dog") if name == "grouped-dog" else MASKED_SCENARIOS[name]
    one = scenario.heads[0]
    causal = self_attention(one.embeddings, one.w_query, one.w_key, one.w_value, scaled=scenario.scaled, causal=True)
    got = {t.stem: t.values for t in lecture_steps("inference").tables(scenario)}
    assert list(got) == ["X", "W_Q", "W_K", "W_V", "K_cache", "V_cache", "step_weights", "Z", "multiplies",
                         "cache_memory"]
    np.testing.assert_allclose(got["K_cache"], causal.keys, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(got["V_cache"], causal.values, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(got["step_weights"], causal.weights, rtol=1e-9, atol=1e-15)
    np.testing.assert_allclose(got["Z"], causal.context, rtol=1e-9, atol=1e-12)
    n, d_in, d_k, d_v = scenario.n_tokens, scenario.d_in, scenario.d_k, scenario.d_v
    for t in range(n):
        attend = (t + 1) * (d_k + d_v)
        assert got["multiplies"][t].tolist() == [d_in * (2 * d_k + d_v) + attend,
                                                 d_in * d_k + (t + 1) * d_in * (d_k + d_v) + attend]


def test_the_inference_handout_holds_the_published_models_cache_sizes() -> None:
    """Each model's row: its config.json's sizes (typed here from the files docs/math.md cites), the bytes a token
    keeps worked out here (Llama-2-7B's 0.5 MiB a token is the figure usually quoted), MiB for 4096 tokens."""
    from scenes.inference import CACHE_CONTEXT

    memory = next(t for t in lecture_steps("inference").tables(preset("grouped-dog")) if t.stem == "cache_memory")
    configs = {"meta-llama/Llama-2-7b-hf": (32, 32, 32, 4096 // 32),
               "meta-llama/Llama-2-70b-hf": (80, 64, 8, 8192 // 64),
               "mistralai/Mistral-7B-v0.1": (32, 32, 8, 4096 // 32), "tiiuae/falcon-7b": (32, 71, 1, 4544 // 71)}
    assert memory.rows == tuple(configs) and not memory.token_rows and CACHE_CONTEXT == 4096
    for row, (layers, query_heads, kv_heads, d_head) in zip(memory.values, configs.values(), strict=True):
        per_token = 2 * layers * kv_heads * d_head * 2  # 16-bit numbers
        expected = [layers, query_heads, kv_heads, d_head, 2, per_token / 1024, per_token * 4096 / 2**20,
                    2 * layers * query_heads * d_head * 2 / 1024]
        assert row.tolist() == expected
    assert memory.values[:, 5].tolist() == [512.0, 320.0, 128.0, 8.0]  # KiB a token
    assert memory.whole and memory.values[:, 6].tolist() == [2048.0, 1280.0, 512.0, 32.0]  # MiB: 2, 1.25, 0.5 GiB


@pytest.mark.parametrize("name", ["dog-chased-ball", "two tokens", "thirteen tokens"])
def test_the_flash_attention_handout_holds_the_walk_the_tiled_output_and_the_traffic(name: str) -> None:
    """The walk's rows against the recurrence in floats, FlashAttention's output against self_attention's context, the
    traffic against Algorithms 0 and 1 in closed form (n = 1024, d = 64, M = 51200 for the paper's)."""
    import math

    from scenes.flash_attention import FLASH_BLOCKS

    scenario = preset("dog-chased-ball") if name == "dog-chased-ball" else MASKED_SCENARIOS[name]
    trace, keys = scenario.trace(), FLASH_BLOCKS[0]
    got = {t.stem: t.values for t in lecture_steps("flash-attention").tables(scenario)}
    assert list(got) == ["X", "W_Q", "W_K", "W_V", "Q", "K", "V", "scaled_scores", "tile_exps", "online_walk", "Z",
                         "traffic", "traffic_paper"]
    s, m, total, out, rows = trace.scaled_scores[scenario.query].tolist(), -math.inf, 0.0, [0.0] * scenario.d_v, []
    for start in range(0, len(s), keys):
        tile = s[start : start + keys]
        new = max(m, *tile)
        factor = 0.0 if m == -math.inf else math.exp(m - new)
        exps = [math.exp(x - new) for x in tile]
        total = factor * total + sum(exps)
        out = [factor * o + sum(e * trace.values[start + k][c] for k, e in enumerate(exps)) for c, o in enumerate(out)]
        m = new
        rows.append([m, factor, total, *out])
    np.testing.assert_allclose(got["online_walk"], rows, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(got["Z"], trace.context, rtol=1e-9, atol=1e-12)
    for stem, (n, d, b_c, sram) in (("traffic", (scenario.n_tokens, scenario.d_k, keys, 4 * scenario.d_k * keys)),
                                    ("traffic_paper", (1024, 64, 200, 51200))):
        passes = -(-n // b_c)
        standard = [3 * n * d + 2 * n * n, 2 * n * n + n * d]
        flash = [2 * n * d + passes * n * (2 * d + 2), (passes + 1) * n * (d + 2)]
        assert got[stem].tolist() == [[*standard, sum(standard), n * d + n * n],
                                      [*flash, sum(flash), n * n * d * d / sram]]

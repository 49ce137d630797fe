"""The handout's notebook as code: user text only as literals, every step the handout has, and a
run of it for a scenario at 4 decimals (the bundle's own notebook runs in test_lecture_hall).

Every lecture's notebook (each lecture's ``handout.py``): run under nbclient, it prints
attention_math's numbers (computed here, as its ``show`` prints them) and its check cell passes
against the handout's CSVs; run here, a number a little off in any one CSV, or a wrong token, fails
the check cell, naming the step.
"""

from __future__ import annotations

import ast
import contextlib
import dataclasses
import io
import json
import os
import tokenize
from pathlib import Path

import numpy as np
import pytest

from attention_explainer.escape import markdown_literal
from attention_explainer.outputs.handout import handout_files
from attention_explainer.outputs.lectures import lecture_steps
from attention_explainer.outputs.notebook import notebook_json
from attention_math import (
    Scenario,
    attention_dropout,
    format_number,
    fused_multi_head,
    masked_scores,
    preset,
    renormalised_weights,
)
from scenes.masked import MASKED_DROPOUT
from scenes.self_attention.handout import HANDOUT_MATRICES

HOSTILE_TITLE = '"); import os # {{ x }} \'\'\' """ \\ \u202eevil\u200b <script>x</script>'
HOSTILE_SENTENCE = '"); import {{x}} \'\'\' \\n \u202eevil a\u200bb'


def _code_cells(text: str) -> list[str]:
    return ["".join(cell["source"]) for cell in json.loads(text)["cells"] if cell["cell_type"] == "code"]


def _assert_user_text_literal(text: str, scenario: Scenario) -> None:
    """Every code cell of notebook ``text`` is valid Python with the title and tokens only as literals, in no
    comment, and no invisible character."""
    assignments: dict[str, object] = {}
    for cell in _code_cells(text):
        for node in ast.parse(cell).body:  # every cell is valid Python
            if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
                if node.targets[0].id in {"TITLE", "TOKENS"}:
                    assignments[node.targets[0].id] = ast.literal_eval(node.value)
        lexed = tokenize.generate_tokens(io.StringIO(cell).readline)
        comments = [t.string for t in lexed if t.type == tokenize.COMMENT]
        assert not [c for c in comments for word in scenario.tokens if len(word) > 2 and word in c]
        assert all(ch.isprintable() for ch in cell.replace("\n", "")), "no invisible character in the source"
    assert assignments == {"TITLE": HOSTILE_TITLE, "TOKENS": list(scenario.tokens)}


def test_every_handout_matrix_is_a_step_the_notebook_checks() -> None:
    cells = _code_cells(notebook_json(preset("your-journey")))
    steps = ", ".join(f"{stem!r}: {stem}" for stem, *_ in HANDOUT_MATRICES)
    assert f"steps = {{{steps}}}" in cells[-1]


def test_user_text_is_only_ever_a_literal_never_source_or_a_comment() -> None:
    scenario = dataclasses.replace(Scenario.from_sentence(HOSTILE_SENTENCE, seed=1), title=HOSTILE_TITLE)
    _assert_user_text_literal(notebook_json(scenario), scenario)
    markdown = [cell for cell in json.loads(notebook_json(scenario))["cells"] if cell["cell_type"] == "markdown"]
    assert "<script>" not in "".join("".join(cell["source"]) for cell in markdown)


@pytest.mark.render  # starts a Jupyter kernel: with the slow tests, on their worker
def test_the_notebook_runs_and_prints_every_step_at_four_decimals(tmp_path: Path) -> None:
    import nbformat
    from nbclient import NotebookClient

    scenario = preset("your-journey")
    for name, content in handout_files(scenario).items():
        (tmp_path / name).write_text(content, encoding="utf-8")
    (tmp_path / "notebook.ipynb").write_text(notebook_json(scenario), encoding="utf-8")
    book = nbformat.read(str(tmp_path / "notebook.ipynb"), as_version=4)
    NotebookClient(book, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}).execute()
    printed = "".join(o.get("text", "") for c in book.cells if c.cell_type == "code" for o in c.get("outputs", []))
    trace, p = scenario.trace(), scenario.precision
    for row, token in zip(trace.weights, scenario.tokens, strict=True):  # each row, as the handout shows it
        assert "  ".join(format_number(v, p, minus="-") for v in row) + f"   {token}" in printed
    z = ", ".join(format_number(v, p, minus="-") for v in trace.context[scenario.query])
    assert f"z{scenario.query + 1} = ({z})" in printed
    assert "Every step matches the handout's CSV files" in printed


# -- every lecture's notebook ------------------------------------------------------------------------

LECTURE_SCENARIOS = {
    "self-attention": preset("your-journey"),
    "masked": Scenario.from_sentence("a b c d e f g h i j k l m", seed=5),
    "multi-head": preset("two-heads"),
    "learned": preset("learned"),
    "rope": preset("rope-dog"),
    "flash-attention": preset("dog-chased-ball"),
    "latent-attention": preset("latent-dog"),
}
LABELLED = {"multi-head": "Z_1", "latent-attention": "X"}
"""A table whose rows are the tokens, by lecture (else ``Z``): the check must catch a wrong label in it."""


def _write_handout(folder: Path, scenario: Scenario, lecture: str) -> None:
    for name, content in handout_files(scenario, lecture).items():
        (folder / name).write_text(content, encoding="utf-8")
    (folder / "notebook.ipynb").write_text(notebook_json(scenario, lecture), encoding="utf-8")


def _run_in_process(folder: Path, cells: list[str], namespace: dict[str, object]) -> None:
    """Run code cells here, in ``folder`` (as a kernel started there would), in ``namespace``."""
    old = Path.cwd()
    os.chdir(folder)
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            for cell in cells:
                exec(compile(cell, "<cell>", "exec"), namespace)  # the notebook's own code, made here
    finally:
        os.chdir(old)


def _shown(name: str, matrix: object, tokens: tuple[str, ...] | None, precision: int) -> list[str]:
    """A matrix as the notebook's ``show`` prints it, the numbers from attention_math (-inf as numpy writes it)."""
    rows = np.atleast_2d(np.asarray(matrix, dtype=float))
    texts = [["-inf" if v == -np.inf else format_number(v, precision, minus="-") for v in row] for row in rows]
    width = max(len(t) for row in texts for t in row)
    labels = [""] * len(rows) if tokens is None else [f"   {token}" for token in tokens]
    lines = ("  " + "  ".join(t.rjust(width) for t in row) + label for row, label in zip(texts, labels, strict=True))
    return [name, *lines]


def _expected_masked(scenario: Scenario) -> list[list[str]]:
    p, (rate, seed) = scenario.precision, MASKED_DROPOUT
    causal = scenario.trace(causal=True)
    route = renormalised_weights(scenario.trace().scaled_scores)
    drop = attention_dropout(causal.weights, rate, seed=seed)
    tokens = scenario.tokens
    z = ", ".join(format_number(v, p, minus="-") for v in causal.context[scenario.query])
    return [
        _shown("masked scores", masked_scores(scenario.trace().scaled_scores), tokens, p),
        _shown("weights = softmax(masked scores)", causal.weights, tokens, p),
        _shown("zeroed: the future set to 0", route.zeroed, tokens, p),
        _shown("row sums: what is left of each row", route.row_sums[:, None], tokens, p),
        _shown("renormalised = zeroed / row sums", route.weights, tokens, p),
        _shown("dropped = weights × kept / (1 − p)", drop.weights, tokens, p),
        _shown("their row sums", drop.row_sums[:, None], tokens, p),
        _shown("Z = weights V", causal.context, tokens, p),
        [f"z{scenario.query + 1} = ({z})"],
    ]


def _expected_multi_head(scenario: Scenario) -> list[list[str]]:
    p, tokens = scenario.precision, scenario.tokens
    multi = scenario.multi_head_trace()
    fused = fused_multi_head(scenario.embeddings, scenario.w_query, scenario.w_key, scenario.w_value, scenario.w_out)
    expected = []
    for k, head in enumerate(multi.heads, start=1):
        expected.append(_shown(f"head {k}: weights = softmax(Q Kᵀ / √d_k)", head.weights, tokens, p))
        expected.append(_shown(f"head {k}: Z = weights V", head.context, tokens, p))
    expected.append(_shown("concat", multi.concat, tokens, p))
    expected.append(_shown("output = concat W_O", multi.output, tokens, p))
    expected.append(_shown("W_Q_big: every head's W_Q side by side", fused.w_query_big, None, p))
    expected.append(_shown("Q_big = X W_Q_big", fused.queries_big, tokens, p))
    n, h, d_k = scenario.n_tokens, scenario.n_heads, scenario.d_k
    expected.append([f"Q_big ({n}, {h * d_k}) → reshape ({n}, {h}, {d_k}) → transpose ({h}, {n}, {d_k})"])
    expected.append(_shown("fused output", fused.output, tokens, p))
    return expected


@pytest.mark.parametrize("lecture", ["masked", "multi-head"])
def test_user_text_is_only_a_literal_in_every_lectures_notebook(lecture: str) -> None:
    scenario = Scenario.from_sentence(HOSTILE_SENTENCE, seed=1, heads=2)
    scenario = dataclasses.replace(scenario, title=HOSTILE_TITLE)
    text = notebook_json(scenario, lecture)
    _assert_user_text_literal(text, scenario)
    markdown = "".join("".join(c["source"]) for c in json.loads(text)["cells"] if c["cell_type"] == "markdown")
    assert "<script>" not in markdown and markdown_literal(HOSTILE_TITLE) in markdown


@pytest.mark.parametrize("lecture", sorted(LECTURE_SCENARIOS))
def test_every_table_of_the_handout_is_checked_and_a_wrong_number_fails_the_check(lecture: str, tmp_path: Path) -> None:
    scenario = LECTURE_SCENARIOS[lecture]
    _write_handout(tmp_path, scenario, lecture)
    *cells, check = _code_cells((tmp_path / "notebook.ipynb").read_text(encoding="utf-8"))
    namespace: dict[str, object] = {}
    _run_in_process(tmp_path, [*cells, check], namespace)
    stems = [table.stem for table in lecture_steps(lecture).tables(scenario)]
    assert list(namespace["steps"]) == stems  # type: ignore[call-overload]
    for stem in stems:
        path = tmp_path / f"{stem}.csv"
        right = path.read_text(encoding="utf-8")
        rows = right.splitlines()
        last = rows[-1].split(",")
        last[-1] = "1" if last[-1] == "0" else repr(float(last[-1]) * (1 + 1e-6) + 1e-9)  # one number, a little off
        path.write_text("\n".join([*rows[:-1], ",".join(last)]) + "\n", encoding="utf-8")
        with pytest.raises(AssertionError, match=rf"\b{stem}\b"):
            _run_in_process(tmp_path, [check], namespace)  # the check cell again, after the notebook's others
        path.write_text(right, encoding="utf-8")
    labels = tmp_path / f"{LABELLED.get(lecture, 'Z')}.csv"
    labels.write_text(labels.read_text(encoding="utf-8").replace(f"\n{scenario.tokens[0]},", "\nsomeone,", 1),
                      encoding="utf-8")
    with pytest.raises(AssertionError, match=labels.stem):
        _run_in_process(tmp_path, [check], namespace)


@pytest.mark.render  # starts a Jupyter kernel: with the slow tests, on their worker
@pytest.mark.parametrize("lecture", ["masked", "multi-head"])
def test_every_lectures_notebook_runs_and_prints_attention_maths_numbers(lecture: str, tmp_path: Path) -> None:
    import nbformat
    from nbclient import NotebookClient

    scenario = LECTURE_SCENARIOS[lecture]
    _write_handout(tmp_path, scenario, lecture)
    book = nbformat.read(str(tmp_path / "notebook.ipynb"), as_version=4)
    NotebookClient(book, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}).execute()
    printed = "".join(o.get("text", "") for c in book.cells if c.cell_type == "code" for o in c.get("outputs", []))
    lines = printed.splitlines()
    assert lines[0] == scenario.title
    expected = _expected_masked(scenario) if lecture == "masked" else _expected_multi_head(scenario)
    for block in expected:
        start = lines.index(block[0])
        assert lines[start : start + len(block)] == block, block[0]
    assert "Every step matches the handout's CSV files: X, " in printed
    if lecture == "masked":
        assert "The same weights by both routes" in printed
    else:
        assert "The fused form gives the same weights, the same concat and the same output" in printed


@pytest.mark.render  # starts a Jupyter kernel: with the slow tests, on their worker
def test_the_latent_notebook_runs_its_own_loops_and_matches_every_csv(tmp_path: Path) -> None:
    """MLA in the notebook's own numpy (its RoPE loop too) gives every CSV of the handout; DeepSeek-V2's 576."""
    import nbformat
    from nbclient import NotebookClient

    scenario = LECTURE_SCENARIOS["latent-attention"]
    _write_handout(tmp_path, scenario, "latent-attention")
    book = nbformat.read(str(tmp_path / "notebook.ipynb"), as_version=4)
    NotebookClient(book, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}).execute()
    printed = "".join(o.get("text", "") for c in book.cells if c.cell_type == "code" for o in c.get("outputs", []))
    assert printed.splitlines()[0] == scenario.title
    stems = [table.stem for table in lecture_steps("latent-attention").tables(scenario)]
    assert f"Every step matches the handout's CSV files: {', '.join(stems)}" in printed
    assert "latent: 576 numbers a token and layer" in printed


def test_the_learned_notebook_trains_the_lectures_run_to_the_last_bit(tmp_path: Path) -> None:
    """Its plain-numpy loop gives train_attention's numbers bit for bit and ends on the preset's W_Q and W_K."""
    from attention_math import train_attention
    from scenes.learned import LEARNED_TRAINING

    scenario = preset("learned")
    _write_handout(tmp_path, scenario, "learned")
    namespace: dict[str, object] = {}
    _run_in_process(tmp_path, _code_cells((tmp_path / "notebook.ipynb").read_text(encoding="utf-8")), namespace)
    seed, steps, rate = LEARNED_TRAINING
    run = train_attention(seed, steps=steps, learning_rate=rate)  # computed here, not read from the handout
    assert np.array_equal(namespace["step_losses"], run.step_losses)  # type: ignore[arg-type]
    assert np.array_equal(namespace["rows"], run.rows)  # type: ignore[arg-type]
    assert np.array_equal(namespace["w_q"], scenario.w_query) and np.array_equal(namespace["w_k"], scenario.w_key)  # type: ignore[arg-type]
    assert namespace["KEYFRAMES"] == [0, 5, 20, 60]

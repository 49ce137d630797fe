"""The lecture page's numbers at the top, laid out by Chromium at a laptop's width: the query's
weights, one per key, from the core, all on the page for 2 to 16 tokens (16 keys in one table row
ran off an 800-pixel page)."""

from __future__ import annotations

import html
from pathlib import Path

import pytest
from browser import CHROMIUM, Chromium

from attention_explainer.outputs.page import STYLE, scenario_summary
from attention_math import Scenario, format_number

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="make setup installs Debian's chromium")

SIXTEEN = "the quick brown fox jumps over the lazy dog while the old cat sleeps near fire"
SCENARIOS = {
    "two": Scenario.from_sentence("hello world", seed=2),
    "sixteen": Scenario.from_sentence(SIXTEEN, seed=5, query="fox", precision=4),
    "sixteen-long-words": Scenario.from_sentence(
        " ".join(f"extraordinarily{i}" for i in range(16)), seed=9, query=1, precision=3
    ),
}

_CELLS = """Array.from(document.querySelectorAll('.weights dl div')).map(d => {
  const r = d.getBoundingClientRect();
  return {key: d.querySelector('dt').textContent, weight: d.querySelector('dd').textContent,
          query: d.classList.contains('query'), left: r.left, right: r.right};
})"""


def _page(scenario: Scenario, folder: Path, lecture: str = "self-attention") -> Path:
    page = folder / "numbers.html"
    page.write_text(
        f"<!doctype html><html><head><meta charset='utf-8'><style>{STYLE}</style></head>"
        f"<body><h1>{html.escape(scenario.title)}</h1>{scenario_summary(scenario, lecture)}</body></html>",
        encoding="utf-8",
    )
    return page


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_every_weight_is_on_a_laptop_page_under_its_key(name: str, tmp_path: Path) -> None:
    scenario = SCENARIOS[name]
    step = scenario.query_step()
    with Chromium(tmp_path / "profile") as browser:
        browser.call("Emulation.setDeviceMetricsOverride", width=800, height=700, deviceScaleFactor=1, mobile=False)
        browser.open(_page(scenario, tmp_path).as_uri())
        cells = browser.evaluate(_CELLS)
        width = browser.evaluate("window.innerWidth")
        overflow = browser.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
    assert width == 800
    assert overflow <= 0, f"the page is {overflow} px wider than the window"
    assert [c["key"] for c in cells] == list(scenario.tokens)
    assert [c["weight"] for c in cells] == [format_number(w, scenario.precision) for w in step.weights]
    assert [c["query"] for c in cells] == [j == scenario.query for j in range(scenario.n_tokens)]
    for cell in cells:
        assert 0 <= cell["left"] and cell["right"] <= width, cell


_ROWS = """Array.from(document.querySelectorAll('.weights')).map(section => ({
  heading: section.querySelector('h3').textContent,
  cells: Array.from(section.querySelectorAll('dl div')).map(d => {
    const r = d.getBoundingClientRect();
    return {weight: d.querySelector('dd').textContent, masked: d.classList.contains('masked'), left: r.left,
            right: r.right};
  })}))"""


@pytest.mark.parametrize(
    ("lecture", "scenario"),
    [("masked", SCENARIOS["sixteen"]), ("masked", SCENARIOS["two"]),
     ("multi-head", Scenario.from_sentence(SIXTEEN, seed=5, heads=6, query=4, precision=3))],
    ids=["masked-sixteen", "masked-two", "multi-head-six-heads-sixteen"],
)
def test_each_lectures_rows_of_weights_are_on_a_laptop_page(lecture: str, scenario: Scenario, tmp_path: Path) -> None:
    """The masked lecture's row: the causal weights, the keys after the query marked masked; the multi-head
    lecture's: a row per head (six here), each on the page at 800 pixels."""
    with Chromium(tmp_path / "profile") as browser:
        browser.call("Emulation.setDeviceMetricsOverride", width=800, height=700, deviceScaleFactor=1, mobile=False)
        browser.open(_page(scenario, tmp_path, lecture).as_uri())
        rows = browser.evaluate(_ROWS)
        overflow = browser.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
    assert overflow <= 0, f"the page is {overflow} px wider than the window"
    q, p = scenario.query, scenario.precision
    if lecture == "masked":
        weights = [scenario.trace(causal=True).weights[q]]
        masked = [[j > q for j in range(scenario.n_tokens)]]
    else:
        weights = [head.trace().weights[q] for head in scenario.heads]
        masked = [[False] * scenario.n_tokens] * scenario.n_heads
    shown = [[format_number(w, p) for w in ws] for ws in weights]
    assert [[c["weight"] for c in row["cells"]] for row in rows] == shown
    assert [[c["masked"] for c in row["cells"]] for row in rows] == masked
    assert all(0 <= c["left"] and c["right"] <= 800 for row in rows for c in row["cells"])

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


def _page(scenario: Scenario, folder: Path) -> Path:
    page = folder / "numbers.html"
    page.write_text(
        f"<!doctype html><html><head><meta charset='utf-8'><style>{STYLE}</style></head>"
        f"<body><h1>{html.escape(scenario.title)}</h1>{scenario_summary(scenario)}</body></html>",
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

"""Read the numbers back from rendered frames: a fresh scenario, a still, Tesseract, the core's numbers.

Nothing here asks a scene what it drew. A scenario nobody has seen is drawn from a seed
(:func:`fresh_scenario`), each scene's last frame is rendered for it by manim in a process of its
own (:func:`render_still`), and Tesseract, an OCR engine that owes nothing to the project, reads
the frame (:func:`numbers_read`): the whole frame, then each word that looks like a number but did
not read as one again, alone, enlarged and restricted to digits, minus signs and dots.
The words are grouped into lines by their own boxes (:func:`lines_of`), and the numbers of each
line compared with what :func:`attention_math.self_attention` computes for the scenario, rounded
here to the scenario's precision (:func:`shown`).

Run as a script, this module is the render process: ``python tests/frame_reading.py [--plant
FIELD:SHIFT] -- <manim render arguments>``. ``--plant`` adds SHIFT to every number of FIELD the
scene draws (a planted wrong number), to prove the read-back can fail.
"""

from __future__ import annotations

import os
import re
import shutil
import string
import subprocess
import sys
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from decimal import ROUND_HALF_EVEN, Decimal
from pathlib import Path

import numpy as np

from attention_math import AttentionTrace, Scenario, ScenarioError, scenario_to_toml, self_attention

__all__ = [
    "IN_ORDER",
    "LAST_FRAMES",
    "READINGS",
    "SEED_VARIABLE",
    "Word",
    "draw_seed",
    "fresh_scenario",
    "fresh_scenarios",
    "fresh_seed",
    "ink",
    "kv_cache_numbers",
    "lines_of",
    "numbers_read",
    "online_softmax_numbers",
    "read_back",
    "read_back_problems",
    "read_line_by_line",
    "render_still",
    "render_stills",
    "reread_numbers",
    "scores_numbers",
    "shown",
    "softmax_numbers",
    "still_of",
    "tesseract_words",
    "trace_of",
    "weighted_sum_numbers",
]

ROOT = Path(__file__).resolve().parents[1]
SEED_VARIABLE = "ATTENTION_READ_BACK_SEED"
"""Set it to replay a run: the seed every failure message and the test's output name."""

TOKEN_LETTERS = string.ascii_lowercase
"""Tokens are made of letters only: a digit in a token would be a number on screen of no trace."""


def fresh_seed() -> int:
    """A seed nobody chose: 32 bits from the operating system."""
    return int.from_bytes(os.urandom(4), "little")


def draw_seed() -> int:
    """The seed of this run: :data:`SEED_VARIABLE` when set (to replay a run), else a fresh one."""
    given = os.environ.get(SEED_VARIABLE, "").strip()
    return int(given) if given else fresh_seed()


def fresh_scenario(seed: int, max_tokens: int = 6, accepts: Callable[[Scenario], object] | None = None) -> Scenario:
    """A scenario drawn from ``seed``, within what the scenes accept (redrawn until it is), and what ``accepts``
    (a scene's ``check_scenario``) does not refuse.

    2 to ``max_tokens`` tokens of 2 to 7 letters, d_in 2–6, d_k and d_v 1–4, any query, 1 to 3
    decimals, scaled; embeddings and weights normal, their spread drawn too.
    """
    from scenes.base import check_scene_limits  # the scenes' own limits; manim is imported here only

    rng = np.random.default_rng(seed)
    while True:
        n, d_in = int(rng.integers(2, max_tokens + 1)), int(rng.integers(2, 7))
        d_k, d_v = int(rng.integers(1, 5)), int(rng.integers(1, 5))
        tokens = ["".join(rng.choice(list(TOKEN_LETTERS), int(rng.integers(2, 8)))) for _ in range(n)]
        spread = float(rng.uniform(0.3, 1.2))
        scenario = Scenario(
            f"read-back {seed}", tokens, rng.normal(0, spread, (n, d_in)), rng.normal(0, spread, (d_in, d_k)),
            rng.normal(0, spread, (d_in, d_k)), rng.normal(0, spread, (d_in, d_v)),
            query=int(rng.integers(0, n)), precision=int(rng.integers(1, 4)))
        try:
            check_scene_limits(scenario)
            if accepts is not None:
                accepts(scenario)
            return scenario
        except ScenarioError:
            continue


def trace_of(scenario: Scenario) -> AttentionTrace:
    """The scenario's trace, computed by the core from its inputs (not by the scenario, not by a scene)."""
    return self_attention(scenario.embeddings, scenario.w_query, scenario.w_key, scenario.w_value,
                          scaled=scenario.scaled)


def shown(value: float, precision: int) -> str:
    """``value`` rounded as a reader sees it: fixed decimals, half to even, ASCII minus, no "-0.00"."""
    rounded = Decimal(float(value)).quantize(Decimal(1).scaleb(-precision), rounding=ROUND_HALF_EVEN)
    return f"{rounded:f}".replace("-", "") if rounded == 0 else f"{rounded:f}"


# -- rendering ---------------------------------------------------------------------------------------

STILL_SIZE = (1600, 900)
"""The stills' size in pixels: the smallest numbers (WeightedSum's at the font floor) about 28 pixels high."""


def render_still(module: str, scene: str, scenario: Scenario, folder: Path, size: tuple[int, int] = STILL_SIZE,
                 plant: str | None = None) -> subprocess.Popen[bytes]:
    """Start rendering ``scene``'s last frame for ``scenario`` into ``folder``/still.png (wait on the process).

    The render is ``manim render -s`` at ``size`` with the project's ``manim.cfg``, in a process of its
    own that reads the scenario from a TOML file, as the bundle's renders do; ``plant`` (``FIELD:SHIFT``)
    plants a wrong number.
    """
    folder.mkdir(parents=True, exist_ok=True)
    toml = folder / "scenario.toml"
    toml.write_text(scenario_to_toml(scenario), encoding="utf-8")
    source = ROOT / (module.replace(".", "/") + ".py")
    media = folder / "media"
    manim_args = ["render", "--config_file", str(ROOT / "manim.cfg"), "-s", "-r", f"{size[0]},{size[1]}",
                  "--disable_caching", "--media_dir", str(media), "-o", "still", "-v", "ERROR", str(source), scene]
    command = [sys.executable, str(Path(__file__).resolve()), *(["--plant", plant] if plant else []), "--",
               *manim_args]
    env = {**os.environ, "ATTENTION_SCENARIO": str(toml), "PYTHONPATH": str(ROOT)}
    env.pop("ATTENTION_QUERY", None)
    # in the folder: manim writes the captions (.srt) beside the output's name, in the working folder
    return subprocess.Popen(command, cwd=folder, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def still_of(folder: Path) -> Path:
    """The PNG a finished :func:`render_still` wrote."""
    made = sorted((folder / "media").rglob("still*.png"))
    if not made:
        raise FileNotFoundError(f"no still was rendered under {folder / 'media'}")
    return made[-1]


def _plant(field_and_shift: str) -> None:
    """Make every number of one field the scenes draw wrong by SHIFT (in the render process only)."""
    from scenes.base import ExplainerScene

    field, shift = field_and_shift.split(":")
    value_of = ExplainerScene.value_of

    def planted(self: ExplainerScene, fact: object) -> float:
        number = value_of(self, fact)  # type: ignore[arg-type]
        return number + float(shift) if getattr(fact, "field", None) == field else number

    ExplainerScene.value_of = planted  # type: ignore[method-assign]


# -- reading ------------------------------------------------------------------------------------------

TESSERACT = shutil.which("tesseract")
DASHES = "\u2212\u2013\u2014\u2012-_~"
"""What Tesseract makes of a minus sign (U+2212 on screen) without a whitelist."""
NUMBER = re.compile(r"-?\d+\.\d+")
"""A number with decimals; anything else around it (a vector's parenthesis, its comma) separates."""
NUMERIC_LOOKING = re.compile(r"\d.*[.,]|[.,].*\d")
"""A word worth reading again as a number: a digit and a point (the first reading may have made a 0 an O)."""
LOOKALIKE = re.compile(r"[OoIlSBZ|][\d.]|[\d.][OoIlSBZ|]")
"""A letter that looks like a digit, touching a digit or the point: the word is read again as a number."""
DIGITS = "0123456789.-"
"""What the second reading of a number may hold: digits, the minus sign, the point."""


@dataclass(frozen=True)
class Word:
    """One word Tesseract read, its text and box in the frame's pixels."""

    text: str
    left: int
    top: int
    width: int
    height: int

    @property
    def middle(self) -> float:
        return self.top + self.height / 2

    @property
    def numbers(self) -> list[str]:
        """The numbers with decimals the word holds, as written with an ASCII minus."""
        plain = re.sub("-+", "-", "".join("-" if c in DASHES else c for c in self.text))
        return NUMBER.findall(plain)


def ink(png: Path) -> np.ndarray:
    """The frame as black ink on white (uint8): brightest channel (the scenes' text is light on dark), thresholded."""
    from PIL import Image

    drawn = np.asarray(Image.open(png).convert("RGB"), dtype=np.uint8).max(axis=2) > 110
    # bars, rules and tall brackets are no text: left in, they make Tesseract drop the numbers beside them
    drawn &= ~_long_runs(drawn, LONG_RUN) & ~_long_runs(drawn.T, TALL_RUN).T
    return np.where(drawn, 0, 255).astype(np.uint8)


LONG_RUN, TALL_RUN = 64, 40
"""Ink runs at least this long across (this tall) are no glyph at 1600 × 900 (digits are about 24 pixels high)."""


def _long_runs(drawn: np.ndarray, length: int) -> np.ndarray:
    """The pixels of each row that lie in a run of at least ``length`` drawn pixels."""
    sums = np.cumsum(np.pad(drawn.astype(np.int32), ((0, 0), (1, 0))), axis=1)
    full = (sums[:, length:] - sums[:, :-length]) == length  # the run of ``length`` starting here is all drawn
    starts = np.cumsum(np.pad(full.astype(np.int32), ((0, 0), (length, length - 1))), axis=1)
    width = drawn.shape[1]
    covered: np.ndarray = (starts[:, length:length + width] - starts[:, :width]) > 0  # a full run covers it
    return covered


def tesseract_words(page: np.ndarray, psm: int, whitelist: str | None = None) -> list[Word]:
    """Tesseract's words on a black-on-white page, with their boxes (its TSV output)."""
    from PIL import Image

    if TESSERACT is None:
        raise FileNotFoundError("tesseract is not installed (Debian: tesseract-ocr tesseract-ocr-eng)")
    with tempfile.TemporaryDirectory(prefix="read-back-") as scratch:
        path = Path(scratch) / "page.png"
        Image.fromarray(page).save(path)
        command = [TESSERACT, str(path), "stdout", "--psm", str(psm), "-l", "eng"]
        if whitelist is not None:
            command += ["-c", f"tessedit_char_whitelist={whitelist}"]
        tsv = subprocess.run([*command, "tsv"], capture_output=True, text=True, check=True,
                             env={**os.environ, "OMP_THREAD_LIMIT": "1"}).stdout
    words = []
    for row in tsv.splitlines()[1:]:
        cells = row.split("\t")
        if len(cells) == 12 and cells[0] == "5" and cells[11].strip():
            left, top, width, height = (int(cells[k]) for k in (6, 7, 8, 9))
            words.append(Word(cells[11].strip(), left, top, width, height))
    return words


def reread_numbers(page: np.ndarray, words: Sequence[Word], scale: int = 2) -> list[Word]:
    """The words that look like a number but did not read as one alone (a 0 read as an O) read again, each
    cut out alone, enlarged, as digits, minus and point only. The first reading of a clean number is
    kept: read again this way, a minus sign at the cut's edge was lost, and a 7 read as a 1.

    Each cut-out is the word's box with a margin, the other words' boxes in it blanked (Tesseract's
    boxes may overlap: a highlight's frame joins two words); they are stacked on one white sheet, a
    line each, enlarged ``scale`` times and read in one pass (``--psm 6``). A word whose line comes
    back without a number keeps its first reading.
    """
    from PIL import Image

    numeric = [w for w in words if NUMERIC_LOOKING.search(w.text) and (not w.numbers or LOOKALIKE.search(w.text))]
    if not numeric:
        return list(words)
    crops = [_alone(page, word, words) for word in numeric]
    pitch = max(c.shape[0] for c in crops) * 2
    sheet = np.full((pitch * (len(crops) + 1), max(c.shape[1] for c in crops) + 24), 255, np.uint8)
    for k, crop in enumerate(crops):
        sheet[pitch // 2 + k * pitch:pitch // 2 + k * pitch + crop.shape[0], 12:12 + crop.shape[1]] = crop
    big = np.asarray(Image.fromarray(sheet).resize((sheet.shape[1] * scale, sheet.shape[0] * scale),
                                                   Image.Resampling.LANCZOS))
    by_line: dict[int, list[Word]] = {}
    for word in tesseract_words(big, psm=6, whitelist=DIGITS):
        by_line.setdefault(int(word.middle / scale) // pitch, []).append(word)
    reread = {id(w): "".join(x.text for x in sorted(by_line.get(k, []), key=lambda x: x.left))
              for k, w in enumerate(numeric)}
    return [Word(reread[id(w)], w.left, w.top, w.width, w.height)
            if Word(reread.get(id(w), ""), 0, 0, 0, 0).numbers else w for w in words]


def _alone(page: np.ndarray, word: Word, words: Sequence[Word], pad: int = 6) -> np.ndarray:
    """The word's box with a margin, cut out of the page, every other word's box in it blanked."""
    top, left = max(word.top - pad, 0), max(word.left - pad, 0)
    crop = page[top:word.top + word.height + pad, left:word.left + word.width + pad].copy()
    for other in words:
        if other is not word:
            rows = slice(max(other.top - top, 0), max(other.top + other.height - top, 0))
            columns = slice(max(other.left - left, 0), max(other.left + other.width - left, 0))
            crop[rows, columns] = 255
    return crop


def lines_of(words: Sequence[Word]) -> list[list[Word]]:
    """The words grouped into lines, top to bottom, each left to right: a word joins a line its middle lies in."""
    lines: list[list[Word]] = []
    for word in sorted(words, key=lambda w: w.middle):
        line = lines[-1] if lines else None
        if line is not None and abs(word.middle - float(np.mean([w.middle for w in line]))) < 0.5 * word.height:
            line.append(word)
        else:
            lines.append([word])
    return [sorted(line, key=lambda w: w.left) for line in lines]


def numbers_read(png: Path, psm: int, reread: int, enlarge: int = 1) -> list[tuple[float, list[str]]]:
    """The numbers with decimals Tesseract reads in the frame, line by line: each line's height in the
    frame (its words' middle, in pixels) and its numbers left to right (lines without one left out).

    ``psm``: Tesseract's page segmentation mode for the whole frame; ``reread``: the enlargement of
    the numbers read again alone (:func:`reread_numbers`), 0 to keep the first reading; ``enlarge``:
    the whole frame's (heights are given in the frame's own pixels all the same).
    """
    from PIL import Image

    page = ink(png)
    if enlarge != 1:
        page = np.asarray(Image.fromarray(page).resize((page.shape[1] * enlarge, page.shape[0] * enlarge),
                                                       Image.Resampling.LANCZOS))
    words = tesseract_words(page, psm)
    if reread:
        words = reread_numbers(page, words, reread)
    lines = [(float(np.mean([w.middle for w in line])) / enlarge, [n for w in line for n in w.numbers])
             for line in lines_of(words)]
    return [(middle, numbers) for middle, numbers in lines if numbers]


READINGS: tuple[tuple[int, int, int], ...] = ((11, 2, 1), (6, 2, 1), (11, 1, 1), (6, 1, 1), (11, 2, 2))
"""The ways a frame is read, ``(page segmentation mode, enlargement of the numbers read again alone or 0,
enlargement of the whole frame)``, tried in turn until the expected numbers are read (the frame twice as
large parts "= 1.4" that it reads as "=14" at its own size)."""
SAME_LINE = 12.0
"""Lines of two readings whose middles are this close (pixels; a row of numbers is 25 or more high) are one."""


def read_line_by_line(readings: Sequence[Sequence[tuple[float, list[str]]]], expected: Sequence[str]) -> bool:
    """Is ``expected`` the frame's numbers, each line (top to bottom) as some reading read all of it?

    The lines of every reading are matched by their height in the frame; each line must be read, by
    at least one reading, as exactly its part of ``expected``, and no line may be left out: a reading
    that misses a line or slips on a digit is outvoted only by one that reads that line right.
    """
    found = sorted((middle, k, numbers) for k, reading in enumerate(readings) for middle, numbers in reading)
    groups: list[list[tuple[float, int, list[str]]]] = []
    for line in found:
        if groups and line[0] - groups[-1][0][0] <= SAME_LINE:
            groups[-1].append(line)
        else:
            groups.append([line])
    reached = {0}
    for group in groups:
        candidates = {k: [n for _, j, numbers in group if j == k for n in numbers] for _, k, _ in group}
        reached = {i + len(c) for i in reached for c in candidates.values() if list(expected[i:i + len(c)]) == c}
    return len(expected) in reached


def read_back(png: Path, expected: Sequence[str], in_order: bool = False) -> tuple[bool, list[list[list[str]]]]:
    """Are ``expected`` the numbers read in the frame, in reading order? And every reading tried.

    The frame is read in the ways of :data:`READINGS` in turn until every line of it has been read as
    its part of ``expected`` (:func:`read_line_by_line`): nothing more, nothing less. With
    ``in_order``, ``expected`` need only be read in that order among other numbers (a frame showing
    more than the numbers checked). An OCR slip makes a reading disagree, never a wrong frame agree.
    """
    readings = []
    for psm, reread, enlarge in READINGS:
        readings.append(numbers_read(png, psm, reread, enlarge))
        if in_order:
            flat = iter(n for _, line in readings[-1] for n in line)
            if all(number in flat for number in expected):
                break
        elif read_line_by_line(readings, expected):
            break
    else:
        return False, [[line for _, line in reading] for reading in readings]
    return True, [[line for _, line in reading] for reading in readings]


# -- what each scene's last frame shows, from the core ------------------------------------------------


def softmax_numbers(scenario: Scenario, trace: AttentionTrace) -> list[str]:
    """ScaleAndSoftmax's summary: √d_k and the largest scaled score m in its head; per key its score,
    score ÷ √d_k, exp(· − m), weight and running total of the weights; the sum of the exps below."""
    q, p = scenario.query, scenario.precision
    scaled = np.asarray(trace.scaled_scores[q], dtype=float)
    exps = np.exp(scaled - scaled.max())
    weights = np.asarray(trace.weights[q], dtype=float)
    rows = zip(trace.scores[q], scaled, exps, weights, np.cumsum(weights), strict=True)
    numbers = [float(np.sqrt(trace.d_k)), float(scaled.max()), *(x for row in rows for x in row), float(exps.sum())]
    return [shown(x, p) for x in numbers]


def scores_numbers(scenario: Scenario, trace: AttentionTrace) -> list[str]:
    """Scores' bars: each key's score q·k, top to bottom. Checked in order among the frame's other numbers:
    some scenarios' last frame also works the query's scores out beside the bars (q, K, the products)."""
    return [shown(x, scenario.precision) for x in trace.scores[scenario.query]]


def weighted_sum_numbers(scenario: Scenario, trace: AttentionTrace) -> list[str]:
    """WeightedSum's table: per key its weight, its value v_j and weight × v_j; then z, the context vector."""
    q, p = scenario.query, scenario.precision
    numbers: list[float] = []
    for weight, values in zip(trace.weights[q], trace.values, strict=True):
        numbers += [float(weight), *values, *(float(weight) * np.asarray(values))]
    return [shown(x, p) for x in [*numbers, *trace.context[q]]]


def online_softmax_numbers(scenario: Scenario, trace: AttentionTrace) -> list[str]:
    """OnlineSoftmax's walk (lecture 11), worked here from the inputs in plain numpy, tile by tile: per key its
    score s and its tile's exp(s − m), m the running maximum after its tile. Checked in order among the
    frame's other numbers: the tiles' m, rescale, ℓ and o are drawn dimmed once passed (too faint to read),
    the value columns only while they fit, and the last lines' first numbers (o / ℓ = …, softmax(s)·V = …)
    stand right after their labels, where Tesseract missed one (seed 3665305220: "V = 1.4")."""
    from scenes.plan import FLASH_BLOCKS  # the tile size the scene walks with (a setting, not a number it shows)

    q, p, tile = scenario.query, scenario.precision, FLASH_BLOCKS[0]
    query, keys = scenario.embeddings[q] @ scenario.w_query, scenario.embeddings @ scenario.w_key
    scores = keys @ query / (np.sqrt(scenario.d_k) if scenario.scaled else 1.0)
    numbers: list[float] = []
    running = -np.inf
    for start in range(0, len(scores), tile):
        block = scores[start:start + tile]
        running = max(running, float(block.max()))
        numbers += [x for pair in zip(block, np.exp(block - running), strict=True) for x in pair]
    return [shown(x, p) for x in numbers]


def kv_cache_numbers(scenario: Scenario, trace: AttentionTrace) -> list[str]:
    """KVCacheSteps' last step (lecture 9), the last token's, worked here from the inputs in plain numpy: its
    weights over the cached keys, top to bottom, in order among the frame's other numbers. Not the caches:
    their earlier rows are drawn dimmed, and a minus sign in the keys' blue or the values' green is too thin
    to survive the threshold (2 of 20 fresh seeds lost one); nor q_n and z_n, which stand beside the rows at
    heights that depend on the sizes."""
    x = scenario.embeddings
    query, keys = x[-1] @ scenario.w_query, x @ scenario.w_key
    scores = keys @ query / (np.sqrt(scenario.d_k) if scenario.scaled else 1.0)
    weights = np.exp(scores - scores.max()) / np.exp(scores - scores.max()).sum()
    return [shown(w, scenario.precision) for w in weights]


LAST_FRAMES: dict[str, tuple[str, Callable[[Scenario, AttentionTrace], list[str]]]] = {
    "ScaleAndSoftmax": ("scenes.self_attention.softmax", softmax_numbers),
    "Scores": ("scenes.self_attention.scores", scores_numbers),
    "WeightedSum": ("scenes.self_attention.weighted_sum", weighted_sum_numbers),
    "OnlineSoftmax": ("scenes.flash_attention.online_softmax", online_softmax_numbers),
    "KVCacheSteps": ("scenes.inference.kv_cache", kv_cache_numbers),
}
"""The scenes whose last frame is read back: module, and the numbers it shows in reading order."""
IN_ORDER = frozenset({"Scores", "OnlineSoftmax", "KVCacheSteps"})
"""The scenes whose numbers are checked in order among others (:func:`read_back`), not as all there is."""


def fresh_scenarios(seed: int, scenes: Sequence[str]) -> dict[str, Scenario]:
    """Each scene's scenario from ``seed``: :func:`fresh_scenario`'s, or for a scene with limits of its own (the
    KV cache's columns beside its panel) the first of the seed's draws that scene accepts."""
    import importlib

    made: dict[str, Scenario] = {}
    for name in scenes:
        cls = getattr(importlib.import_module(LAST_FRAMES[name][0]), name)
        made[name] = fresh_scenario(seed, accepts=cls.check_scenario)
    return made


def render_stills(scenario: Scenario | Mapping[str, Scenario], folder: Path, scenes: Sequence[str],
                  plant: str | None = None) -> dict[str, Path]:
    """Render the last frame of each of ``scenes`` for ``scenario`` (or each its own, by name), two at a time;
    the PNG of each."""
    stills: dict[str, Path] = {}
    pending = list(scenes)
    while pending:
        batch, pending = pending[:2], pending[2:]
        running = [(name, render_still(LAST_FRAMES[name][0], name, _of(scenario, name), folder / name, plant=plant))
                   for name in batch]
        for name, process in running:
            _, errors = process.communicate()
            if process.returncode != 0:
                raise RuntimeError(f"rendering {name} failed ({process.returncode}): {errors.decode()[-2000:]}")
            stills[name] = still_of(folder / name)
    return stills


def _of(scenario: Scenario | Mapping[str, Scenario], name: str) -> Scenario:
    return scenario[name] if isinstance(scenario, Mapping) else scenario


def read_back_problems(seed: int, scenario: Scenario | Mapping[str, Scenario], stills: dict[str, Path]) -> list[str]:
    """Each still whose numbers no reading finds as the core computes them (for ``scenario``, or each its own by
    name), with what each reading found."""
    problems = []
    for name, png in stills.items():
        own = _of(scenario, name)
        expected = LAST_FRAMES[name][1](own, trace_of(own))
        agrees, tried = read_back(png, expected, in_order=name in IN_ORDER)
        if not agrees:
            readings = "\n".join(f"    read {lines}" for lines in tried)
            problems.append(f"{name} (seed {seed}, replay with {SEED_VARIABLE}={seed}; frame {png}):\n"
                            f"    core {expected}\n{readings}")
    return problems


def main(argv: Sequence[str]) -> int:
    """The render process: plant a fault if asked, then run manim's command line."""
    args = list(argv)
    if args[:1] == ["--plant"]:
        _plant(args[1])
        args = args[2:]
    if args[:1] == ["--"]:
        args = args[1:]
    from manim.__main__ import main as manim_main

    sys.argv = ["manim", *args]
    manim_main()
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    raise SystemExit(main(sys.argv[1:]))

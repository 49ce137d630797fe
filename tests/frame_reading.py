"""Read the numbers back from rendered frames, each number in its own box.

A scene records every number it draws (``scene.shown``: the fact, the text, the mobject). Run as a
script, this module is the render process (:func:`main`): it renders one scene's last frame for a
scenario and writes, beside the PNG, every recorded number whose mobject is on screen at the end (in
the family of the scene's mobjects, drawing something: not faded out): its facts, the text the scene
drew and its box in pixels (:func:`boxes_on_screen`, measured at the end, so a number moved or scaled
after it was recorded stands where it is drawn).

The reader (:func:`read_frame`) crops each box with a small margin, makes the crop black ink on white
(:func:`normalised`: each pixel's distance from the crop's own background colour, stretched within the
crop, so dimmed or coloured numbers read alike), enlarges it and hands it to Tesseract, an OCR engine
that owes nothing to the project, as one line (``--psm 7``): a number alone with a whitelist of digits,
``-`` and ``.``; a label holding numbers among other text without one, its numbers taken in order
(``number_checks.numbers_in``, its tokens taken out). What is read is compared with the CORE:
``number_checks.expected_for`` of each fact, derived from the scenario and ``attention_math`` alone. The
scene's record only says where to look and which fact stands there.

``python tests/frame_reading.py [--plant FIELD:SHIFT] --scene NAME --scenario FILE.toml --out FOLDER``
renders; ``--plant`` adds SHIFT to every number of FIELD the scene draws (a planted wrong number), to
prove the read-back can fail.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import string
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from attention_math import Scenario, ScenarioError, scenario_to_toml

__all__ = [
    "SCENES",
    "STILL_SIZE",
    "TESSERACT",
    "Frame",
    "NumberBox",
    "Reading",
    "boxes_on_screen",
    "fresh_scenario",
    "fresh_scenario_for",
    "fresh_seed",
    "normalised",
    "read_boxes",
    "read_frame",
    "render_frame",
    "render_frames",
    "scene_class",
    "tesseract_lines",
]

ROOT = Path(__file__).resolve().parents[1]
TOKEN_LETTERS = string.ascii_lowercase
"""Fresh tokens are made of letters only (a token's digits are taken out of a label before its numbers are read)."""
STILL_SIZE = (1600, 900)
"""The frames' size in pixels: the smallest numbers (at the font floor) about 24 pixels high."""


def _scenes() -> dict[str, str]:
    from scenes.registry import lectures

    return {name: module for lecture in lectures() for module, name in lecture.scenes}


SCENES: dict[str, str] = _scenes()
"""Every scene of every lecture (``scenes.registry.lectures()``), by name: its module."""


def scene_class(name: str) -> Any:
    """The scene class ``name`` of the lectures."""
    import importlib

    return getattr(importlib.import_module(SCENES[name]), name)


# -- fresh scenarios (the sweep, tools/readback.py) ----------------------------------------------------


def fresh_seed() -> int:
    """A seed nobody chose: 32 bits from the operating system."""
    return int.from_bytes(os.urandom(4), "little")


def fresh_scenario(seed: int, max_tokens: int = 6, accepts: Callable[[Scenario], object] | None = None,
                   precisions: tuple[int, int] = (1, 3)) -> Scenario:
    """A scenario drawn from ``seed``, within what the scenes accept (redrawn until it is), and what ``accepts``
    (a scene's ``check_scenario``) does not refuse.

    2 to ``max_tokens`` tokens of 2 to 7 letters, d_in 2–6, d_k and d_v 1–4, any query, ``precisions`` decimals
    (from, to), scaled; embeddings and weights normal, their spread drawn too.
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
            query=int(rng.integers(0, n)), precision=int(rng.integers(precisions[0], precisions[1] + 1)))
        try:
            check_scene_limits(scenario)
            if accepts is not None:
                accepts(scenario)
            return scenario
        except ScenarioError:
            continue


MODEL_WORDS = ("the cat dog bird sat ran sang on under near a mat tree river small old red quick lazy "
               "house river music people often read books water light").split()
"""Words the sweep's sentences for a real model's head are drawn from."""


def _model_scenario(seed: int) -> Scenario:
    """A sentence of 2 to 8 of :data:`MODEL_WORDS`, a layer and a head of all-MiniLM-L6-v2, a query, from ``seed``."""
    from attention_math.scenario import ModelChoice

    rng = np.random.default_rng(seed)
    words = [str(w) for w in rng.choice(MODEL_WORDS, int(rng.integers(2, 9)))]
    choice = ModelChoice("minilm", " ".join(words).capitalize() + ".", layer=int(rng.integers(1, 7)),
                         head=int(rng.integers(1, 13)))
    scenario = Scenario.from_model(choice)
    return scenario.with_query(int(rng.integers(1, scenario.n_tokens + 1)))


def _heads_scenario(seed: int, accepts: Callable[[Scenario], object]) -> Scenario:
    """A sentence of 2 to 8 words of letters with 2 to 4 heads (their keys and values maybe shared by groups)."""
    from dataclasses import replace

    from scenes.base import check_scene_limits

    rng = np.random.default_rng(seed)
    while True:
        n, heads = int(rng.integers(2, 9)), int(rng.integers(2, 5))
        words = " ".join("".join(rng.choice(list(TOKEN_LETTERS), int(rng.integers(2, 8)))) for _ in range(n))
        scenario = Scenario.from_sentence(
            words, seed=int(rng.integers(0, 2**31)), d_model=int(rng.integers(2, 7)), d_k=int(rng.integers(1, 5)),
            d_v=int(rng.integers(1, 5)), heads=heads, query=int(rng.integers(1, n + 1)),
            precision=int(rng.integers(1, 4)))
        groups = [g for g in range(1, heads + 1) if heads % g == 0]
        size = heads // groups[int(rng.integers(0, len(groups)))]
        first = [i - i % size for i in range(heads)]  # each group's heads share its first head's W_K and W_V
        scenario = replace(scenario, w_key=scenario.w_key[first], w_value=scenario.w_value[first])
        try:
            accepts(check_scene_limits(scenario))
            return scenario
        except ScenarioError:
            continue


def fresh_scenario_for(seed: int, scene: str) -> Scenario:
    """The scenario scene ``scene`` is read with for ``seed``: its lecture's preset for a scene that shows its own
    numbers whatever the scenario (its lecture's ``own_preset``), a real model's head for the real-head lecture,
    several heads for the scenes that draw every head, else :func:`fresh_scenario` (0 to 4 decimals) that the scene
    accepts."""
    from attention_math import preset
    from scenes.registry import lecture_of_scene

    cls, lecture = scene_class(scene), lecture_of_scene(scene)
    if scene in lecture.own_preset:  # it draws the same whatever the scenario (its positions count its own matrices)
        return preset(lecture.preset)
    if lecture.model:
        return _model_scenario(seed)
    if scene in lecture.all_heads:
        return _heads_scenario(seed, cls.check_scenario)
    return fresh_scenario(seed, accepts=cls.check_scenario, precisions=(0, 4))


# -- rendering -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class NumberBox:
    """One mobject on screen at the end holding recorded numbers: its facts (in the order of its text), the texts the
    scene drew for them, the whole text of the mobject, its tokens, and its box in pixels (left, top, right, bottom)."""

    facts: tuple[Any, ...]
    drawn: tuple[str, ...]
    text: str
    tokens: tuple[str, ...]
    box: tuple[float, float, float, float]
    alone: bool
    """Does the box hold its one number's glyphs and nothing else (a number, or one number of a label)?"""
    turns: int = 0
    """Quarter turns (anticlockwise) its text is drawn turned by (an axis's title along it)."""


@dataclass(frozen=True)
class Frame:
    """A rendered last frame: the scene, its scenario, the PNG, and the numbers on it (:class:`NumberBox`)."""

    scene: str
    scenario: Scenario
    png: Path
    boxes: tuple[NumberBox, ...]


NUMBER = re.compile(r"[−-]?\d+(?:\.\d+)?|[−-]?∞")
"""A number in a label's text, as ``number_checks.numbers_in`` finds them (its k-th is the label's k-th fact)."""


def boxes_on_screen(scene: Any) -> list[dict[str, Any]]:
    """Every recorded number of ``scene`` on screen now: its facts, the texts drawn, the mobject's text and tokens,
    and its box in pixels (manim's frame, ``frame_width`` × ``frame_height`` about its centre, y up, to the camera's
    pixels). A Pango label is split into its numbers, each boxed by its own glyphs (:func:`glyph_boxes`); another
    label (TeX) is one box of all its facts."""
    from scene_helpers import family_box, on_screen

    present = {id(mob) for mob in on_screen(scene)}
    recorded: dict[int, tuple[Any, list[Any]]] = {}
    for item in scene.shown:
        mob = item.mobject
        if mob is not None and id(mob) in present and family_box(mob) is not None:
            recorded.setdefault(id(mob), (mob, []))[1].append(item)
    camera = scene.camera
    scale = camera.pixel_width / camera.frame_width
    left_edge = camera.frame_center[0] - camera.frame_width / 2
    top_edge = camera.frame_center[1] + camera.frame_height / 2

    def pixels(box: tuple[float, float, float, float]) -> list[float]:
        left, right, bottom, top = box
        return [(left - left_edge) * scale, (top_edge - top) * scale, (right - left_edge) * scale,
                (top_edge - bottom) * scale]

    entries = []
    for mob, items in recorded.values():
        for shown, box, alone in glyph_boxes(mob, items):
            facts = [[item.fact.source, item.fact.field, list(item.fact.index), item.fact.reduce] for item in shown]
            entries.append({**describe_mobject(mob), "facts": facts, "drawn": [item.text for item in shown],
                            "box": pixels(box), "alone": alone})
    return entries


def describe_mobject(mob: Any) -> dict[str, Any]:
    from number_checks import token_texts
    from scene_helpers import text_of

    return {"text": text_of(mob), "tokens": token_texts(mob), "turns": quarter_turns(mob)}


def glyph_boxes(mob: Any, items: list[Any]) -> list[tuple[list[Any], tuple[float, float, float, float], bool]]:
    """The recorded items of one mobject and where each stands (left, right, bottom, top in frame units): one number
    alone, its box; a label whose glyphs map onto its text (:func:`glyph_places`), each number's own glyphs; else
    (a ligature, TeX this does not follow) all of them in the whole box; and whether the box holds one number alone."""
    from number_checks import token_texts
    from scene_helpers import family_box, text_of

    whole = family_box(mob)
    content = text_of(mob)
    if len(items) == 1 and content.strip() == items[0].text:
        return [(items, whole, True)]
    places = glyph_places(mob, content)
    masked = content
    for token in sorted(set(token_texts(mob)), key=len, reverse=True):
        masked = masked.replace(token, " " * len(token)) if token else masked
    spans = [match.span() for match in NUMBER.finditer(masked)]
    if places is None or len(spans) != len(items):
        return [(items, whole, False)]
    found = []
    for item, (start, end) in zip(items, spans, strict=True):
        boxes = [box for glyph, k in places if start <= k < end and (box := family_box(glyph)) is not None]
        if boxes:
            array = np.array(boxes)
            found.append(([item], (array[:, 0].min(), array[:, 1].max(), array[:, 2].min(), array[:, 3].max()),
                          True))
    return found


def glyph_places(mob: Any, content: str) -> list[tuple[Any, int]] | None:
    """Each glyph of a label and the place in its text of the letter it draws: a Pango text draws every letter but
    spaces, one glyph each; TeX one glyph a letter or command, none for ``_ ^ { }`` and spacing (:func:`tex_places`).
    ``None`` where the glyphs do not match the text one to one (a ligature)."""
    if hasattr(mob, "original_text"):
        glyphs, places = list(mob.submobjects), [k for k, c in enumerate(content) if not c.isspace()]
    else:
        glyphs = [part for part in mob.get_family() if len(part.points)]
        places = tex_places(content) or []
    return list(zip(glyphs, places, strict=True)) if places and len(glyphs) == len(places) else None


TEX_SPACING = ("\\textstyle", "\\displaystyle", "\\,", "\\;", "\\!", "\\ ", "\\quad")
TEX_NOT_ONE_GLYPH = frozenset({"text", "frac", "sqrt", "mathrm", "operatorname", "left", "right", "begin", "end"})


def tex_places(content: str) -> list[int] | None:
    """The place in a TeX formula of what each glyph draws, in order: a letter, a digit, a symbol or a command
    (``\\sum``) one glyph; ``_``, ``^``, braces, spaces and spacing commands none. ``None`` for a command that draws
    other than one glyph (``\\frac``, ``\\sqrt``, ``\\text``)."""
    places, k = [], 0
    while k < len(content):
        spacing = next((s for s in TEX_SPACING if content.startswith(s, k)), None)
        if spacing is not None:
            k += len(spacing)
        elif content[k] == "\\":
            name = re.match(r"[A-Za-z]+", content[k + 1:])
            if name is None or name.group() in TEX_NOT_ONE_GLYPH:
                return None
            places.append(k)
            k += 1 + len(name.group())
        else:
            if content[k] not in "_^{} \t\n":
                places.append(k)
            k += 1
    return places


def quarter_turns(mob: Any) -> int:
    """How many quarter turns (anticlockwise) the mobject's text is drawn turned by: from its first glyph's centre
    to its last's (0 for a text of one glyph)."""
    glyphs = [part for part in mob.get_family() if len(part.points)]
    if len(glyphs) < 2:
        return 0
    dx, dy = (glyphs[-1].get_center() - glyphs[0].get_center())[:2]
    angle = float(np.degrees(np.arctan2(dy, dx)))
    return round(angle / 90) % 4 if abs(angle) > 60 else 0


def render_last_frame(name: str, scenario: Scenario, folder: Path, size: tuple[int, int]) -> None:
    """Render scene ``name``'s last frame for ``scenario`` into ``folder``: ``frame.png`` and ``boxes.json``."""
    from manim import tempconfig

    cls = scene_class(name)
    showing = type(name, (cls,), {"scenario_override": scenario, "__module__": cls.__module__})
    options = {"pixel_width": size[0], "pixel_height": size[1], "save_last_frame": True, "write_to_movie": False,
               "disable_caching": True, "media_dir": str(folder / "media"), "verbosity": "ERROR",
               "progress_bar": "none", "output_file": "still"}
    with tempconfig(options):
        scene = showing()
        scene.render()
        scene.camera.get_image().save(folder / "frame.png")
        boxes = boxes_on_screen(scene)
    (folder / "boxes.json").write_text(json.dumps({"scene": name, "boxes": boxes}, ensure_ascii=False, indent=1),
                                       encoding="utf-8")


def render_frame(scene: str, scenario: Scenario, folder: Path, plant: str | None = None,
                 size: tuple[int, int] = STILL_SIZE) -> subprocess.Popen[bytes]:
    """Start rendering ``scene``'s last frame for ``scenario`` into ``folder`` in a process of its own (manim's
    config is global); wait on the process, then :func:`frame_of`. ``plant`` (``FIELD:SHIFT``) plants a wrong number."""
    folder.mkdir(parents=True, exist_ok=True)
    toml = folder / "scenario.toml"
    toml.write_text(scenario_to_toml(scenario), encoding="utf-8")
    command = [sys.executable, str(Path(__file__).resolve()), "--scene", scene, "--scenario", str(toml),
               "--out", str(folder), "--size", f"{size[0]},{size[1]}", *(["--plant", plant] if plant else [])]
    env = {key: value for key, value in os.environ.items() if not key.startswith("ATTENTION_")}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), str(ROOT / "tests")])
    # in the folder: manim writes what it writes beside the output's name, in the working folder
    return subprocess.Popen(command, cwd=folder, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def frame_of(scene: str, scenario: Scenario, folder: Path) -> Frame:
    """The frame a finished :func:`render_frame` wrote into ``folder``."""
    from scenes.facts import Fact

    dumped = json.loads((folder / "boxes.json").read_text(encoding="utf-8"))
    boxes = tuple(NumberBox(tuple(Fact(s, f, tuple(i), r) for s, f, i, r in entry["facts"]), tuple(entry["drawn"]),
                            entry["text"], tuple(entry["tokens"]), tuple(entry["box"]), entry["alone"],
                            entry["turns"])
                  for entry in dumped["boxes"])
    return Frame(scene, scenario, folder / "frame.png", boxes)


def render_frames(jobs: Mapping[str, tuple[str, Scenario]], folder: Path, plant: str | None = None,
                  processes: int = 2) -> Iterator[tuple[str, Frame]]:
    """Render each job (key → scene, scenario) into ``folder``/key, ``processes`` at a time; yield each frame as its
    render ends (a failed render raises, with the end of its errors)."""
    pending, running = list(jobs.items()), []
    while pending or running:
        while pending and len(running) < processes:
            key, (scene, scenario) = pending.pop(0)
            running.append((key, render_frame(scene, scenario, folder / key, plant)))
        key, process = running.pop(0)
        _, errors = process.communicate()
        if process.returncode != 0:
            raise RuntimeError(f"rendering {key} failed ({process.returncode}): {errors.decode()[-3000:]}")
        scene, scenario = jobs[key]
        yield key, frame_of(scene, scenario, folder / key)


def _plant(field_and_shift: str) -> None:
    """Make every number of one field the scenes draw wrong by SHIFT (in the render process only)."""
    from scenes.base import ExplainerScene

    field_name, shift = field_and_shift.split(":")
    value_of = ExplainerScene.value_of

    def planted(self: ExplainerScene, fact: Any) -> float:
        number = value_of(self, fact)
        return number + float(shift) if getattr(fact, "field", None) == field_name else number

    ExplainerScene.value_of = planted  # type: ignore[method-assign]


# -- reading -------------------------------------------------------------------------------------------

TESSERACT = shutil.which("tesseract")
DASHES = "\u2212\u2013\u2014\u2012_~"
"""What Tesseract makes of a minus sign (U+2212 on screen) without a whitelist: read as ``-``."""
INFINITY = re.compile(r"(?<![0-9A-Za-z])(?:[0oO]?(?:co|oo|OO|Co|CO)|00|o|∞)(?![0-9A-Za-z])")
"""What Tesseract makes of ∞ (its English data has no such letter): read as ∞ where it stands alone, in a box that
holds a ∞ ("0oo": the ∞'s left loop read twice)."""
MINUS_APART = re.compile(r"-\s+∞")
"""A minus read apart from its ∞ (the minus is wide, the ∞ small: Tesseract sees a gap): one −∞."""
SECOND_LOOK = 1.0
"""The scale a box is read again at when its first reading (× :data:`ENLARGE`) is not the core's number: of 6,317
numbers of 200 fresh frames, a dimmed "−1.1" (its point lost) and a subscript "1" (read "il") read right at × 1. A
wrong number would have to be read as the core's exact digits at one of the two scales to pass."""
DIGITS = "0123456789.-"
"""What a number alone may be read as: digits, the minus sign, the point."""
MARGIN, ENLARGE, KEEP, BORDER, LEAST_HEIGHT = 0.25, 0.8, 1.5, 10, 16.0
"""A crop's margin around its box (a share of the box's height), its scale, how far outside its box (pixels) ink is
kept (antialiasing), the white border around it (pixels), and the least height of a box read (a subscript's). Tesseract
reads these digits best a little smaller than drawn at 1600 × 900: of 773 numbers of 35 frames, 3 misread at × 0.8 and
× 0.75, 9 at × 1, 116 at × 2, 94 at × 3 (single digits and leading zeros lost)."""


@dataclass(frozen=True)
class Reading:
    """One box read: the frame's scene, the facts, what the core says they are, what Tesseract read, and the numbers
    found in it (the number alone, or a label's numbers in order)."""

    scene: str
    box: NumberBox
    expected: tuple[str, ...]
    read: str
    found: tuple[str, ...]
    crop: np.ndarray = field(compare=False, repr=False)

    @property
    def agrees(self) -> bool:
        return self.found == self.expected


def alone(box: NumberBox) -> bool:
    """Is the box one number and nothing else (read with the digits' whitelist)? A number alone, or one of a label's
    numbers boxed by its own glyphs; not ∞, which no whitelist of digits holds."""
    return box.alone and "∞" not in box.drawn[0]


def whitelisted(box: NumberBox) -> bool:
    """Is the box read with the whitelist of digits, ``-`` and ``.``? A number alone of two characters or more: with
    the whitelist a lone digit was often read as nothing (16 of 2,997 lone digits of 235 fresh frames, mostly 4s),
    without it none was misread."""
    return alone(box) and len(box.drawn[0]) > 1


def normalised(pixels: np.ndarray, box: tuple[float, float, float, float], turns: int = 0,
               enlarge: float = ENLARGE, border: int = BORDER) -> np.ndarray:
    """The box (left, top, right, bottom, in pixels) of an RGB frame, with a margin, as black ink on white: each
    pixel's distance from the background colour (the median of the box's edge), the ink outside the box taken out,
    stretched so the crop's strongest ink is black; scaled ``enlarge`` times (at least to :data:`LEAST_HEIGHT`),
    turned upright by ``turns`` quarter turns, on a white border."""
    from PIL import Image

    left, top, right, bottom = box
    pad = max(3.0, MARGIN * (bottom - top))
    rows = slice(max(int(top - pad), 0), min(int(np.ceil(bottom + pad)), pixels.shape[0]))
    columns = slice(max(int(left - pad), 0), min(int(np.ceil(right + pad)), pixels.shape[1]))
    crop = pixels[rows, columns].astype(float)
    y, x = np.mgrid[rows, columns]
    inside = (x >= left - KEEP) & (x <= right + KEEP) & (y >= top - KEEP) & (y <= bottom + KEEP)
    # the colour behind the number: the box's own edge (its glyphs touch it at their extremes only), not the margin's
    # (a heat map's cell ends close around its number)
    edge = inside & ~((x > left + 1) & (x < right - 1) & (y > top + 1) & (y < bottom - 1))
    ink = np.linalg.norm(crop - np.median(crop[edge], axis=0), axis=2)
    ink[~inside] = 0.0  # the box's own pixels only: a neighbour's ink in the margin is no part of it
    strongest = float(ink.max())
    grey = 255 * (1 - np.clip(ink / strongest, 0, 1)) if strongest > 8 else np.full(ink.shape, 255.0)
    picture = Image.fromarray(grey.astype(np.uint8))
    scale = max(enlarge, LEAST_HEIGHT / max(bottom - top, 1.0))
    if scale != 1:
        picture = picture.resize((round(picture.width * scale), round(picture.height * scale)),
                                 Image.Resampling.LANCZOS)
    if turns:
        picture = picture.rotate(-90 * turns, expand=True, fillcolor=255)
    sheet = np.full((picture.height + 2 * border, picture.width + 2 * border), 255, np.uint8)
    sheet[border:border + picture.height, border:border + picture.width] = np.asarray(picture)
    return sheet


def tesseract_lines(pictures: Sequence[np.ndarray], whitelist: str | None = None) -> list[str]:
    """What Tesseract reads in each picture (black on white) as one line of text (``--psm 7``), in one run."""
    from PIL import Image

    if TESSERACT is None:
        raise FileNotFoundError("tesseract is not installed (Debian: tesseract-ocr tesseract-ocr-eng)")
    if not pictures:
        return []
    with tempfile.TemporaryDirectory(prefix="read-back-") as scratch:
        paths = []
        for k, picture in enumerate(pictures):
            paths.append(Path(scratch) / f"{k:04d}.png")
            Image.fromarray(picture).save(paths[-1])
        listing = Path(scratch) / "pictures.txt"
        listing.write_text("".join(f"{path}\n" for path in paths), encoding="utf-8")
        command = [TESSERACT, str(listing), "stdout", "--psm", "7", "--dpi", "300", "-l", "eng"]
        if whitelist is not None:
            command += ["-c", f"tessedit_char_whitelist={whitelist}"]
        out = subprocess.run(command, capture_output=True, text=True, check=True,
                             env={**os.environ, "OMP_THREAD_LIMIT": "1"}).stdout
    pages = out.split("\f")
    if len(pages) < len(pictures):
        raise RuntimeError(f"tesseract read {len(pages)} pages of {len(pictures)}")
    return [page.strip() for page in pages[:len(pictures)]]


def found_in(box: NumberBox, read: str) -> tuple[str, ...]:
    """The numbers read: a number alone must be read whole (nothing else); a label's numbers in order, its tokens
    taken out, with the screen's minus (U+2212)."""
    from number_checks import numbers_in

    plain = "".join("-" if c in DASHES else c for c in read)
    if alone(box):
        whole = re.sub(r"\s+", "", plain)
        if not whitelisted(box):  # a lone digit, read without the whitelist: what it would have kept (a neighbour's
            whole = re.sub(r"[^0-9-]", "", whole)  # dot or comma in the margin read as "4," is no part of it)
        return (whole.replace("-", "−"),)
    if any("∞" in drawn for drawn in box.drawn):
        plain = MINUS_APART.sub("-∞", INFINITY.sub("∞", plain))
    return tuple(numbers_in(plain, box.tokens))


def read_boxes(pixels: np.ndarray, boxes: Sequence[NumberBox],
               enlarge: float = ENLARGE) -> list[tuple[str, np.ndarray]]:
    """What Tesseract reads in each box of the frame's ``pixels`` at scale ``enlarge``, and the crop it read: numbers
    alone with the whitelist of digits (in one run), the others without (in another)."""
    crops = [normalised(pixels, box.box, box.turns, enlarge=enlarge) for box in boxes]
    numbers = [k for k, box in enumerate(boxes) if whitelisted(box)]
    labels = [k for k, box in enumerate(boxes) if not whitelisted(box)]
    read = dict(zip(numbers, tesseract_lines([crops[k] for k in numbers], DIGITS), strict=True))
    read.update(zip(labels, tesseract_lines([crops[k] for k in labels]), strict=True))
    return [(read[k], crops[k]) for k in range(len(boxes))]


def read_frame(frame: Frame) -> list[Reading]:
    """Every number of the frame read in its own box, with what the core says it is (``number_checks.expected_for``
    of each fact, for the frame's scenario); a box whose reading is not the core's is read again at
    :data:`SECOND_LOOK`, and that reading kept if it is."""
    from number_checks import derive_all, expected_for
    from PIL import Image

    pixels = np.asarray(Image.open(frame.png).convert("RGB"))
    derived = derive_all(frame.scenario)
    readings = []
    for box, (read, crop) in zip(frame.boxes, read_boxes(pixels, frame.boxes), strict=True):
        expected = tuple(expected_for(fact, frame.scenario, derived)[0] for fact in box.facts)
        readings.append(Reading(frame.scene, box, expected, read, found_in(box, read), crop))
    again = [k for k, reading in enumerate(readings) if not reading.agrees]
    looks = read_boxes(pixels, [frame.boxes[k] for k in again], SECOND_LOOK)
    for k, (read, crop) in zip(again, looks, strict=True):
        second = Reading(frame.scene, frame.boxes[k], readings[k].expected, read, found_in(frame.boxes[k], read), crop)
        if second.agrees:
            readings[k] = second
    return readings


def describe(reading: Reading) -> str:
    """One line for a reading: the facts, what the core says, what was read."""
    from number_checks import describe_fact

    facts = ", ".join(describe_fact(fact) for fact in reading.box.facts)
    return (f"{reading.scene}: {facts} in {reading.box.text!r}: the core says {list(reading.expected)}, "
            f"read {reading.read!r} → {list(reading.found)}")


# -- the render process --------------------------------------------------------------------------------


def main(argv: Sequence[str]) -> int:
    """The render process: plant a fault if asked, render the scene's last frame and its boxes."""
    from attention_math import load_scenario

    parser = argparse.ArgumentParser(description="Render a scene's last frame and the boxes of its numbers.")
    parser.add_argument("--scene", required=True)
    parser.add_argument("--scenario", required=True, type=Path)
    parser.add_argument("--out", required=True, type=Path)
    parser.add_argument("--size", default=f"{STILL_SIZE[0]},{STILL_SIZE[1]}")
    parser.add_argument("--plant", default=None, help="FIELD:SHIFT, a wrong number planted")
    args = parser.parse_args(argv)
    if args.plant:
        _plant(args.plant)
    width, height = (int(n) for n in args.size.split(","))
    render_last_frame(args.scene, load_scenario(str(args.scenario)), args.out, (width, height))
    return 0


if __name__ == "__main__":
    sys.path[:0] = [str(ROOT), str(ROOT / "tests")]
    raise SystemExit(main(sys.argv[1:]))

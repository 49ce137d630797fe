"""A bundle that works in a lecture hall, tried as a lecturer would: copied to another folder, opened
in headless Chromium with no network, played with its voice, its notebook run.

One bundle, rendered once for the module at -ql: one short scene (Spaces, five beats) with
``--slides --voice``, for a hostile scenario whose title and tokens hold ``<script>``, an
``onerror`` image, quotes and ``"); import os #``, ``{{ }}``, Hebrew, a right-to-left override and
a zero-width space. The page and the deck must show them literally and run nothing of them; the
notebook must run and print them literally.
"""

from __future__ import annotations

import html.parser
import json
import re
import shutil
import time
from pathlib import Path

import pytest
import srt
from browser import CHROMIUM, Chromium, blank
from cli_runs import render_hostile, run_explainer
from test_narration import check_cues_follow_speech

from attention_explainer.escape import visible
from attention_explainer.media import probe
from attention_explainer.plan import work_folder
from attention_math import Scenario, format_number, load_scenario

pytestmark = [
    pytest.mark.render,
    pytest.mark.skipif(CHROMIUM is None, reason="make setup installs Debian's chromium"),
]

TITLE = (
    'Hostile <img src=x onerror="window.__pwned=1"><script>window.__pwned=1</script> "); import os # '
    "{{ title }} \u202eevil\u200b"
)
SENTENCE = '<script>window.__pwned=2</script> "); import {{x}} \u05e2\u05d1\u05e8 a\u200bb'
SCENES = ("03-spaces",)  # lecture.mp4 of several clips: test_narration joins two
RENDER = ["render", "--scenario", "hostile.toml", "--scenes", "spaces", "--quality", "l", "--out", "hall"]


@pytest.fixture(scope="module")
def hall(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bundle (a relative --out: manim runs in folders of its own and must still find it)."""
    folder = tmp_path_factory.mktemp("hall")
    result = render_hostile(folder, SENTENCE, TITLE, *RENDER, "--slides", "--voice")
    (folder / "render.log").write_text(result.stderr, encoding="utf-8")
    return folder / "hall"


@pytest.fixture(scope="module")
def scenario(hall: Path) -> Scenario:
    return load_scenario(hall / "scenario.toml")


@pytest.fixture(scope="module")
def copy(hall: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bundle as a lecturer's USB stick has it: the folder copied whole (the render's work is beside it)."""
    target = tmp_path_factory.mktemp("usb-stick") / "lecture"
    shutil.copytree(hall, target)
    return target


def _manifest(out: Path) -> dict:
    return json.loads((out / "manifest.json").read_text(encoding="utf-8"))


def _subtitles(out: Path, stem: str) -> list[srt.Subtitle]:
    return list(srt.parse((out / f"{stem}.srt").read_text(encoding="utf-8")))


class _Links(html.parser.HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.links: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if name in {"href", "src", "poster", "data-background-video", "data-background-image"} and value:
                self.links.append(value)


def _links(page: Path) -> list[str]:
    parser = _Links()
    parser.feed(page.read_text(encoding="utf-8"))
    return parser.links


def test_one_render_serves_clips_and_deck(hall: Path) -> None:
    log = (hall.parent / "render.log").read_text(encoding="utf-8")
    assert len(re.findall(r"Spaces: rendering", log)) == 1, log
    manifest = _manifest(hall)
    assert manifest["rendered"] == ["Spaces"]
    assert all(scene["slides"] == scene["key"] for scene in manifest["scenes"])
    assert manifest["deck"]
    assert not list(work_folder(hall).rglob("*_reversed*"))  # forward slides only
    cues = sum(len(_subtitles(hall, stem)) for stem in SCENES)
    assert len(re.findall(r"<section\b", (hall / "slides.html").read_text(encoding="utf-8"))) == cues


def test_every_file_is_listed_and_every_link_is_relative_and_there(hall: Path) -> None:
    listed = {entry["path"]: entry["kind"] for entry in _manifest(hall)["files"]}
    for rel, kind in {
        "index.html": "page", "slides.html": "deck", "reveal.js/dist/reveal.js": "deck-library",
        "reveal.js/LICENSE": "deck-library", "lecture.vtt": "webvtt", "03-spaces.vtt": "webvtt",
        "handout/notebook.ipynb": "notebook",
    }.items():
        assert listed.get(rel) == kind, rel
        assert (hall / rel).is_file()
    for page in ("index.html", "slides.html"):
        for link in _links(hall / page):
            if link.startswith("#"):
                continue
            assert not re.match(r"^[a-z][a-z0-9+.-]*:|^/", link), f"{page}: {link}"  # no scheme, no root
            assert (hall / link.split("#")[0]).is_file(), f"{page}: {link}"
    linked = set(_links(hall / "index.html"))
    assert set(listed) - {"index.html"} <= linked | {"manifest.json"}


_MEDIA = """(async () => {
  const settled = () => Array.from(document.querySelectorAll("video")).every(video =>
    (video.readyState >= 1 || video.error) && video.querySelector("track").readyState === 2);
  for (let i = 0; i < 300 && !settled(); i++) await new Promise(done => setTimeout(done, 100));
  return Array.from(document.querySelectorAll("video")).map(video => {
    const element = video.querySelector("track"), track = video.textTracks[0];
    return {id: video.id, ready: video.readyState, error: video.error && video.error.code, width: video.videoWidth,
            src: element.src.slice(0, 5), track: element.readyState, poster: video.getAttribute("poster"),
            cues: Array.from(track.cues || []).map(cue => cue.getCueAsHTML().textContent)};
  });
})()"""


_UNLOADED = """(async () => {
  // the box a video takes with its poster before its metadata (or in a browser that cannot play its
  // format): a copy of it without its source, beside it, once the poster has loaded
  const boxes = [];
  for (const video of document.querySelectorAll("video")) {
    const copy = video.cloneNode(false);
    copy.removeAttribute("src");
    video.parentNode.appendChild(copy);
    const poster = new Image();
    poster.src = video.poster;
    await poster.decode();
    await new Promise(done => requestAnimationFrame(() => requestAnimationFrame(done)));
    boxes.push([copy.clientWidth, copy.clientHeight]);
    copy.remove();
  }
  return boxes;
})()"""


def _srt_texts(out: Path, stem: str) -> list[str]:
    """The captions as the page and the deck show them (invisible characters as escapes)."""
    return [visible(cue.content) for cue in _subtitles(out, stem)]


def test_the_page_offline_shows_every_clip_with_its_subtitles_and_runs_nothing_of_the_title(
    copy: Path, tmp_path: Path
) -> None:
    with Chromium(tmp_path / "profile") as browser:
        browser.open((copy / "index.html").as_uri())
        media = browser.evaluate(_MEDIA)
        unloaded = browser.evaluate(_UNLOADED)
        picture = browser.screenshot()
        assert browser.evaluate("typeof window.__pwned") == "undefined"
        assert browser.evaluate("document.querySelector('h1').textContent") == visible(TITLE)
        assert browser.evaluate("document.title") == f"{visible(TITLE)} · Lecture 6: self-attention"
        assert browser.evaluate("document.querySelector('p.lecture').textContent") == "Lecture 6: self-attention"
        assert browser.evaluate("document.scripts.length") == 1  # the page's own
        assert browser.evaluate("document.querySelectorAll('img[src=x], script[src]').length") == 0
        tokens = browser.evaluate("Array.from(document.querySelectorAll('.facts .token')).map(t => t.textContent)")
        requests = list(browser.requests)
    assert not blank(picture)
    assert [m["id"] for m in media] == ["clip-lecture", *(f"clip-{stem}" for stem in SCENES)]
    for entry, stem in zip(media, ["lecture", *SCENES], strict=True):
        assert entry["ready"] >= 1 and entry["error"] is None and entry["width"] == 854, entry
        # a file:// page may not read its .vtt files: the page gives the track the same cues itself
        assert entry["track"] == 2 and entry["cues"] == _srt_texts(copy, stem), entry
    # until played, each video shows a summary (its scene's last frame; a one-scene lecture's, that scene's,
    # not a contact sheet of one tile) in a 16:9 box, whatever the poster's shape, before any metadata
    assert all(height > 0 and abs(width / height - 16 / 9) < 0.02 for width, height in unloaded), unloaded
    posters = [entry["poster"] for entry in media]
    assert posters == [f"stills/{SCENES[-1]}.png", *(f"stills/{stem}.png" for stem in SCENES)]
    assert tokens[:6] == [visible(token) for token in SENTENCE.split()]
    assert requests and all(url.startswith(("file:", "data:")) for url in requests), requests


def test_each_track_loads_its_vtt_file_where_files_may_read_files(copy: Path, tmp_path: Path) -> None:
    with Chromium(tmp_path / "profile", "--allow-file-access-from-files") as browser:
        browser.open((copy / "index.html").as_uri())
        media = browser.evaluate(_MEDIA)
        requests = list(browser.requests)
    for entry, stem in zip(media, ["lecture", *SCENES], strict=True):
        assert entry["src"] == "file:" and entry["track"] == 2, entry
        assert entry["cues"] == _srt_texts(copy, stem)
    assert {f"{stem}.vtt" for stem in ["lecture", *SCENES]} <= {url.rsplit("/", 1)[-1] for url in requests}
    assert all(url.startswith(("file:", "data:")) for url in requests), requests


def _slide_picture(browser: Chromium) -> tuple[dict, object]:
    """The deck's indices and its picture once the current slide's video has played to its end."""
    browser.evaluate("""(async () => {
      for (let i = 0; i < 200; i++) {
        const video = document.querySelector(".slide-background.present video");
        if (video && video.readyState >= 2 && (video.ended || video.currentTime > 30)) return true;
        if (video && video.playbackRate !== 4) video.playbackRate = 4;
        await new Promise(done => setTimeout(done, 100));
      }
      return false;
    })()""")
    time.sleep(0.3)
    return browser.evaluate("Reveal.getIndices()"), browser.screenshot()


def test_the_deck_offline_moves_on_a_key_press_and_shows_its_notes_literally(copy: Path, tmp_path: Path) -> None:
    with Chromium(tmp_path / "profile") as browser:
        browser.open((copy / "slides.html").as_uri())
        first_at, first = _slide_picture(browser)
        browser.press("ArrowRight", 39)
        second_at, second = _slide_picture(browser)
        notes = browser.evaluate(
            "Array.from(document.querySelectorAll('aside.notes')).map(a => [a.children.length, "
            "Array.from(a.querySelectorAll('*')).every(e => e.tagName === 'P'), a.textContent.trim()])"
        )
        assert browser.evaluate("typeof window.__pwned") == "undefined"
        assert browser.evaluate("document.title") == visible(TITLE)
        requests = list(browser.requests)
    assert (first_at["h"], second_at["h"]) == (0, 1)
    assert not blank(first) and not blank(second)
    assert float(abs(first.astype(int) - second.astype(int)).mean()) > 1  # the picture changed
    captions = [" ".join(text.split()) for stem in SCENES for text in _srt_texts(copy, stem)]
    assert [text for _, _, text in notes] == captions
    assert all(count == 1 and paragraphs for count, paragraphs, _ in notes)  # markdown made a paragraph, no tag
    assert requests and all(url.startswith(("file:", "data:")) for url in requests), requests


def test_every_clip_and_the_lecture_speak_and_their_subtitles_follow_the_speech(hall: Path) -> None:
    voice = work_folder(hall) / "voice"
    for stem in [*SCENES, "lecture"]:
        clip = hall / f"{stem}.mp4"
        info = probe(clip)
        assert (info.width, info.height) == (854, 480) and info.fps == pytest.approx(15, abs=0.01), stem  # -ql's own
        assert info.audio_duration is not None, stem
        assert info.audio_duration == pytest.approx(info.duration, abs=0.15), stem  # to the AAC frames
        check_cues_follow_speech(clip, _subtitles(hall, stem), voice)


def test_the_notebook_runs_and_prints_the_traces_z(copy: Path, scenario: Scenario) -> None:
    import nbformat
    from nbclient import NotebookClient

    book = nbformat.read(str(copy / "handout" / "notebook.ipynb"), as_version=4)
    NotebookClient(book, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(copy)}}).execute()
    printed = "".join(
        output.get("text", "") for cell in book.cells if cell.cell_type == "code" for output in cell.get("outputs", [])
    )
    lines = printed.splitlines()
    assert lines[0] == TITLE  # printed literally, every character
    q = scenario.query
    z = ", ".join(format_number(v, scenario.precision, minus="-") for v in scenario.trace().context[q])
    assert f"z{q + 1} = ({z})" in lines
    assert "Every step matches the handout's CSV files: X, W_Q, W_K, W_V, Q, K, V, scores" in printed


def test_a_second_render_renders_and_says_nothing_and_keeps_the_deck(hall: Path) -> None:
    voice = work_folder(hall) / "voice"
    sentences = {path.name: path.stat().st_mtime_ns for path in voice.iterdir()}
    deck = (hall / "slides.html").stat().st_mtime_ns
    for flags in (["--slides", "--voice"], ["--voice"]):  # without --slides the deck of these clips stays
        result = run_explainer(*RENDER, *flags, cwd=hall.parent)
        assert result.returncode == 0, result.stderr[-3000:]
        manifest = _manifest(hall)
        assert manifest["rendered"] == [] and manifest["deck"]
    assert {path.name: path.stat().st_mtime_ns for path in voice.iterdir()} == sentences
    assert (hall / "slides.html").stat().st_mtime_ns == deck
    assert "slides.html" in {entry["path"] for entry in _manifest(hall)["files"]}

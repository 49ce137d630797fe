"""``render --pptx``: ``lecture.pptx``, read back with python-pptx and opened in a real client,
LibreOffice Impress (headless, printing it to PDF, whose pages are then drawn and looked at).

One bundle, rendered once for the module (-ql at 5 frames a second, Scores and ScaleAndSoftmax), for a
hostile scenario: its title holds ``<script>``, ``"); import os #``, ``{{ }}``, a right-to-left
override and a zero-width space, and its tokens more of the same. The deck must hold every clip
byte for byte with its still as the poster, the captions as notes, link nothing from outside, and
show the user's text literally; LibreOffice must print a page per slide with the posters on them.
"""

from __future__ import annotations

import io
import json
import re
import shutil
import signal
import subprocess
import zipfile
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
import srt
from cli_runs import render_hostile, run_explainer
from PIL import Image
from pptx import Presentation
from pptx.enum.shapes import MSO_SHAPE_TYPE
from pptx.shapes.picture import Movie
from pptx.slide import Slide
from scene_helpers import clean_environment

from attention_explainer import cli
from attention_explainer.escape import visible
from attention_explainer.outputs.pptx import FORMULA

SOFFICE, PDFTOPPM, PDFINFO, PDFTOTEXT = (shutil.which(n) for n in ("soffice", "pdftoppm", "pdfinfo", "pdftotext"))
needs_office = pytest.mark.skipif(
    None in (SOFFICE, PDFTOPPM, PDFINFO, PDFTOTEXT), reason="make setup installs libreoffice-impress and poppler-utils"
)

TITLE = 'Hostile <script>alert(1)</script> "); import os # {{ title }} \u202eevil\u200b'
SENTENCE = 'a\u200bb "); import {{x}} <b>bold</b>'  # the query, the last token, is quoted in captions
SCENES = ("04-scores", "05-scale-and-softmax")
RENDER = ["render", "--scenario", "hostile.toml", "--scenes", "scores,softmax", "--quality", "l", "--fps", "5",
          "--out", "hall"]
OFFICE_TIMEOUT = 600  # seconds: a first start of LibreOffice with a new profile takes a few; never timed


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("pptx")
    result = render_hostile(folder, SENTENCE, TITLE, *RENDER, "--pptx")
    assert "PowerPoint: " in result.stderr
    return folder / "hall"


@pytest.fixture(scope="module")
def scene_slides(bundle: Path) -> list[Slide]:
    slides = list(Presentation(str(bundle / "lecture.pptx")).slides)
    return slides[1:-1]


def _captions(bundle: Path, stem: str) -> list[str]:
    """The clip's subtitles, in order, as the notes hold them: one line each, invisible characters as escapes."""
    cues = srt.parse((bundle / f"{stem}.srt").read_text(encoding="utf-8"))
    return [" ".join(visible(cue.content).split()) for cue in cues]


def _movie(slide: Slide) -> Movie:
    (movie,) = [shape for shape in slide.shapes if shape.shape_type == MSO_SHAPE_TYPE.MEDIA]
    return movie


def _pixels(data: bytes | Path) -> np.ndarray:
    image = Image.open(io.BytesIO(data) if isinstance(data, bytes) else data)
    return np.asarray(image.convert("RGB"))


@pytest.mark.render
def test_a_title_slide_a_slide_per_scene_and_the_contact_sheet_in_16_by_9(bundle: Path) -> None:
    deck = Presentation(str(bundle / "lecture.pptx"))
    assert len(deck.slides) == len(SCENES) + 2
    assert deck.slide_width / deck.slide_height == pytest.approx(16 / 9, abs=1e-3)
    titles = [slide.shapes.title.text for slide in deck.slides]
    assert titles == [visible(TITLE), "4. Scores", "5. Scale and softmax", "Every scene's last frame"]
    (sheet,) = [shape for shape in deck.slides[-1].shapes if shape.shape_type == MSO_SHAPE_TYPE.PICTURE]
    np.testing.assert_array_equal(_pixels(sheet.image.blob), _pixels(bundle / "stills" / "contact-sheet.png"))
    manifest = json.loads((bundle / "manifest.json").read_text(encoding="utf-8"))
    assert {"path": "lecture.pptx", "kind": "pptx"}.items() <= next(
        entry for entry in manifest["files"] if entry["path"] == "lecture.pptx"
    ).items()
    assert manifest["pptx"]
    assert '<a href="lecture.pptx">the PowerPoint deck</a>' in (bundle / "index.html").read_text(encoding="utf-8")


@pytest.mark.render
def test_each_scene_slide_embeds_its_clip_byte_for_byte_with_its_still_as_poster(
    bundle: Path, scene_slides: list[Slide]
) -> None:
    deck = Presentation(str(bundle / "lecture.pptx"))
    for slide, stem in zip(scene_slides, SCENES, strict=True):
        parts = {rel.target_part for rel in slide.part.rels.values()}
        videos = {part for part in parts if part.content_type.startswith("video/")}
        assert len(videos) == 1, stem  # the video and media relationships name one part
        (video,) = videos
        assert video.content_type == "video/mp4"
        assert video.blob == (bundle / f"{stem}.mp4").read_bytes(), stem
        movie = _movie(slide)
        (poster_id,) = movie.element.xpath(".//a:blip/@r:embed")
        poster = slide.part.related_part(poster_id).blob
        np.testing.assert_array_equal(_pixels(poster), _pixels(bundle / "stills" / f"{stem}.png"))
        # sized to the slide: as large as fits under the title, the clip's shape kept, inside the slide
        width, height = Image.open(bundle / "stills" / f"{stem}.png").size
        assert movie.width / movie.height == pytest.approx(width / height, rel=1e-3)
        assert movie.left >= 0 and movie.left + movie.width <= deck.slide_width
        assert movie.top >= slide.shapes.title.top + slide.shapes.title.height
        assert movie.top + movie.height <= deck.slide_height
        assert movie.height >= 0.85 * deck.slide_height or movie.width >= 0.9 * deck.slide_width
        # it starts as the slide opens
        delays = slide.element.xpath(f"./p:timing//p:video[.//p:spTgt/@spid='{movie.shape_id}']//p:cond/@delay")
        assert delays == ["0"], stem


@pytest.mark.render
def test_the_notes_are_the_scenes_captions_in_order(bundle: Path, scene_slides: list[Slide]) -> None:
    for slide, stem in zip(scene_slides, SCENES, strict=True):
        captions = _captions(bundle, stem)
        assert len(captions) >= 3
        assert slide.notes_slide.notes_text_frame.text.split("\n") == captions, stem


@pytest.mark.render
def test_nothing_is_linked_from_outside_the_file(bundle: Path) -> None:
    package = Presentation(str(bundle / "lecture.pptx")).part.package
    relationships = list(package.iter_rels())
    assert len(relationships) > 20
    assert all(not rel.is_external for rel in relationships), [rel.target_ref for rel in relationships]
    with zipfile.ZipFile(bundle / "lecture.pptx") as archive:
        names = archive.namelist()
        rels = [archive.read(name).decode() for name in names if name.endswith(".rels")]
    assert not any('TargetMode="External"' in text for text in rels)
    assert sum(name.startswith("ppt/media/") and name.endswith(".mp4") for name in names) == len(SCENES)


@pytest.mark.render
def test_the_hostile_title_and_tokens_are_plain_text(bundle: Path, scene_slides: list[Slide]) -> None:
    title_slide = Presentation(str(bundle / "lecture.pptx")).slides[0]
    title, subtitle = title_slide.placeholders[0], title_slide.placeholders[1]
    assert title.text_frame.text == visible(TITLE)  # \u202e and \u200b written out, as on screen
    assert "\\u202eevil\\u200b" in title.text_frame.text
    formula, tokens, query = subtitle.text_frame.text.split("\n")
    assert formula == FORMULA == "softmax(Q Kᵀ / √d_k) V"
    assert tokens == "5 tokens: " + " · ".join(visible(token) for token in SENTENCE.split())
    assert query == "query: token 5, <b>bold</b>"
    with zipfile.ZipFile(bundle / "lecture.pptx") as archive:
        xml = {name: archive.read(name) for name in archive.namelist() if name.endswith(".xml")}
    assert b"&lt;script&gt;alert(1)&lt;/script&gt;" in xml["ppt/slides/slide1.xml"]
    # nowhere markup: no tag of the user's in any part, the captions that quote tokens included
    assert not [name for name, text in xml.items() if b"<script" in text or b"<b>" in text]
    quoted = [caption for stem in SCENES for caption in _captions(bundle, stem) if "<b>bold</b>" in caption]
    assert quoted, "a caption quotes the hostile token"
    notes = [slide.notes_slide.notes_text_frame.text for slide in scene_slides]
    assert all(any(caption in text for text in notes) for caption in quoted)


@pytest.fixture(scope="module")
def printed(bundle: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """lecture.pptx printed to PDF by LibreOffice Impress: a fresh profile, no network, a timeout."""
    folder = tmp_path_factory.mktemp("office")
    command = [
        str(SOFFICE), f"-env:UserInstallation={(folder / 'profile').as_uri()}", "--headless", "--norestore",
        "--nolockcheck", "--convert-to", "pdf", "--outdir", str(folder), str(bundle / "lecture.pptx"),
    ]
    unshare = shutil.which("unshare")
    if unshare and subprocess.run([unshare, "--net", "true"], capture_output=True).returncode == 0:
        command = [unshare, "--net", *command]  # a network namespace of its own: no network at all
    env = dict(clean_environment(), HOME=str(folder))
    result = subprocess.run(command, capture_output=True, text=True, timeout=OFFICE_TIMEOUT, env=env)
    pdf = folder / "lecture.pdf"
    assert result.returncode == 0 and pdf.is_file(), result.stdout + result.stderr
    return pdf


def _pages(pdf: Path) -> list[np.ndarray]:
    subprocess.run([str(PDFTOPPM), "-r", "50", "-png", str(pdf), str(pdf.with_suffix(""))], check=True, timeout=300)
    pages = sorted(pdf.parent.glob(f"{pdf.stem}-*.png"), key=lambda p: int(p.stem.rsplit("-", 1)[1]))
    return [np.asarray(Image.open(page).convert("L")) for page in pages]


def _coarse(picture: np.ndarray) -> np.ndarray:
    """A picture as 64 × 36 averages: a pixel's shift in the PDF's placing, or thin lines drawn at
    50 dpi, leave it alone."""
    return np.asarray(Image.fromarray(picture.astype(np.uint8)).resize((64, 36), Image.BOX), dtype=float)


def _correlation(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.corrcoef(_coarse(a).ravel(), _coarse(b).ravel())[0, 1])


@pytest.mark.render
@needs_office
def test_libreoffice_prints_a_page_per_slide_with_the_posters_on_them(
    bundle: Path, scene_slides: list[Slide], printed: Path
) -> None:
    info = subprocess.run([str(PDFINFO), str(printed)], capture_output=True, text=True, check=True).stdout
    assert re.search(rf"^Pages:\s+{len(SCENES) + 2}$", info, re.MULTILINE), info
    pages = _pages(printed)
    assert len(pages) == len(SCENES) + 2
    deck = Presentation(str(bundle / "lecture.pptx"))
    stills = [np.asarray(Image.open(bundle / "stills" / f"{stem}.png").convert("L")) for stem in SCENES]
    for n, slide in enumerate(scene_slides):
        page = pages[n + 1]
        scale = page.shape[1] / deck.slide_width
        movie = _movie(slide)
        left, top = round(movie.left * scale) + 2, round(movie.top * scale) + 2
        right, bottom = round((movie.left + movie.width) * scale) - 2, round((movie.top + movie.height) * scale) - 2
        region = page[top:bottom, left:right]
        assert region.std() > 10, f"page {n + 2}: the poster's place is blank"
        scores = [_correlation(region, still) for still in stills]
        assert scores[n] > 0.9 and scores[n] == max(scores), (n, scores)  # its own still, not another's
    assert all(page.std() > 10 for page in pages)  # the title slide and the contact sheet show something


@pytest.mark.render
@needs_office
def test_libreoffice_shows_the_title_and_the_formula_literally(printed: Path) -> None:
    text = subprocess.run([str(PDFTOTEXT), "-f", "1", "-l", "1", str(printed), "-"], capture_output=True,
                          text=True, check=True).stdout
    shown = "".join(text.split())  # the title wraps where LibreOffice chooses
    assert "".join(visible(TITLE).split()) in shown
    assert "".join(FORMULA.split()) in shown


@pytest.fixture
def copied(bundle: Path, tmp_path: Path) -> Path:
    """The bundle and its work folder beside it, copied: later renders change the copy only."""
    shutil.copytree(bundle.parent, tmp_path / "copy", symlinks=True)
    return tmp_path / "copy" / "hall"


def _manifest(out: Path) -> dict:
    return json.loads((out / "manifest.json").read_text(encoding="utf-8"))


@pytest.mark.render
def test_a_render_without_pptx_keeps_the_deck_of_these_clips_and_removes_one_of_others(copied: Path) -> None:
    made = (copied / "lecture.pptx").stat().st_mtime_ns
    result = run_explainer(*RENDER, cwd=copied.parent)
    assert result.returncode == 0, result.stderr[-3000:]
    assert _manifest(copied)["rendered"] == [] and _manifest(copied)["pptx"]
    assert (copied / "lecture.pptx").stat().st_mtime_ns == made
    other = [*RENDER[:4], "scores", *RENDER[5:]]  # one scene: a deck of other clips
    result = run_explainer(*other, cwd=copied.parent)
    assert result.returncode == 0, result.stderr[-3000:]
    manifest = _manifest(copied)
    assert manifest["rendered"] == [] and manifest["pptx"] is None
    assert not (copied / "lecture.pptx").exists()
    assert "lecture.pptx" not in {entry["path"] for entry in manifest["files"]}
    assert "lecture.pptx" not in (copied / "index.html").read_text(encoding="utf-8")
    result = run_explainer(*other, "--pptx", cwd=copied.parent)  # made from the clips: nothing renders
    assert result.returncode == 0, result.stderr[-3000:]
    assert _manifest(copied)["rendered"] == []
    slides = list(Presentation(str(copied / "lecture.pptx")).slides)
    assert [slide.shapes.title.text for slide in slides[1:]] == ["4. Scores", "Every scene's last frame"]


@pytest.fixture
def _keep_sigterm() -> Iterator[None]:
    """``cli.main`` installs its SIGTERM handler; give the test process its own back."""
    previous = signal.getsignal(signal.SIGTERM)
    yield
    signal.signal(signal.SIGTERM, previous)


@pytest.mark.usefixtures("_keep_sigterm")
@pytest.mark.parametrize("flags", [["--format", "webm"], ["--format", "gif"], ["--format", "mov"], ["--transparent"]])
def test_pptx_refuses_anything_but_mp4_in_one_line(
    flags: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    status = cli.main(["render", "--scenes", "scores", *flags, "--pptx", "--out", str(out)])
    lines = capsys.readouterr().err.splitlines()
    assert status == 2
    assert len(lines) == 1 and lines[0].startswith("attention-explainer: error: --pptx: "), lines
    assert "--format mp4" in lines[0]
    assert not out.exists()  # refused before anything was made

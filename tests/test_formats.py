"""Every format docs/cli.md lists: ``--format mp4|webm|gif|mov`` and ``--transparent`` (mp4 written
as ``.mov``, webm), each a one-scene bundle (Scores at -ql) opened with PyAV.

The six renders start together when the first test asks for one (one manim process each), so
the module takes about as long as its slowest render plus the machine's contention.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import av
import numpy as np
import pytest
from PIL import Image
from scene_helpers import clean_environment

from attention_explainer.media import probe
from attention_explainer.plan import FORMATS
from attention_explainer.selection import SCENES as BUNDLE_SCENES

SCORES = next(spec.stem for spec in BUNDLE_SCENES if spec.name == "Scores")  # "04-scores"

pytestmark = pytest.mark.render

FPS = 5

TIMEOUT = 900
VIDEO_SUFFIXES = {f".{name}" for name in FORMATS}


@dataclass(frozen=True)
class Case:
    args: tuple[str, ...]
    extension: str
    alpha: bool


CASES = {
    "mp4": Case((), "mp4", False),
    "webm": Case(("--format", "webm"), "webm", False),
    "gif": Case(("--format", "gif"), "gif", False),
    "mov": Case(("--format", "mov"), "mov", False),
    "transparent mp4": Case(("--transparent",), "mov", True),
    "transparent webm": Case(("--transparent", "--format", "webm"), "webm", True),
}


@pytest.fixture(scope="module")
def bundles(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, tuple[Path, str, int]]]:
    """Every case's bundle folder, stderr and exit status; rendered side by side."""
    root = tmp_path_factory.mktemp("formats")
    running = {}
    for name, case in CASES.items():
        out = root / name.replace(" ", "-")
        # 5 frames a second: every container and codec path is the same, a third of the frames
        command = [sys.executable, "-m", "attention_explainer", "render", "--scenes", "scores", "--jobs", "1",
                   "--fps", str(FPS)]
        log = (root / f"{out.name}.log").open("w", encoding="utf-8")
        process = subprocess.Popen(
            [*command, *case.args, "--out", str(out)], env=clean_environment(), stdout=subprocess.DEVNULL, stderr=log
        )
        running[name] = (process, out, log)
    results = {}
    try:
        for name, (process, out, log) in running.items():
            status = process.wait(timeout=TIMEOUT)
            log.close()
            results[name] = (out, Path(log.name).read_text(encoding="utf-8"), status)
        yield results
    finally:
        for process, _, log in running.values():
            if process.poll() is None:
                process.kill()
                process.wait()
            log.close()


def _decoded(path: Path, codec_name: str) -> list[av.VideoFrame]:
    """Every frame; VP9 through libvpx, which keeps the alpha plane the native decoder drops."""
    with av.open(str(path)) as container:
        stream = container.streams.video[0]
        if codec_name != "vp9":
            return list(container.decode(stream))
        codec = av.CodecContext.create("libvpx-vp9", "r")
        frames = [frame for packet in container.demux(stream) for frame in codec.decode(packet)]
        try:
            frames += codec.decode(None)
        except EOFError:
            pass
        return frames


@pytest.mark.parametrize("name", list(CASES))
def test_every_format_renders_and_plays(bundles: dict[str, tuple[Path, str, int]], name: str) -> None:
    case = CASES[name]
    out, log, status = bundles[name]
    assert status == 0, log
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    videos = {entry["path"]: entry for entry in manifest["files"] if entry["kind"] in {"clip", "lecture"}}
    assert set(videos) == {f"{SCORES}.{case.extension}", f"lecture.{case.extension}"}
    assert manifest["scenes"][0]["clip"] == f"{SCORES}.{case.extension}"
    on_disk = {path.name for path in out.iterdir() if path.suffix in VIDEO_SUFFIXES}
    assert on_disk == set(videos)
    for rel, entry in videos.items():
        info = probe(out / rel)
        assert info.duration > 1 and info.duration == pytest.approx(entry["duration"])
        assert (info.width, info.height) == (854, 480) and info.fps == pytest.approx(FPS)
        frames = _decoded(out / rel, info.codec)
        # every frame decodes: as many as the duration holds
        assert len(frames) == pytest.approx(info.duration * info.fps, abs=1.5), rel
        if case.alpha:
            assert info.has_alpha, rel
            alpha = frames[0].to_ndarray(format="rgba")[..., 3]
            assert alpha.min() == 0 and alpha.max() == 255, rel  # a see-through background, opaque ink
        else:
            image = np.asarray(frames[-1].to_image().convert("RGB"))
            assert image.std() > 5, rel  # a picture, not a blank frame
    with Image.open(out / "stills" / f"{SCORES}.png") as still:  # the last frame as drawn, alpha and all
        assert still.mode == ("RGBA" if case.alpha else "RGB") and still.size == (854, 480)
        if case.alpha:
            alpha = np.asarray(still)[..., 3]
            assert alpha.min() == 0 and alpha.max() == 255
    assert (out / f"{SCORES}.srt").read_text(encoding="utf-8").strip()

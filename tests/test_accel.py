"""The accelerator's fast paths (:mod:`attention_explainer.accel`) give what manim's own give.

Frames drawn with them are compared pixel for pixel with frames drawn by manim as it is, for
glyphs with holes, TeX, strokes with background strokes, a path whose subpaths split, a moving
camera's other matrix and a second frame (the kept paths); families are compared for trees
and for groups that share members; a frame held for many frames, and a frame converted only where it
changed, give the encoder the pictures of converting every frame whole.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import av
import numpy as np
import pytest
from encoded_frames import SEGMENTS, frames_encoded
from manim import (
    DL,
    DOWN,
    DR,
    LEFT,
    RIGHT,
    UL,
    UP,
    UR,
    Animation,
    Arrow,
    Camera,
    Circle,
    Dot,
    FadeIn,
    FadeOut,
    FadeTransform,
    ImageMobject,
    Indicate,
    Line,
    MathTex,
    Mobject,
    MovingCamera,
    MovingCameraScene,
    PointCloudDot,
    ReplacementTransform,
    Scene,
    Square,
    Text,
    Transform,
    VGroup,
    VMobject,
)
from manim.scene import scene_file_writer
from stock_manim import stock_manim

from attention_explainer import accel
from attention_explainer.accel import (
    background_rows,
    boxes,
    cairo_paths,
    encoding,
    frame_pool,
    still_frames,
    transforms,
)

# one worker draws this module's texts: manim writes a text's SVG where another worker may be reading it
pytestmark = pytest.mark.xdist_group("accel")


@pytest.fixture
def stock() -> Iterator[None]:
    """Manim as it is during the test; whatever was installed before, after it."""
    with stock_manim():
        yield


def _drawing() -> list[VMobject]:
    digits = Text("0.38 −4", font="DejaVu Sans", font_size=40).shift(2 * UL)
    formula = MathTex(r"\mathrm{softmax}\Big(\frac{q \cdot k}{\sqrt{d_k}}\Big)", font_size=44).shift(DOWN)
    arrow = Arrow((-1, -2.5, 0), (2, -1, 0), color="#FFB000", stroke_width=6)
    framed = Square(1.2).set_stroke("#58C4DD", 8, background=True).set_fill("#58C4DD", 0.4).shift(3 * RIGHT)
    rings = VMobject().set_points_as_corners([(0, 0, 0), (1, 0, 0), (1, 1, 0), (0, 0, 0)])
    rings.append_points(Circle(0.4).shift(UP * 2 + RIGHT).points)  # a second subpath, split from the first
    faded = Dot((4, 2, 0), radius=0.3).set_opacity(0.35)
    graded = Square(1.0).set_fill(["#FF6F91", "#58C4DD"], 0.9).set_stroke(width=0).shift(3 * LEFT + 2 * UP)
    return [digits, formula, arrow, framed, rings.set_stroke("#FF6F91", 4), faded, graded, *_faded_out()]


def _faded_out() -> list[VMobject]:
    """Mobjects with a transparent fill: wholly unseen, or seen only by one of their strokes."""
    gone = Text("gone", font="DejaVu Sans", font_size=40).shift(2 * DR).set_opacity(0)
    outline = Square(0.8).set_fill(opacity=0).set_stroke("#FFB000", 3).shift(1.5 * DL)
    backed = Circle(0.5).set_fill(opacity=0).set_stroke(opacity=0)
    backed.set_stroke("#58C4DD", 6, background=True).shift(4 * LEFT + DOWN)
    clear_backing = Circle(0.6).set_opacity(0).set_stroke("#58C4DD", 6, 0.0, background=True).shift(2 * UR)
    return [gone, outline, backed, clear_backing]


def _frames(mobjects: list[VMobject], centers: list[tuple[float, float]]) -> list[np.ndarray]:
    """The same mobjects drawn by a moving camera at each centre, twice each."""
    camera = MovingCamera(pixel_width=640, pixel_height=360)
    frames = []
    for x, y in centers:
        camera.frame.move_to((x, y, 0))
        for _ in range(2):
            camera.reset()
            camera.capture_mobjects(mobjects)
            frames.append(np.array(camera.pixel_array, copy=True))
    return frames


def test_frames_drawn_with_the_fast_paths_are_manims_pixel_for_pixel(stock: None) -> None:
    mobjects = _drawing()
    centers = [(0.0, 0.0), (0.5, -0.25)]
    expected = _frames(mobjects, centers)
    assert all(frame.any() for frame in expected)
    assert accel.enable()
    got = _frames(mobjects, centers)
    for index, (mine, theirs) in enumerate(zip(got, expected, strict=True)):
        assert np.array_equal(mine, theirs), f"frame {index} differs"
    # a mobject moved since: drawn where it is now, not where a kept path had it
    mobjects[2].shift(RIGHT)
    accel.disable()
    moved = _frames(mobjects, centers[:1])
    assert accel.enable()
    assert all(np.array_equal(a, b) for a, b in zip(_frames(mobjects, centers[:1]), moved, strict=True))
    assert not np.array_equal(moved[0], expected[0])


def test_unseen_mobjects_are_not_drawn_and_seen_strokes_are(stock: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """A mobject faded out but left in the scene leaves the frame as it is: no path is made for
    it; a transparent fill with a stroke or background stroke that shows is drawn."""
    gone, outline, backed, clear_backing = _faded_out()
    assert accel.enable()
    camera = Camera(pixel_width=640, pixel_height=360)
    pathed: list[VMobject] = []
    make_path = Camera.set_cairo_context_path

    def counted(self: Camera, ctx: Any, vmobject: VMobject) -> Any:
        pathed.append(vmobject)
        return make_path(self, ctx, vmobject)

    monkeypatch.setattr(Camera, "set_cairo_context_path", counted)
    camera.capture_mobjects([gone, outline, backed, clear_backing])
    assert pathed == [outline, backed]
    assert camera.pixel_array.any()


def test_cairo_paths_are_made_with_manims_calls(stock: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """The same path elements, for outlines with holes, several subpaths, odd and tiny point counts."""
    odd = VMobject()
    odd.points = np.array([[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0], [0, 2, 0], [1, 2, 0]], dtype=float)
    tiny = VMobject()
    tiny.points = np.array([[0, 0, 0], [1, 1, 0]], dtype=float)
    broken = Square()
    broken.points = broken.points.copy()
    broken.points[5] = np.nan
    mobjects = [*_drawing(), odd, tiny, broken]
    camera = MovingCamera(pixel_width=640, pixel_height=360)
    context = camera.get_cairo_context(camera.pixel_array)

    def paths() -> list[list[tuple[object, ...]]]:
        made = []
        for mob in (m for top in mobjects for m in top.family_members_with_points()):
            camera.set_cairo_context_path(context, mob)
            made.append(list(context.copy_path()))
        return made

    expected = paths()
    assert cairo_paths._cairo_appender() is not None  # this pycairo's contexts take path data whole
    assert accel.enable()
    assert paths() == expected  # made
    assert paths() == expected  # kept
    accel.disable()
    # where a context cannot be reached, the path is made call by call, and kept by copy
    monkeypatch.setattr(cairo_paths, "_cairo_appender", lambda: None)
    assert accel.enable()
    assert paths() == expected
    assert paths() == expected


def test_cairo_paths_of_any_points_are_manims_made_and_moved(stock: None) -> None:
    """Points that meet exactly, within manim's tolerance, or not at all, in any count (the
    pattern of subpaths kept from one mobject serving another, and the same points moved)."""
    rng = np.random.default_rng(12)
    mobjects = []
    for _ in range(400):
        n = int(rng.integers(0, 41))
        scale = float(rng.choice([1.0, 0.5, 1e-6, 1e-9]))  # 1e-6, 1e-9: within the tolerance
        mob = VMobject()
        mob.points = rng.integers(0, 3, size=(n, 3)).astype(float) * scale
        mobjects.append(mob)
    for text in (Text("gap 0.48"), MathTex(r"\sqrt{d_k}")):
        mobjects += text.family_members_with_points()
    originals = [mob.points.copy() for mob in mobjects]
    camera = Camera(pixel_width=320, pixel_height=180)
    context = camera.get_cairo_context(camera.pixel_array)

    def paths(shift: float) -> list[list[tuple[object, ...]]]:
        made = []
        for mob, points in zip(mobjects, originals, strict=True):
            mob.points = points + shift
            camera.set_cairo_context_path(context, mob)
            made.append(list(context.copy_path()))
        return made

    expected = [paths(0.0), paths(0.37), paths(-1234.5)]
    assert accel.enable()
    assert [paths(0.0), paths(0.37), paths(-1234.5)] == expected


def test_families_are_manims_for_trees_and_shared_members(stock: None) -> None:
    a, b, c, d = Square(), Circle(), Dot(), Square()
    shared = VGroup(c, d)
    roots = [
        VGroup(a, VGroup(b, shared), shared, VGroup(shared, a)),  # shared members, several times
        VGroup(VGroup(VGroup(a)), b, VGroup(c, VGroup(d))),  # a plain tree
        VGroup(),
        Text("attention", font="DejaVu Sans"),
    ]
    expected = [root.get_family() for root in roots]
    assert accel.enable()
    assert [root.get_family() for root in roots] == expected
    assert [[id(m) for m in root.get_family()] for root in roots] == [[id(m) for m in e] for e in expected]


def test_install_twice_and_uninstall_put_manims_own_back(stock: None) -> None:
    own = Mobject.get_family
    assert accel.enable()
    assert accel.enable()
    assert accel.is_enabled() and Mobject.get_family is not own
    accel.disable()
    assert not accel.is_enabled() and Mobject.get_family is own


def _stream(path: Path) -> tuple[Any, Any]:
    container = av.open(str(path), mode="w")
    stream = container.add_stream("libx264", rate=15, options={"an": "1", "crf": "23"})
    stream.pix_fmt, stream.width, stream.height = "yuv420p", 854, 480
    stream.codec_context.thread_count = 1
    return container, stream


class _Recorded:
    """A video stream that keeps a copy of every picture it is given to encode."""

    def __init__(self, stream: Any) -> None:
        self.stream, self.codec_context, self.pictures = stream, stream.codec_context, []

    def encode(self, frame: av.VideoFrame | None = None) -> Any:
        if frame is not None:
            self.pictures.append(_planes(frame))
        return self.stream.encode(frame)


def _given(path: Path, shown: list[tuple[np.ndarray, int]]) -> list[list[np.ndarray]]:
    """The pictures manim's encode job gives the encoder for ``(frame, times shown)`` pairs, at
    -ql's size (x264's bytes are not compared: even on one thread they vary between runs here)."""
    container, stream = _stream(path)
    recorded = _Recorded(stream)
    if SEGMENTS:  # manim 0.22: the job's segment encoder encodes, into the stream recorded
        from fractions import Fraction

        from manim.scene.video_segment_encoder import VideoEncoderSpec  # (its own import of it)

        spec = VideoEncoderSpec("mp4", "libx264", "yuv420p", 854, 480, Fraction(15), (("crf", "23"),))
        container.close()
        encoder = scene_file_writer.VideoSegmentEncoder(target=path, spec=spec)
        encoder._stream.codec_context.thread_count = 1
        encoder._stream = _Recorded(encoder._stream)  # type: ignore[assignment]
        recorded = encoder._stream  # type: ignore[assignment]
        job = scene_file_writer._PartialMovieEncodeJob(animation_index=0, encoder=encoder, frame_queue_size=8)
    else:
        job = scene_file_writer._PartialMovieEncodeJob(path, 0, container, recorded, 0)  # type: ignore[arg-type,call-arg]
    for frame, times in shown:
        job.put(times, frame)
    job.seal()
    job.join()
    assert job.failed is False and path.stat().st_size > 0
    return recorded.pictures


def _area_converted(frame: np.ndarray) -> av.VideoFrame:
    return av.VideoFrame.from_ndarray(frame, format="rgba").reformat(format="yuv420p", interpolation="AREA")


def _planes(frame: av.VideoFrame) -> list[np.ndarray]:
    return [np.frombuffer(p, np.uint8).reshape(p.height, p.line_size)[:, : p.width].copy() for p in frame.planes]


def test_frames_are_encoded_as_converted_one_by_one(stock: None, tmp_path: Path) -> None:
    """A held frame converted once, and a frame converted only where it changed, give the encoder
    the pictures of converting each frame each time; area averaging keeps manim's brightness to
    the bit and brings the colours back no further from the frame."""
    rng = np.random.default_rng(5)
    frames = [rng.integers(0, 256, (480, 854, 4), dtype=np.uint8) for _ in range(3)]
    for frame in frames:
        frame[..., 3] = 255
    banded = frames[0].copy()
    banded[200:230] = frames[1][200:230]  # a band of rows changed: only they are converted again
    shown = [(frames[0], 1), (frames[1], 6), (frames[2], 1), (frames[0], 4), (banded, 1), (frames[0], 2)]
    expected = [_planes(_area_converted(frame)) for frame, times in shown for _ in range(times)]
    assert accel.enable()
    given = _given(tmp_path / "fast.mp4", shown)
    assert len(given) == len(expected)
    for index, (mine, theirs) in enumerate(zip(given, expected, strict=True)):
        assert all(np.array_equal(a, b) for a, b in zip(mine, theirs, strict=True)), f"picture {index} differs"
    drawn = _frames(_drawing(), [(0.0, 0.0)])[0]
    area = _area_converted(drawn)
    manims = av.VideoFrame.from_ndarray(drawn, format="rgba").reformat(format="yuv420p")
    assert np.array_equal(area.to_ndarray()[:360], manims.to_ndarray()[:360])  # the Y plane
    assert not np.array_equal(area.to_ndarray(), manims.to_ndarray())  # the colour planes differ

    def error(converted: av.VideoFrame) -> float:
        return float(np.mean((converted.reformat(format="rgb24").to_ndarray().astype(float) - drawn[..., :3]) ** 2))

    assert error(area) <= error(manims)


class _Moving(MovingCameraScene):
    """Texts fading and moving, a transform, a wait, the camera closing in: frames drawn one
    after another into the arrays the fast path lends out."""

    def construct(self) -> None:
        words = VGroup(*(Text(w, font="DejaVu Sans", font_size=30) for w in ("query", "key", "value")))
        words.arrange(RIGHT, buff=0.5)
        square = Square(1.0).set_fill("#58C4DD", 0.5).shift(2 * DOWN)
        self.play(FadeIn(words, shift=UP), run_time=0.5)
        self.play(square.animate.shift(3 * RIGHT), Indicate(words[1]), run_time=0.5)
        self.wait(0.3)
        self.play(Transform(words[0], Text("0.38", font="DejaVu Sans").shift(LEFT * 3)), run_time=0.4)
        self.play(self.camera.frame.animate.set(width=6).move_to(square), run_time=0.5)


class _Layered(Scene):
    """Still mobjects drawn after moving ones: a title and a caption far from what moves (lifted
    into the still frame), a label the moving dot passes under halfway through its play (lifted,
    then drawn every frame again), a square over the moving arrow's path, a mitred outline, a
    text in front by its z-index, a play that adds a mobject, a fade of everything."""

    def construct(self) -> None:
        dot = Dot((-5, -1, 0), radius=0.25, color="#FFB000")
        arrow = Arrow((-4, 2, 0), (-2, 2, 0), color="#58C4DD", stroke_width=6)
        title = Text("scores", font="DejaVu Sans", font_size=40).to_edge(UP)
        crossed = Text("key 3", font="DejaVu Sans", font_size=30).move_to((1, -1, 0))
        over = Square(1.0).set_fill("#FF6F91", 0.6).move_to((1, 2, 0))
        mitred = VMobject().set_points_as_corners([(4, -3, 0), (6, -2.9, 0), (4, -2.8, 0)]).set_stroke("#FFFFFF", 12)
        front = Text("front", font="DejaVu Sans", font_size=30).move_to((4.2, -2.2, 0)).set_z_index(2)
        self.add(dot, arrow, title, crossed, over, mitred, front)
        self.play(dot.animate.move_to((5, -1, 0)), arrow.animate.shift(4 * RIGHT), run_time=1)
        self.play(FadeIn(Text("0.38", font="DejaVu Sans").move_to((-4, -3, 0))), Indicate(dot), run_time=0.5)
        self.play(*(FadeOut(m) for m in self.mobjects), run_time=0.4)


def _frames_encoded(
    media: Path, scene_class: type[Scene] = _Moving, *, slow: bool = True
) -> list[tuple[np.ndarray, int]]:
    """Every frame the encoder is given for ``scene_class`` at a small size (:func:`encoded_frames.frames_encoded`)."""
    return frames_encoded(scene_class, media, pace="slow" if slow else "in step")


def test_frames_drawn_into_lent_arrays_reach_the_encoder_as_manims(stock: None, tmp_path: Path) -> None:
    expected = _frames_encoded(tmp_path / "stock")
    assert accel.enable()
    got = _frames_encoded(tmp_path / "fast")
    assert [n for _, n in got] == [n for _, n in expected]
    assert len(got) > 20
    for index, ((mine, _), (theirs, _)) in enumerate(zip(got, expected, strict=True)):
        assert np.array_equal(mine, theirs), f"frame {index} differs"


def test_drawing_ahead_of_the_encoder_waits_for_a_free_array_and_gives_manims_frames(
    stock: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    expected = _frames_encoded(tmp_path / "stock")
    pools: list[frame_pool._Frames] = []
    made = frame_pool._Frames.__init__

    def kept(frames: frame_pool._Frames) -> None:
        made(frames)
        pools.append(frames)

    monkeypatch.setattr(frame_pool._Frames, "__init__", kept)
    assert accel.enable()
    got = _frames_encoded(tmp_path / "fast")  # the encoder slowed down: drawing would run ahead
    assert len(pools) == 1
    assert len(pools[0].arrays) == frame_pool._Frames.FEW and pools[0].patient  # waited for, not made
    assert len(got) == len(expected) > 20
    for index, ((mine, n), (theirs, m)) in enumerate(zip(got, expected, strict=True)):
        assert n == m and np.array_equal(mine, theirs), f"frame {index} differs"


@pytest.mark.parametrize("slow", [True, False], ids=["encoder-behind", "encoder-in-step"])
def test_still_mobjects_lifted_into_the_still_frame_give_manims_frames(
    stock: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, slow: bool
) -> None:
    expected = _frames_encoded(tmp_path / "stock", _Layered, slow=slow)
    lifted: list[int] = []
    choose = still_frames._Play.choose

    def counted(play: still_frames._Play, *args: Any) -> None:
        choose(play, *args)
        lifted.append(len(play.lifted))

    restored: list[bool] = []
    restore = background_rows.restore
    monkeypatch.setattr(still_frames._Play, "choose", counted)
    monkeypatch.setattr(background_rows, "restore", lambda *args: restored.append(restore(*args)) or restored[-1])
    assert accel.enable()
    got = _frames_encoded(tmp_path / "fast", _Layered, slow=slow)
    assert len(lifted) > 3 and max(lifted) >= 4, lifted  # lifted, and chosen again as the dot passes under
    if not slow:
        assert restored.count(True) >= len(got) // 2  # most frames began with only the rows drawn over copied back
    assert len(got) == len(expected) > 20
    for index, ((mine, n), (theirs, m)) in enumerate(zip(got, expected, strict=True)):
        assert n == m and np.array_equal(mine, theirs), f"frame {index} differs"


def test_a_box_holds_the_stroke_and_its_mitres() -> None:
    spike = VMobject().set_points_as_corners([(0, 0, 0), (2, 0.1, 0), (0, 0.2, 0)]).set_stroke(width=12)
    line = Line((0, 0, 0), (1, 0, 0)).set_stroke(width=4)
    glyph = Text("x", font="DejaVu Sans")[0]
    (left, right, _, top), line_box, glyph_box = boxes.boxes([spike, line, glyph], 0.01, 0.01)
    assert right >= 2 + 5 * 0.12 and left <= -5 * 0.12 and top >= 0.2 + 0.6 + 0.02
    assert line_box[1] == pytest.approx(1 + 0.75 * 0.04 + 0.02) and line_box[2] == pytest.approx(-0.03 - 0.02)
    assert glyph_box[0] == pytest.approx(glyph.get_left()[0] - 0.02)


def _changing_frames(height: int, width: int, seed: int) -> list[np.ndarray]:
    """Noise, then frames that each differ from the one before in a few bands of rows (a row at
    the top or bottom edge, one row, a tall block, nothing), and a new frame of noise."""
    rng = np.random.default_rng(seed)
    frames = [rng.integers(0, 256, (height, width, 4), dtype=np.uint8)]
    for k in range(24):
        frame = frames[-1].copy()
        for _ in range(k % 4):
            top = int(rng.choice([0, height - 1, int(rng.integers(0, height))]))
            left = int(rng.integers(0, width - 8))
            frame[top : top + int(rng.integers(1, 120)), left : left + 8] = rng.integers(0, 256, 4)
        frames.append(frame if k != 11 else rng.integers(0, 256, (height, width, 4), dtype=np.uint8))
    return frames


@pytest.mark.parametrize(("height", "width"), [(480, 854), (720, 1280), (1080, 1920)])
def test_only_changed_rows_are_converted_and_give_the_whole_frames_bytes(height: int, width: int) -> None:
    converter = encoding._Converter(width, height)
    frames = _changing_frames(height, width, seed=height)
    for index, frame in enumerate([*frames, frames[-1]]):
        if index == len(frames):
            frame[height // 2] = 7  # changed in place since it was converted: the converter cannot compare
        expected = _planes(_area_converted(frame))
        got = _planes(converter.convert(frame))
        for plane, (mine, theirs) in enumerate(zip(got, expected, strict=True)):
            assert np.array_equal(mine, theirs), f"frame {index}, plane {plane} differs"


def _lent_over(still: np.ndarray, boxes: list[tuple[int, int, int, int]], seed: int) -> background_rows.Lent:
    """``still`` with noise drawn in each box ``(top, bottom, left, right)``, lent as a frame that says so."""
    rng = np.random.default_rng(seed)
    frame = still.copy()
    view = frame.view(background_rows.Lent)
    view.still, view.rows = still, np.zeros(still.shape[0], bool)
    view.left, view.right = np.full(still.shape[0], still.shape[1]), np.zeros(still.shape[0], dtype=np.intp)
    for top, bottom, left, right in boxes:
        frame[top:bottom, left:right] = rng.integers(0, 256, (bottom - top, right - left, 4), dtype=np.uint8)
        view.rows[top:bottom] = True
        view.left[top:bottom] = np.minimum(view.left[top:bottom], left)
        view.right[top:bottom] = np.maximum(view.right[top:bottom], right)
    return view


@pytest.mark.parametrize(("height", "width"), [(480, 854), (1080, 1920)])
def test_only_the_columns_drawn_over_are_converted_and_give_the_whole_frames_bytes(
    height: int, width: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Frames drawn over a still frame in narrow boxes (at either edge, one column wide, odd
    columns, several in one band) are converted in those columns only, and the encoder is given
    the bytes of converting each frame whole."""
    rng = np.random.default_rng(width)
    still = rng.integers(0, 256, (height, width, 4), dtype=np.uint8)
    converted: list[int] = []
    convert = encoding._REFORMATTERS.convert

    def counted(frame: Any, *args: Any) -> Any:
        converted.append(frame.width)
        return convert(frame, *args)

    monkeypatch.setattr(encoding._REFORMATTERS, "convert", counted)
    converter = encoding._Converter(width, height)
    layouts = [
        [(100, 140, 301, 340)], [(0, 30, 0, 9)], [(200, 260, width - 1, width)], [(50, 51, 77, 78)],
        [(300, 330, 10, 40), (310, 320, width - 50, width - 3)], [], [(height - 7, height, 400, 433)],
    ]
    frames = [still.view(background_rows.Lent)] + [_lent_over(still, boxes, k) for k, boxes in enumerate(layouts * 2)]
    frames[0].still = None  # the first: converted whole
    for index, frame in enumerate(frames):
        expected = _planes(_area_converted(np.asarray(frame)))
        got = _planes(converter.convert(frame))
        for plane, (mine, theirs) in enumerate(zip(got, expected, strict=True)):
            assert np.array_equal(mine, theirs), f"frame {index}, plane {plane} differs"
    # narrow drawings, narrow conversions; whole rows where a band holds drawings at both edges (in the
    # frame that draws them and the next, which draws over neither)
    # (the first two: whole frames, the first says nothing of what it holds)
    assert converted[:2] == [width, width] and converted.count(width) == 6 and sorted(converted)[-7] <= 128, converted


def test_changed_runs_are_whole_blocks_of_rows() -> None:
    compare = encoding._memcmp()
    before = np.zeros((1080, 96, 4), np.uint8)  # 1080 rows: the last block of 16 is 8 rows
    after = before.copy()
    assert encoding.changed_runs(before, after, compare) == []
    after[100, 3] = 1
    after[1079, 95] = 1
    assert encoding.changed_runs(before, after, compare) == [(96, 112), (1064, 1080)]  # the last widened upwards
    after[115] = 1
    assert encoding.changed_runs(before, after, compare) == [(96, 128), (1064, 1080)]  # neighbours merged
    after[200] = 1
    assert encoding.changed_runs(before, after, compare) == [(96, 128), (192, 208), (1064, 1080)]


def test_changed_runs_compare_only_the_blocks_they_are_told_may_differ() -> None:
    calls: list[int] = []
    memcmp = encoding._memcmp()

    def compare(old: int, new: int, size: int) -> int:
        calls.append(size)
        return int(memcmp(old, new, size))

    before = np.zeros((1080, 96, 4), np.uint8)
    after = before.copy()
    after[100, 3] = after[700, 5] = 1
    within = np.zeros(1080, bool)
    within[98:102] = True  # row 700 is not said to differ: it is not compared
    assert encoding.changed_runs(before, after, compare, within) == [(96, 112)]
    assert len(calls) == 1
    within[1079] = True
    assert encoding.changed_runs(before, after, compare, within) == [(96, 112)]  # the last block: equal
    assert calls[-1] == 8 * 96 * 4
    assert encoding.changed_runs(before, after, compare) == [(96, 112), (688, 704)]


class _Rising(Scene):
    """A dot rising through still shapes: each frame leaves rows the frame before drew over."""

    def construct(self) -> None:
        dot = Dot((0, -3, 0), radius=0.2, color="#FFB000")
        self.add(Square(1.0).set_fill("#58C4DD", 0.5).move_to((-3, 1, 0)), Text("key", font="DejaVu Sans"), dot)
        self.play(dot.animate.move_to((0, 3, 0)), run_time=1)
        self.play(dot.animate.move_to((2, -2, 0)), run_time=0.6)


@pytest.mark.parametrize("scene_class", [_Rising, _Layered], ids=["rising", "layered"])
def test_frames_lent_say_which_rows_they_draw_over_and_are_converted_as_compared_whole(
    stock: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, scene_class: type[Scene]
) -> None:
    """Each frame handed over knows its still frame and the rows drawn over it; the encoder
    compares only those with the frame before and is given the pictures it is given comparing
    every row."""

    convert = encoding._Converter.convert
    may_differ = background_rows.may_differ

    def pictures(folder: Path, told: bool) -> tuple[list[list[np.ndarray]], list[int]]:
        given: list[list[np.ndarray]] = []
        masks: list[int] = []

        def kept(converter: encoding._Converter, frame: np.ndarray) -> Any:
            converted = convert(converter, frame)
            given.append([plane.copy() for plane in converter.planes])
            return converted

        def said(previous: Any, frame: Any) -> Any:
            within = may_differ(previous, frame)
            masks.append(-1 if within is None else int(within.sum()))
            return within if told else None

        monkeypatch.setattr(encoding._Converter, "convert", kept)
        monkeypatch.setattr(background_rows, "may_differ", said)
        assert accel.enable()
        try:
            _frames_encoded(folder, scene_class, slow=False)
        finally:
            accel.disable()
        return given, masks

    told, masks = pictures(tmp_path / "told", True)
    compared, _ = pictures(tmp_path / "compared", False)
    assert len(told) == len(compared) > 20
    for index, (mine, theirs) in enumerate(zip(told, compared, strict=True)):
        assert all(np.array_equal(a, b) for a, b in zip(mine, theirs, strict=True)), f"picture {index} differs"
    known = [m for m in masks if m >= 0]
    assert len(known) >= len(masks) // 2, masks  # most frames said which rows they drew over
    assert all(m < 180 for m in known) and any(0 < m < 120 for m in known), masks  # a part of the frame


def _corners(*points: tuple[float, float]) -> VMobject:
    line = VMobject()
    line.set_points_as_corners([(x, y, 0.0) for x, y in points])
    return line


def _animations() -> list[Animation]:
    """Transforms the batch takes (glyphs of unequal counts, fades with a shift, ``.animate``, a
    rate that reaches 1 midway, TeX, a fade between texts) and ones it leaves to manim (a lag, an arc)."""
    square = Square(1.5).set_fill("#58C4DD", 0.3)
    return [
        Transform(Text("0.37", font="DejaVu Sans"), Text("−1.26", font="DejaVu Sans").shift(RIGHT)),
        FadeIn(VGroup(Text("query", font="DejaVu Sans"), Square(0.5)), shift=UP),
        square.animate.set_fill("#FF6F91", 0.8).set_stroke(width=7).shift(RIGHT).build(),
        Indicate(Text("key", font="DejaVu Sans")),
        ReplacementTransform(MathTex(r"q \cdot k"), MathTex(r"\frac{q \cdot k}{\sqrt{d_k}}")),
        FadeTransform(Text("a", font="DejaVu Sans"), Text("b", font="DejaVu Sans").shift(DOWN)),
        Transform(_corners((0.3, 0.2), (1.0, 1.0)), _corners((-0.0, -0.0), (2.0, -0.0))),  # ends at minus zero
        FadeIn(VGroup(*(Dot((x, 0, 0)) for x in range(4))), lag_ratio=0.3),
        Transform(Square(), Circle().shift(UP), path_arc=1.2),
    ]


def _states(animation: Animation) -> list[list[object]]:
    """Every family member's points and colours after each step, and a frame of each step."""
    camera = Camera(pixel_width=320, pixel_height=180)
    animation.begin()
    states: list[list[object]] = []
    for alpha in (0.0, 0.13, 0.5, 0.77, 1.0):
        animation.interpolate(alpha)
        members = animation.mobject.family_members_with_points()
        state: list[object] = [len(members)]
        for mob in members:
            state += [np.array(mob.points, copy=True)]
            state += [np.array(getattr(mob, name), copy=True) for name in transforms._COLOUR_FIELDS]
        camera.reset()
        camera.capture_mobjects([animation.mobject])
        states.append([*state, np.array(camera.pixel_array, copy=True)])
    return states


def test_transforms_interpolated_in_one_batch_are_manims_to_the_last_bit(stock: None) -> None:
    expected = [_states(animation) for animation in _animations()]
    assert accel.enable()
    got = [_states(animation) for animation in _animations()]
    for n, (mine, theirs) in enumerate(zip(got, expected, strict=True)):
        for step, (a, b) in enumerate(zip(mine, theirs, strict=True)):
            assert len(a) == len(b) and all(  # bit for bit: minus zero is not zero here
                np.asarray(x).shape == np.asarray(y).shape and np.asarray(x).tobytes() == np.asarray(y).tobytes()
                for x, y in zip(a, b, strict=True)
            ), f"animation {n}, step {step}"
    # the batch was used where it can be, and manim's loop where it cannot
    animations = _animations()
    for animation in animations:
        animation.begin()
        animation.interpolate(0.5)
    batched = [animation.__dict__["_accel_batch"][1] is not False for animation in animations]
    assert batched == [True, True, True, True, True, True, True, False, False]


def test_the_kind_of_drawing_is_manims_for_every_type(stock: None) -> None:
    mobjects = [*_drawing(), VGroup(), Mobject(), ImageMobject(np.zeros((2, 2, 4), dtype=np.uint8)), PointCloudDot()]
    camera = Camera()
    expected = [camera.type_or_raise(mob) for mob in mobjects]
    assert accel.enable()
    fresh = Camera()
    assert [fresh.type_or_raise(mob) for mob in mobjects] * 2 == expected * 2
    with pytest.raises(TypeError):
        fresh.type_or_raise(object())

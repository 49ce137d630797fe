"""The runner's narration hook (``--voice``, ``--burn-captions``): each beat's caption spoken (Piper, cached)
and/or drawn into the frames while its subtitle shows, and every clip's audio as long as its video.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .accel.patching import Patch, Step
from .hooks import beat_hooks, frame_writer, install, listed

__all__ = ["install_narration"]


class _Narration:
    """The beat being narrated: its caption, where it started, how long it is spoken."""

    def __init__(self, voice_cache: Path | None, burn: bool) -> None:
        self.voice: Any = None
        if voice_cache is not None:
            from .voice import Voice

            self.voice = Voice(voice_cache)
        self.burn = burn
        self.scene: Any = None
        self.caption = ""
        self.start = 0.0
        self.until: float | None = None  # the end of the speech; None: the end of the beat
        self.beats_before = 0

    def begin_beat(self, scene: Any, caption: str) -> float:
        """A beat starts: speak its caption (the audio goes in at this moment); return its seconds."""
        self.scene, self.caption, self.start = scene, caption, scene.renderer.time
        self.beats_before = len(scene.beats)
        spoken = 0.0
        if self.voice is not None:
            said = self.voice.say(caption)
            if said is not None:
                path, spoken = said
                scene.add_sound(str(path))
        self.until = self.start + spoken if spoken else None
        return spoken

    def shown_at(self, time: float) -> str | None:
        """The caption the frame starting at ``time`` shows, if any (while its subtitle shows)."""
        if self.scene is None or len(self.scene.beats) > self.beats_before:
            return None  # no beat yet, or the last one ended
        if time < self.start - 1e-9 or (self.until is not None and time >= self.until - 1e-9):
            return None
        return self.caption


def install_narration(voice_cache: Path | None, burn: bool) -> None:
    """Speak each beat's caption (``voice_cache``: Piper's audio cache) and/or burn it into the frames."""

    def changes() -> list[Patch | Step]:
        narration = _Narration(voice_cache, burn)

        def narrate(scene: Any, caption: str) -> float:
            return narration.begin_beat(scene, caption)

        made: list[Patch | Step] = [listed("each beat narrated", beat_hooks(), narrate)]
        if voice_cache is not None:
            made.append(_pad_audio_to_video())
        if burn:
            made.append(_burn_captions(narration))
        return made

    install("narration", changes)


def _pad_audio_to_video() -> Patch:
    """Every clip gets an audio track as long as its video: silence up to the last frame."""

    def padded(finished: Callable[..., None]) -> Callable[..., None]:
        from pydub import AudioSegment

        @functools.wraps(finished)  # a later hook checks the parameters of what it wraps
        def scene_finished(self: Any, scene: Any) -> None:
            if self.num_plays:
                self.file_writer.add_audio_segment(AudioSegment.silent(0), time=self.time)
            finished(self, scene)

        return scene_finished

    return Patch("manim.renderer.cairo_renderer:CairoRenderer", "scene_finished", padded, ("self", "scene"))


def _burn_captions(narration: _Narration) -> Patch:
    """Draw the narrated caption into each frame as it goes to the encoder."""
    return frame_writer(lambda write, writer, frame, times: _caption_burnt(narration, write, writer, frame, times))


def _caption_burnt(narration: _Narration, write: Callable[[Any, Any, int], None], writer: Any, frame: Any,
                   num_frames: int) -> None:
    """``frame``, shown ``num_frames`` times, written by ``write`` with the caption shown at each of those times."""
    from .outputs.captions import burn

    scene = narration.scene
    if scene is None or not hasattr(frame, "shape"):
        write(writer, frame, num_frames)
        return
    dt = 1 / scene.camera.frame_rate
    first = scene.renderer.time - num_frames * dt  # the renderer counts the frames before writing
    runs: list[tuple[str | None, int]] = []
    for n in range(num_frames):
        shown = narration.shown_at(first + n * dt)
        if runs and runs[-1][0] == shown:
            runs[-1] = (shown, runs[-1][1] + 1)
        else:
            runs.append((shown, 1))
    for shown, count in runs:
        write(writer, frame if shown is None else burn(frame, shown), count)

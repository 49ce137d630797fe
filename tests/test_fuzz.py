"""Fuzz: random scenario files, sentences and tokens through load → trace → scene construction.

Every case must end in one of two ways:

* a :class:`ScenarioError` whose message is one non-empty line (``field: what was expected``), or
* a built scene whose token labels are the input tokens after the documented shortening
  (:func:`scenes.kit.text.shorten_token`), each label drawing something.

Anything else (another exception, a warning while loading, a wrong or blank label) fails.

The cases come from three generators: scenario files written as TOML text (valid and invalid
keys, ragged rows, NaN, ±inf, strings, booleans, 1e308, empty matrices, d_k = 0, broken syntax,
bytes that are not UTF-8), Python mappings for :func:`scenario_from_mapping`, and sentences for
:meth:`Scenario.from_sentence`. Tokens are drawn from all of Unicode, weighted toward TeX specials,
TeX commands, control and format characters, emoji, CJK, right-to-left text and long tokens.

Every token of a scenario that loads is drawn as the scenes label tokens (``token_text``); one
case in :data:`SCENE_EVERY` also goes through a real scene, ``ScaleAndSoftmax``, dry-run up to its
first ``play``: by then its table, a label for every token, is on screen (the rest of the scene,
animation copies, is what costs).

``FUZZ_EXAMPLES`` sets the number of examples (default: a bounded number for the test suite);
``make fuzz`` runs ``tools/fuzz.py``, which prints how each case ended.
"""

from __future__ import annotations

import math
import os
import tempfile
import unicodedata
import warnings
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from manim import tempconfig
from scene_helpers import DRY_RUN_SETTINGS, text_of, with_scenario

from attention_math import Scenario, ScenarioError, load_scenario, scenario_from_mapping
from attention_math.scenario import toml_value
from scenes.base import AFTER_PLAY_HOOKS, SCENE_LIMITS, ExplainerScene, check_scene_limits
from scenes.kit.text import BLANK_CHARACTERS, shorten_token, token_text
from scenes.self_attention.softmax import ScaleAndSoftmax

SUITE_EXAMPLES = 60
"""Examples per fuzz test in the ordinary test suite (``FUZZ_EXAMPLES`` overrides)."""

SCENE_EVERY = 10
"""One case in this many that reaches the scenes is also built as a scene (about 2 s each)."""

# -- tokens ---------------------------------------------------------------------------------------

TEX_SPECIALS = ["\\", "{", "}", "$", "&", "#", "^", "_", "%", "~"]
HOSTILE = [
    r"\input{/etc/passwd}", r"\input{/etc/hostname}", r"\write18{ls}", r"\immediate\write18{touch PWNED}",
    r"\def", r"\def\x{y}\x", r"\catcode`\{=12", r"$x^2$", r"\\", r"\end{document}", r"\verb|x|",
    "'", '"', "`", "''", '""', "\\n", "\\u0000", "<b>", "</span>", "&amp;", "%s", "{0}", "...",
]
WORLD = [
    "猫", "中文", "東京", "한국어", "😀", "🎉", "🐍", "👍🏽", "❤️", "👨‍👩‍👧", "🏳️‍🌈", "🇩🇪",
    "שלום", "مرحبا", "עברית123", "العربية", "ab\u202ecd", "\u200f", "\u2067x\u2069", "é", "e\u0301", "ﬁ",
]
INVISIBLE = [
    "\x00", "\x07", "\x1b[31m", "\r\n", "\t", "\x7f", "\x85", "\u2028", "\u2029", "\ufeff", "\u200b",
    "\u200d", "\xa0", "\u3000", "\u2800", "\u3164", "\u115f", "\u1160", "\uffa0", "\u0300", "\ufe0f",
    "\U000e0041", "\ud7ff", "\U0010fffd",
]

fragments = st.one_of(
    st.sampled_from(TEX_SPECIALS),
    st.sampled_from(HOSTILE),
    st.sampled_from(WORLD),
    st.sampled_from(INVISIBLE),
    st.text(max_size=4),  # all of Unicode (but surrogates, which no file or str can carry)
    st.characters(categories=["Cc", "Cf", "Zs", "Zl", "Zp", "Mn", "Me", "Co"]),
    st.characters(min_codepoint=0x4E00, max_codepoint=0x9FFF),  # CJK
    st.characters(min_codepoint=0x0590, max_codepoint=0x06FF),  # Hebrew, Arabic
    st.characters(min_codepoint=0x1F300, max_codepoint=0x1FAFF),  # emoji
    st.text(st.characters(codec="ascii"), max_size=6),
)
tokens = st.one_of(
    st.lists(fragments, min_size=1, max_size=5).map("".join),
    st.text(min_size=1, max_size=8),
    st.lists(fragments, min_size=6, max_size=24).map("".join),
    st.text(min_size=60, max_size=400),  # very long
)
whitespace = st.sampled_from([" ", "  ", "\t", "\n", " \u3000 ", "\x1c", "\u2003", "\xa0"])


@st.composite
def sentences(draw: st.DrawFn) -> str:
    if draw(st.integers(0, 5)) == 0:
        return draw(st.text(max_size=60))
    words = draw(st.lists(tokens, min_size=0, max_size=9))
    separators = [draw(whitespace) for _ in words]
    return "".join(w + s for w, s in zip(words, separators, strict=True))


# -- numbers --------------------------------------------------------------------------------------

ODD_NUMBERS = [
    "nan", "+nan", "-nan", "inf", "+inf", "-inf", "1e308", "-1e308", "1.7976931348623157e308", "1e309",
    "5e-324", "1e-320", "0.0", "-0.0", "9223372036854775807", "-9223372036854775808", "1e154", "1e200",
    '"0.5"', "'1'", "true", "false", "[]", "[1]", "{}", "1979-05-27", "0x1F", "0o17", "0b1", "1_000",
]


def toml_number_texts() -> st.SearchStrategy[str]:
    plain = st.integers(-10, 10).map(lambda k: f"{k / 10:.1f}")
    return st.one_of(plain, plain, plain, plain, st.sampled_from(ODD_NUMBERS),
                     st.floats(allow_nan=True, allow_infinity=True).map(toml_float))


def toml_float(value: float) -> str:
    if math.isnan(value):
        return "nan"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return repr(value)


def toml_string(value: str) -> str:
    """A TOML basic string holding ``value`` exactly (as scenario files are written)."""
    return toml_value(value)


@dataclass(frozen=True)
class Case:
    """One input: how it is loaded, and the input itself (for the report of a failure)."""

    route: str  # "toml", "bytes", "mapping", "sentence"
    data: Any
    tokens: tuple[str, ...] | None = None  # the tokens the input gives, where a loaded scenario must have them

    def __repr__(self) -> str:
        return f"Case({self.route}, {self.data!r})"


# -- scenario files as text ----------------------------------------------------------------------

KEY_TYPOS = ["token", "Tokens", "embedding", "w_q", "wquery", "w_keys", "sentense", "seeed", "dmodel", "d_v",
             "querry", "precission", "scale", "titel", "x", "tokens.x", '"weird key"', '"a\\nb"', "ключ"]
GARBAGE_LINES = [
    "= 1", "[[", "]]", "tokens = [", "a = 'unterminated", 'b = "unterminated', "[table]\nx = 1",
    "[[tokens]]", "query = ", "=", "tokens = [1, 2", "key = 1\nkey = 2", "\x00", "\ufeff", "# only a comment",
    "precision = 1\nprecision = 2", "inline = {a = 1,}", "x = 1 2", "\\", "'''", '"""',
]


PLAIN_NUMBER = st.integers(-10, 10).map(lambda k: f"{k / 10:.1f}")


@st.composite
def matrix_text(draw: st.DrawFn, rows: int, columns: int, healthy: bool) -> str:
    """A TOML matrix of ``rows × columns`` entries; unless healthy, sometimes ragged, odd or empty."""
    mode = 1 if healthy else draw(st.integers(0, 5))
    if mode == 0:
        return draw(st.sampled_from(["[]", "[[]]", "[[], []]", "1", '"matrix"', "[1, 2]", "[[1], 2]", "{}"]))
    entry = PLAIN_NUMBER if mode < 4 else toml_number_texts()
    lines = []
    for _ in range(rows):
        width = columns if mode != 5 else max(0, columns + draw(st.integers(-1, 1)))
        lines.append("[" + ", ".join(draw(entry) for _ in range(width)) + "]")
    return "[" + ", ".join(lines) + "]"


@st.composite
def explicit_document(draw: st.DrawFn) -> Case:
    """A file with every number; healthy half the time (shapes the scenes draw, plain numbers)."""
    healthy = draw(st.booleans())
    if healthy:  # any number of tokens the scenes draw; small sizes, as numbers cost the scene most
        n, d_in, d_k, d_v = draw(st.integers(*SCENE_LIMITS["tokens"])), draw(st.integers(2, 3)), 1, draw(
            st.integers(1, 2))
    else:
        n, d_in, d_k, d_v = draw(st.integers(0, 10)), draw(st.integers(0, 7)), draw(st.integers(0, 5)), draw(
            st.integers(0, 5))
    token_list = draw(st.lists(tokens, min_size=n, max_size=n))
    if not healthy and draw(st.integers(0, 3)) == 0:
        token_list = draw(st.lists(tokens, max_size=10))  # a count that may not match
    lines = [
        "tokens = [" + ", ".join(toml_string(t) for t in token_list) + "]",
        f"embeddings = {draw(matrix_text(n, d_in, healthy))}",
        f"w_query = {draw(matrix_text(d_in, d_k, healthy))}",
        f"w_key = {draw(matrix_text(d_in, d_k, healthy))}",
        f"w_value = {draw(matrix_text(d_in, d_v, healthy))}",
    ]
    lines += draw(optional_lines(token_list, healthy))
    return Case("toml", draw(shuffled_and_damaged(lines, healthy)), tuple(token_list))


@st.composite
def sentence_document(draw: st.DrawFn) -> Case:
    """A file with a sentence; healthy half the time."""
    healthy = draw(st.booleans())
    if healthy:
        sentence = " ".join(draw(st.lists(tokens, min_size=2, max_size=8)))
        sizes = {"seed": st.integers(0, 2**63 - 1), "d_model": st.integers(2, 3), "d_k": st.just(1)}
    else:
        sentence = draw(sentences())
        odd = st.one_of(st.integers(-2, 70), st.integers()).map(str) | st.sampled_from(ODD_NUMBERS)
        sizes = dict.fromkeys(("seed", "d_model", "d_k"), odd)
    lines = [f"sentence = {toml_string(sentence)}"]
    for key, size in sizes.items():
        if draw(st.booleans()):
            lines.append(f"{key} = {draw(size)}")
    lines += draw(optional_lines(sentence.split(), healthy))
    return Case("toml", draw(shuffled_and_damaged(lines, healthy)), tuple(sentence.split()))


@st.composite
def optional_lines(draw: st.DrawFn, token_list: list[str], healthy: bool) -> list[str]:
    """query, precision, scaled and title, each or not; odd values unless healthy."""
    lines = []
    if draw(st.booleans()):
        if healthy and token_list:
            query = [st.integers(1, len(token_list)).map(str)]
            unique = [t for t in token_list if token_list.count(t) == 1]
            if unique:
                query.append(st.sampled_from(unique).map(toml_string))
        else:
            query = [st.integers(-1, 11).map(str), st.sampled_from(ODD_NUMBERS), tokens.map(toml_string)]
            if token_list:
                query.append(st.sampled_from(token_list).map(toml_string))
        lines.append(f"query = {draw(st.one_of(*query))}")
    if draw(st.integers(0, 3)) == 0:
        precision = st.integers(0, 6) if healthy else st.integers(-1, 8) | st.sampled_from(ODD_NUMBERS)
        lines.append(f"precision = {draw(precision)}")
    if draw(st.integers(0, 3)) == 0:
        scaled = ["true", "false"] if healthy else ["true", "false", "1", '"yes"', "nan"]
        lines.append(f"scaled = {draw(st.sampled_from(scaled))}")
    if draw(st.integers(0, 3)) == 0:
        title = tokens.map(toml_string) if healthy else tokens.map(toml_string) | st.sampled_from(ODD_NUMBERS)
        lines.append(f"title = {draw(title)}")
    return lines


@st.composite
def shuffled_and_damaged(draw: st.DrawFn, lines: list[str], healthy: bool) -> str:
    """The lines in any order; unless healthy, maybe a wrong key, a broken line or a line lost."""
    lines = list(draw(st.permutations(lines)))
    if not healthy:
        if draw(st.integers(0, 2)) == 0:  # a key that does not exist, or one from the other kind of file
            key = draw(st.sampled_from(KEY_TYPOS) | st.sampled_from(["seed", "d_model", "tokens", "w_key"]))
            lines.insert(draw(st.integers(0, len(lines))), f"{key} = {draw(toml_number_texts())}")
        if draw(st.integers(0, 2)) == 0:  # broken syntax
            lines.insert(draw(st.integers(0, len(lines))), draw(st.sampled_from(GARBAGE_LINES) | st.text()))
        if draw(st.integers(0, 3)) == 0:  # a line lost
            del lines[draw(st.integers(0, len(lines) - 1))]
    return "\n".join(lines) + draw(st.sampled_from(["\n", "", "\r\n"]))


# -- the cases ------------------------------------------------------------------------------------


python_values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=6), tokens),
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=5), inner, max_size=3)),
    max_leaves=12,
)


@st.composite
def mappings(draw: st.DrawFn) -> dict[str, Any]:
    keys = ["title", "tokens", "embeddings", "w_query", "w_key", "w_value", "query", "precision", "scaled",
            "sentence", "seed", "d_model", "d_k", *KEY_TYPOS]
    chosen = draw(st.lists(st.sampled_from(keys), max_size=6, unique=True))
    return {key: draw(python_values) for key in chosen}


@st.composite
def sentence_calls(draw: st.DrawFn) -> dict[str, Any]:
    """Arguments of Scenario.from_sentence; healthy half the time."""
    if draw(st.booleans()):
        return {
            "sentence": " ".join(draw(st.lists(tokens, min_size=2, max_size=8))),
            "seed": draw(st.integers(0, 2**63 - 1)), "d_model": draw(st.integers(2, 3)), "d_k": 1,
        }
    call: dict[str, Any] = {"sentence": draw(sentences())}
    for key, good in (("seed", st.integers(0, 2**70)), ("d_model", st.integers(0, 8)), ("d_k", st.integers(0, 5))):
        if draw(st.booleans()):
            call[key] = draw(st.one_of(good, good, python_values))
    if draw(st.booleans()):
        call["query"] = draw(st.one_of(st.integers(-1, 10), tokens, python_values))
    return call


def mapping_case(data: dict[str, Any]) -> Case:
    """Keys of a scenario file: a scenario made of them has the tokens they list."""
    listed = data.get("tokens") if "sentence" not in data else None
    return Case("mapping", data, tuple(listed) if isinstance(listed, list) else None)


def sentence_case(call: dict[str, Any]) -> Case:
    """A call of Scenario.from_sentence: its tokens are the sentence's whitespace-separated words."""
    return Case("sentence", call, tuple(call["sentence"].split()))


cases = st.one_of(
    explicit_document(),
    explicit_document(),
    sentence_document(),
    st.binary(max_size=80).map(lambda raw: Case("bytes", raw)),
    mappings().map(mapping_case),
    sentence_calls().map(sentence_case),
    st.lists(tokens, min_size=2, max_size=8).map(lambda words: sentence_case({"sentence": " ".join(words), "d_k": 1})),
)


# -- running one case -----------------------------------------------------------------------------


class _FirstPlay(Exception):
    """Raised after the scene's first play: its token labels are on screen."""


@dataclass
class Fuzzer:
    """Runs cases in one folder (scenario files, manim's media: its TeX and text caches are shared)."""

    folder: Path
    outcomes: Counter[str]
    built: int = 0

    def load(self, case: Case) -> Scenario:
        if case.route in ("toml", "bytes"):
            path = self.folder / "scenario.toml"
            if case.route == "toml":
                path.write_text(case.data, encoding="utf-8", newline="")
            else:
                path.write_bytes(case.data)
            return load_scenario(path)
        if case.route == "mapping":
            return scenario_from_mapping(case.data)
        call = dict(case.data)
        return Scenario.from_sentence(call.pop("sentence"), **call)

    def run(self, case: Case) -> str:
        """Load, trace and build one case; returns how it ended, raises AssertionError if badly."""
        stage = "load"
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("error")  # an overflow warning is a bug, not an answer
                scenario = self.load(case)
                check_trace(scenario)
            stage = "scene limits"
            check_scene_limits(scenario)
        except ScenarioError as error:
            message = str(error)
            assert message.strip(), f"{case!r}: a ScenarioError with an empty message"
            assert len(message.splitlines()) == 1, f"{case!r}: a message of more than one line: {message!r}"
            field, colon, rest = message.partition(": ")
            assert colon and field, f"{case!r}: the message does not start with the field: {message!r}"
            return f"ScenarioError ({stage}): {error_kind(field, rest)}"
        if case.tokens is not None:
            assert scenario.tokens == case.tokens, f"{case!r}: tokens {scenario.tokens!r}, not {case.tokens!r}"
        self.check_scene(scenario)
        return "built"

    def check_scene(self, scenario: Scenario) -> None:
        want = [shorten_token(t) for t in scenario.tokens]
        for token, shown in zip(scenario.tokens, want, strict=True):
            label = token_text(token)
            assert text_of(label) == shown, f"token label {text_of(label)!r}, expected {shown!r} (from {token!r})"
            assert draws_something(label), f"the label of {token!r} ({shown!r}) draws nothing"
        self.built += 1
        if self.built % SCENE_EVERY == 1:
            labels = table_tokens(build_to_first_play(ScaleAndSoftmax, scenario, self.folder / "media"))
            assert labels == want, f"{scenario.tokens!r}: the scene's labels show {labels!r}, expected {want!r}"


def table_tokens(scene: ExplainerScene) -> list[str]:
    """The tokens the labels on screen show, top to bottom (each label marks the tokens it holds)."""
    labels = [m for top in scene.mobjects for m in top.get_family() if getattr(m, "token_parts", None)]
    return [part for label in sorted(labels, key=lambda m: -m.get_y()) for part in label.token_parts]


FIELDS = frozenset(("tokens", "embeddings", "w_query", "w_key", "w_value", "query", "precision", "scaled", "title",
                    "sentence", "seed", "d_model", "d_k", *SCENE_LIMITS))


def error_kind(field: str, rest: str) -> str:
    """A ScenarioError's field, for the count of outcomes (a file's own errors by kind, other keys by what)."""
    if field == "scenario":
        kind = next((k for k in ("invalid TOML", "not UTF-8") if k in rest), "file")
        return f"scenario ({kind})"
    if field in FIELDS:
        return field
    return "a key: " + rest.split(" (")[0]


def check_trace(scenario: Scenario) -> None:
    """Finite weights in [0, 1] that sum to 1 per row, masked or not; a finite context."""
    for causal in (False, True):
        trace = scenario.trace(causal=causal)
        weights = np.asarray(trace.weights)
        assert np.all(np.isfinite(weights)) and np.all(weights >= 0) and np.all(weights <= 1), weights
        assert np.allclose(weights.sum(axis=1), 1.0), weights.sum(axis=1)
        assert np.all(np.isfinite(np.asarray(trace.context)))
    step = scenario.query_step()
    assert math.isclose(float(np.sum(step.weights)), 1.0, rel_tol=1e-9)


def draws_something(mob: Any) -> bool:
    return any(len(part.points) for part in mob.get_family())


def build_to_first_play(cls: type[ExplainerScene], scenario: Scenario, media_dir: Path) -> ExplainerScene:
    """A dry run of ``cls`` showing ``scenario``, stopped after its first play."""
    tested = with_scenario(cls, scenario)

    def stop(scene: ExplainerScene) -> None:
        if isinstance(scene, tested):
            raise _FirstPlay

    AFTER_PLAY_HOOKS.append(stop)
    try:
        with tempconfig({**DRY_RUN_SETTINGS, "media_dir": str(media_dir)}):
            scene = tested(skip_animations=True)
            try:
                scene.render()
            except _FirstPlay:
                return scene
    finally:
        AFTER_PLAY_HOOKS.remove(stop)
    raise AssertionError(f"{cls.__name__} ended without playing anything")


# -- the test -------------------------------------------------------------------------------------


def examples() -> int:
    return int(os.environ.get("FUZZ_EXAMPLES", SUITE_EXAMPLES))


@contextmanager
def fuzzer() -> Iterator[Fuzzer]:
    with tempfile.TemporaryDirectory(prefix="attention-fuzz-") as folder:
        yield Fuzzer(Path(folder), Counter())


def fuzz(runner: Fuzzer, count: int, *, derandomize: bool) -> Callable[[], None]:
    """The hypothesis test over ``count`` cases, counting outcomes into ``runner.outcomes``."""

    @settings(
        max_examples=count, deadline=None, derandomize=derandomize, database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.large_base_example],
    )
    @given(case=cases)
    def run(case: Case) -> None:
        try:
            outcome = runner.run(case)
        except Exception as error:
            runner.outcomes[f"FAILED: {type(error).__name__}"] += 1
            raise
        runner.outcomes[outcome] += 1

    return run


def test_fuzz_load_trace_scene() -> None:
    """Random files, mappings and sentences end in a ScenarioError or a scene showing their tokens."""
    with fuzzer() as runner:
        fuzz(runner, examples(), derandomize=True)()
        assert runner.outcomes["built"] > 0, runner.outcomes  # the generators do reach the scene


# -- what the fuzz found, kept as ordinary tests -----------------------------------------------------


def test_an_unknown_key_with_a_newline_is_named_on_one_line(tmp_path: Path) -> None:
    """`"a\\nb" = 1` in a file made a two-line message ("a", then "b: unknown key")."""
    path = tmp_path / "scenario.toml"
    path.write_text('"a\\nb" = 1\nsentence = "the cat"\n', encoding="utf-8")
    for load in (lambda: load_scenario(path), lambda: scenario_from_mapping({"a\nb": 1, "sentence": "x y"})):
        try:
            load()
        except ScenarioError as error:
            assert str(error) == "'a\\nb': unknown key"
        else:
            raise AssertionError("no ScenarioError")
    try:
        scenario_from_mapping({"seed\t": 1, "tokens": ["a", "b"]})
    except ScenarioError as error:
        assert str(error) == "'seed\\t': unknown key (did you mean 'seed'?)"


def scores_labels(*token_list: str) -> list[Any]:
    """These tokens' labels, as every scene draws them; and the softmax scene's table shows them all."""
    scenario = Scenario.from_sentence(" ".join(token_list), seed=1, d_model=2, d_k=1)
    assert scenario.tokens == token_list
    with tempfile.TemporaryDirectory(prefix="attention-fuzz-") as folder:
        scene = build_to_first_play(ScaleAndSoftmax, scenario, Path(folder))
    assert table_tokens(scene) == [shorten_token(t) for t in token_list]
    return [token_text(token) for token in token_list]


def test_right_to_left_tokens_and_lone_marks_draw_their_labels() -> None:
    """Hebrew and Arabic tokens, and a lone mark of a right-to-left script, came out with no glyphs
    (Pango put them off the canvas) and the scene stopped with an IndexError."""
    token_list = ("שלום", "مرحبا", "\u07fd", "\U00010d30", "dog")
    labels = scores_labels(*token_list)
    assert [text_of(label) for label in labels] == [shorten_token(t) for t in token_list]
    for label, token in zip(labels, token_list, strict=True):
        assert draws_something(label), f"the label of {token!r} draws nothing"


def test_tokens_that_would_draw_nothing_are_shown_as_escapes() -> None:
    """Blank characters (U+2800, the Hangul fillers) and tokens of bare marks drew empty labels."""
    assert shorten_token("\u2800") == "\\u2800"
    assert shorten_token("a\u3164b") == "a\\u3164b"
    assert shorten_token("\ufe0f\u0301", limit=20) == "\\ufe0f\\u0301"
    assert shorten_token("\U000e0100") == "\\U000e0100"
    assert shorten_token("❤\ufe0f") == "❤\ufe0f"  # a mark on something stays as it is
    assert shorten_token("e\u0301") == "e\u0301"
    token_list = ("\u2800", "\u3164", "\ufe0f", "\U000e0100\u302a", "\U0001d159x")
    labels = scores_labels(*token_list)
    for label, token in zip(labels, token_list, strict=True):
        assert text_of(label) == shorten_token(token)
        assert draws_something(label), f"the label of {token!r} draws nothing"


@given(st.text(min_size=1))
@settings(max_examples=200, deadline=None)
def test_shorten_token_is_short_printable_and_literal_when_it_can_be(token: str) -> None:
    """At most 10 characters, all printable, no blank ones; a short token that draws shows as typed."""
    shown = shorten_token(token)
    whole = shorten_token(token, limit=10**6)
    assert len(shown) <= 10 and shown.isprintable()
    assert not BLANK_CHARACTERS & set(shown)
    assert shown == whole or (shown.endswith("…") and whole.startswith(shown[:-1]) and len(shown) == 10)
    literal = token.isprintable() and not BLANK_CHARACTERS & set(token)
    draws = any(unicodedata.category(ch)[0] in "LNPS" and ch not in BLANK_CHARACTERS for ch in token)
    if literal and draws:
        assert whole == token

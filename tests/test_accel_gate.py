"""The accelerator's gate: :func:`attention_explainer.accel.enable` on a manim it does not fit.

The patch registry (:mod:`attention_explainer.accel.patching`) applies a group all or none and
undoes it the last first, an inherited attribute inherited again; ``enable()`` on another manim
version, or with one replaced attribute missing or taking other parameters, installs nothing,
says why in one line once, and returns False; ``disable()`` puts back every object it replaced;
and a bundle renders on a manim whose version the accelerator was not tested on (manim as it is:
its own x264 settings in the clip), as it does with ``--stock-manim`` or ``ATTENTION_STOCK_MANIM``.
"""

from __future__ import annotations

import json
import subprocess
import sys
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import manim
import pytest
from encoded_frames import SEGMENTS
from scene_helpers import REPO, clean_environment, x264_options
from stock_manim import stock_manim

from attention_explainer import accel, cli, processes
from attention_explainer.accel import background_rows
from attention_explainer.accel.patching import Patch, PatchError, PatchGroup, Step, resolve
from attention_explainer.plan import BundleSettings
from attention_explainer.selection import SCENES

pytestmark = pytest.mark.xdist_group("accel")


# -- the registry ---------------------------------------------------------------------------------


class _Base:
    def speak(self, words: str) -> str:
        return f"base {words}"


class _Child(_Base):
    def wave(self, times: int = 1) -> str:
        return "wave" * times


def _shout(text: str, loud: bool = False) -> str:
    return text.upper() if loud else text


@pytest.fixture
def owner(monkeypatch: pytest.MonkeyPatch) -> types.ModuleType:
    """A module ``fake_owner`` holding ``Base``, ``Child`` (inherits ``speak``) and ``shout``."""
    module = types.ModuleType("fake_owner")
    module.Base, module.Child, module.shout = _Base, _Child, _shout  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "fake_owner", module)
    return module


def _louder(original: Any) -> Any:
    def speak(self: Any, words: str) -> str:
        return original(self, words) + "!"

    return speak


def test_a_group_is_applied_in_order_and_undone_the_last_first(owner: types.ModuleType) -> None:
    log: list[str] = []
    group = PatchGroup("test", [
        Step("first", lambda: log.append("do first"), lambda: log.append("undo first")),
        Patch("fake_owner:Child", "speak", _louder, ("self", "words")),
        Patch("fake_owner", "shout", lambda _: lambda text, loud=False: "shh", ("text", "loud")),
        Step("last", lambda: log.append("do last"), lambda: log.append("undo last")),
    ])
    assert group.problems() == []
    group.apply()
    group.apply()  # a second time changes nothing
    assert log == ["do first", "do last"] and group.applied
    assert _Child().speak("hi") == "base hi!" and owner.shout("x") == "shh"
    group.undo()
    assert log == ["do first", "do last", "undo last", "undo first"] and not group.applied
    assert "speak" not in vars(_Child) and _Child.speak is _Base.speak  # inherited again
    assert owner.shout is _shout


def test_a_group_that_does_not_fit_applies_nothing(owner: types.ModuleType) -> None:
    log: list[str] = []
    group = PatchGroup("test", [
        Step("first", lambda: log.append("do first"), lambda: log.append("undo first")),
        Patch("fake_owner:Child", "speak", _louder, ("self", "words")),
        Patch("fake_owner:Child", "wave", _louder, ("self", "count")),
        Patch("fake_owner:Child", "jump", _louder),
        Patch("fake_owner:Gone", "speak", _louder),
        Patch("no_such_module_here", "speak", _louder),
    ])
    assert group.problems() == [
        "fake_owner.Child.wave takes (self, times), expected (self, count)",
        "fake_owner.Child.jump is missing",
        "fake_owner.Gone is missing",
        "no_such_module_here is missing",
    ]
    with pytest.raises(PatchError, match=r"^test: fake_owner.Child.wave takes \(self, times\), expected "
                                         r"\(self, count\) \(and 3 more\)$"):
        group.apply()
    assert log == [] and not group.applied and "speak" not in vars(_Child)


def test_a_change_that_fails_midway_undoes_the_ones_before(owner: types.ModuleType) -> None:
    def broken(original: Any) -> Any:
        raise RuntimeError("cannot make it")

    group = PatchGroup("test", [Patch("fake_owner", "shout", lambda _: str), Patch("fake_owner:Base", "speak", broken)])
    with pytest.raises(RuntimeError, match="cannot make it"):
        group.apply()
    assert owner.shout is _shout and not group.applied


# -- enable() and disable() -----------------------------------------------------------------------


@pytest.fixture
def stock(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Manim as it is, and no line said yet in this process, during the test; as before after it."""
    monkeypatch.setattr(accel, "_WARNED", [])
    with stock_manim():
        yield


def _replaced() -> dict[str, Any]:
    """Each attribute the accelerator replaces: the owner's own object (or None: inherited; an
    owner that is missing is left out)."""
    patches = [change for group in accel._groups() for change in group.changes if isinstance(change, Patch)]
    found = {}
    for patch in patches:
        try:
            found[patch.label] = vars(resolve(patch.owner)).get(patch.name)
        except AttributeError:
            continue
    return found


def _said_once(capsys: pytest.CaptureFixture[str], *words: str) -> None:
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith("attention-explainer: rendering with manim as it is (slower, the same frames): ")
    assert all(word in lines[0] for word in words), lines[0]


def test_every_replaced_attribute_records_the_tested_parameters(stock: None) -> None:
    patches = [change for group in accel._groups() for change in group.changes if isinstance(change, Patch)]
    assert len(patches) == 20 and all(patch.parameters is not None for patch in patches)
    assert [group.problems() for group in accel._groups()] == [[]] * 10  # they are this manim's
    assert manim.__version__ in accel.TESTED_MANIM


def test_an_untested_manim_version_gets_nothing_installed(
    stock: None, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    before = _replaced()
    monkeypatch.setattr(manim, "__version__", "0.23.0")
    assert accel.enable() is False
    assert accel.enable() is False  # said once
    assert not accel.is_enabled() and _replaced() == before and background_rows._FOLLOWING == []
    _said_once(capsys, "manim 0.23.0 is installed", "tested on 0.21.0, 0.22.0")


def _display_of_another_manim(self: Any, vmobject: Any, ctx: Any, clip: bool = False) -> Any:
    """``Camera.display_vectorized`` with a parameter the tested manim's lacks."""


@pytest.mark.parametrize(
    ("owner_path", "name", "replacement", "said"),
    [
        ("manim.camera.camera:Camera", "display_vectorized", _display_of_another_manim,
         "drawing: manim.camera.camera.Camera.display_vectorized takes (self, vmobject, ctx, clip), "
         "expected (self, vmobject, ctx)"),
        # the class that encodes a partial movie's frames: manim 0.22's segment encoder, 0.21's encode job
        ("manim.scene.video_segment_encoder", "VideoSegmentEncoder", None,
         "encoding: manim.scene.video_segment_encoder.VideoSegmentEncoder is missing")
        if SEGMENTS else
        ("manim.scene.scene_file_writer", "_PartialMovieEncodeJob", None,
         "encoding: manim.scene.scene_file_writer._PartialMovieEncodeJob is missing"),
        ("manim.mobject.mobject:Mobject", "get_family", None,
         "the family walk: manim.mobject.mobject.Mobject.get_family is missing"),
    ],
    ids=["other-parameters", "missing-class", "missing-method"],
)
def test_a_replaced_attribute_that_changed_gets_nothing_installed(
    stock: None, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
    owner_path: str, name: str, replacement: Any, said: str,
) -> None:
    if replacement is None:
        monkeypatch.delattr(resolve(owner_path), name)
    else:
        monkeypatch.setattr(resolve(owner_path), name, replacement)
    before = _replaced()
    assert accel.enable() is False and not accel.is_enabled()
    assert _replaced() == before
    _said_once(capsys, said)


def test_disable_puts_back_every_object_replaced(stock: None) -> None:
    before = _replaced()
    assert accel.enable() and accel.enable() and accel.is_enabled()
    during = _replaced()
    assert all(during[label] is not own for label, own in before.items()), [
        label for label, own in before.items() if during[label] is own]
    assert background_rows._FOLLOWING == [True]
    accel.disable()
    assert not accel.is_enabled() and background_rows._FOLLOWING == []
    after = _replaced()
    assert all(after[label] is own for label, own in before.items())
    assert before["manim.animation.transform.Transform.interpolate_mobject"] is None  # inherited, and again


# -- the command line -----------------------------------------------------------------------------


def test_stock_manim_is_asked_by_the_flag_or_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    parser = cli._parser()
    plain = ["render", "--sentence", "a b"]
    monkeypatch.delenv(cli.STOCK_MANIM, raising=False)
    assert cli._settings(parser.parse_args(plain)).stock_manim is False
    assert cli._settings(parser.parse_args([*plain, "--stock-manim"])).stock_manim is True
    for value, asked in (("1", True), ("0", False), ("", False)):
        monkeypatch.setenv(cli.STOCK_MANIM, value)
        assert cli._settings(parser.parse_args(plain)).stock_manim is asked
    spec, work = SCENES[0], Path("/work")
    hooks = processes.runner_command(spec, BundleSettings(stock_manim=True), work, work / "media")
    assert "--stock-manim" in hooks[: hooks.index("--")]
    assert "--stock-manim" not in processes.runner_command(spec, BundleSettings(), work, work / "media")
    assert BundleSettings(stock_manim=True).key() == BundleSettings().key()  # the same frames: the same clips


def test_a_stock_manim_switch_of_another_value_is_refused_in_one_line(tmp_path: Path) -> None:
    env = clean_environment()
    env[cli.STOCK_MANIM] = "yes"
    result = subprocess.run(
        [sys.executable, "-m", "attention_explainer", "render", "--sentence", "a b", "--out", str(tmp_path / "out")],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=300,
    )
    assert result.returncode == 2
    assert result.stderr.splitlines() == [
        "attention-explainer: error: ATTENTION_STOCK_MANIM: expected 1 (manim as it is) or 0 (the accelerator), "
        "got 'yes'"
    ]


def test_a_renders_notice_is_printed_once_however_many_renders_say_it() -> None:
    """The accelerator's refusal is said by every render's process (each a fork): the command prints it once."""
    import io

    from rich.console import Console

    out = io.StringIO()
    display = cli._ProgressDisplay(Console(file=out, width=80), 2, 0.0)
    refusal = "attention-explainer: rendering with manim as it is (slower, the same frames): manim 0.99.0 [x]"
    first, second = processes.Job(SCENES[0]), processes.Job(SCENES[1])
    first.status = second.status = "rendering"
    display.update([first, second])
    first.notices.append(refusal)
    display.update([first, second])
    second.notices.append(refusal)
    display.update([first, second])
    display.update([first, second])
    lines = out.getvalue().splitlines()
    assert [line for line in lines if line.startswith(processes.NOTICE)] == [refusal], lines


@pytest.mark.render
def test_a_bundle_renders_on_a_manim_the_accelerator_was_not_tested_on(tmp_path: Path) -> None:
    """The renders' manim says it is 0.99.0 (its distribution's metadata first on the path): the
    accelerator stays out, and the bundle is made on manim as it is, its still saved as drawn."""
    fake = tmp_path / "site" / "manim-0.99.0.dist-info"
    fake.mkdir(parents=True)
    (fake / "METADATA").write_text("Metadata-Version: 2.1\nName: manim\nVersion: 0.99.0\n", encoding="utf-8")
    env = clean_environment()
    env["PYTHONPATH"] = f"{fake.parent}:{env.get('PYTHONPATH', str(REPO))}"
    out = tmp_path / "out"
    result = subprocess.run(
        [sys.executable, "-m", "attention_explainer", "render", "--scenes", "ScaleAndSoftmax", "--fps", "5",
         "--out", str(out)], cwd=REPO, env=env, capture_output=True, text=True, timeout=900,
    )
    assert result.returncode == 0, result.stderr
    said = [line for line in result.stderr.splitlines() if line.startswith(processes.NOTICE)]
    assert said == ["attention-explainer: rendering with manim as it is (slower, the same frames): "
                    f"manim 0.99.0 is installed, the accelerator was tested on {', '.join(accel.TESTED_MANIM)}"]
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["rendered"] == ["ScaleAndSoftmax"]
    clip = out / "05-scale-and-softmax.mp4"
    assert clip.is_file() and (out / "stills" / "05-scale-and-softmax.png").is_file()
    options = x264_options(clip)
    assert "me=hex" in options and "subme=7" in options  # manim's own x264 settings, not the accelerator's

"""scenes.kit.stills: what a play leaves alone goes first in the scene's list (drawn once), never over a moving
mobject it overlaps, and the moving set Manim computes is then just what moves."""

from __future__ import annotations

from manim import LEFT, RIGHT, UP, Circle, FadeIn, FadeOut, Scene, Square, Transform, VGroup

from scenes.kit.stills import still_first


def _scene(*mobjects: object) -> Scene:
    scene = Scene()
    scene.add(*mobjects)  # type: ignore[arg-type]
    return scene


def test_a_still_mobject_after_a_moving_one_goes_first() -> None:
    moving, still = Square().shift(LEFT * 3), Circle().shift(RIGHT * 3)
    scene = _scene(moving, still)
    still_first(scene, [FadeOut(moving)])
    assert scene.mobjects == [still, moving]
    assert scene.get_moving_mobjects(FadeOut(moving)) == [moving]


def test_a_still_mobject_over_a_moving_one_stays_over_it() -> None:
    moving, still = Square(), Circle(radius=0.5)  # the circle drawn over the square
    scene = _scene(moving, still)
    still_first(scene, [FadeOut(moving)])
    assert scene.mobjects == [moving, still]


def test_where_a_moving_mobject_goes_counts_as_overlapping() -> None:
    moving, still = Square().shift(LEFT * 3), Circle().shift(RIGHT * 3)
    scene = _scene(moving, still)
    still_first(scene, [Transform(moving, Square().shift(RIGHT * 3))])
    assert scene.mobjects == [moving, still]
    builder = moving.animate.shift(RIGHT * 6)
    still_first(scene, [builder])
    assert scene.mobjects == [moving, still]


def test_a_group_with_moving_and_still_parts_is_split() -> None:
    left, right, far = Square().shift(LEFT * 4), Square().shift(UP * 2), Circle().shift(RIGHT * 4)
    group = VGroup(left, right)
    scene = _scene(group, far)
    still_first(scene, [FadeIn(left)])
    assert scene.mobjects == [right, far, left]
    assert [m for m in scene.get_moving_mobjects(FadeIn(left)) if m.has_points()] == [left]


def test_nothing_animated_changes_nothing() -> None:
    first, second = Square(), Circle()
    scene = _scene(first, second)
    still_first(scene, [FadeIn(Square().shift(UP * 3))])
    assert scene.mobjects == [first, second]

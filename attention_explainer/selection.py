"""Which scenes a request names: a lecture's scenes (``--lecture``), numbered, and those of a
``--scenes`` list among them.
"""

from __future__ import annotations

from .plan import BundleError, SceneSpec

__all__ = ["lecture_specs", "select_scenes"]  # and SCENES, looked up lazily (__getattr__)


def lecture_specs(lecture: str | None = None) -> tuple[SceneSpec, ...]:
    """The scenes of a lecture (``--lecture``; default self-attention), numbered from 1."""
    from scenes import registry

    name = lecture or registry.DEFAULT_LECTURE
    if name not in registry.lecture_names():
        known = ", ".join(registry.lecture_names())
        raise BundleError(f"--lecture: unknown lecture {name!r}; expected one of {known}", 2)
    declared = registry.lecture(name)
    return tuple(
        SceneSpec(number, scene, module, uses_scenario=scene not in declared.own_preset)
        for number, (module, scene) in enumerate(declared.scenes, start=1)
    )


def __getattr__(name: str) -> tuple[SceneSpec, ...]:
    """``SCENES``, the default lecture's scenes, looked up when first asked for: importing this module
    reads no entry points."""
    if name == "SCENES":
        return lecture_specs()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def select_scenes(names: str | None, lecture: str | None = None) -> list[SceneSpec]:
    """The scenes a ``--scenes`` list asks for (class names, file names or numbers) of a lecture, in order."""
    specs = lecture_specs(lecture)
    if not names:
        return list(specs)
    chosen: set[int] = set()
    for raw in names.split(","):
        word = raw.strip()
        if not word:
            continue
        for spec in specs:
            aliases = {spec.name.lower(), spec.module.rsplit(".", 1)[1], str(spec.number), spec.stem[3:]}
            if word.lower().replace("_", "-") in {a.replace("_", "-") for a in aliases}:
                chosen.add(spec.number)
                break
        else:
            known = ", ".join(spec.name for spec in specs)
            raise BundleError(f"--scenes: unknown scene {word!r}; expected names from {known} (or 1-{len(specs)})", 2)
    if not chosen:
        raise BundleError("--scenes: expected at least one scene name", 2)
    return [spec for spec in specs if spec.number in chosen]

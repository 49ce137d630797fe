"""Manim scenes of the attention explainer; every number comes from attention_math.

One folder per lecture (``self_attention/``, ``multi_head/``, ...), each declaring itself in its
``__init__.py`` (a ``scenes.registry.Lecture``, found through the entry-point group
``attention_explainer.lectures``), beside what they share: the scene framework (``base``, ``facts``),
the registry of lectures (``registry``), what each scene's clip depends on (``plan``) and the visual
ideas (``kit/``). Render one with ``manim render -ql scenes/self_attention/scores.py Scores``.
"""

"""Where W comes from, "Learned, not given": a training run of W_Q and W_K (``attention_math.train_attention``),
the loss falling as each "it" moves its attention onto the noun it means, the weights changing, then the learned
matrices through the lecture-6 pipeline (its :data:`LECTURE` gives the order).

Render one with ``manim render -ql scenes/learned/training_steps.py TrainingSteps``.
"""

from __future__ import annotations

from scenes.registry import Lecture

__all__ = ["LEARNED_TRAINING", "LECTURE", "learned_keyframes"]

LEARNED_TRAINING: tuple[int, int, float] = (0, 60, 1.0)
"""The learned lecture's training run, ``(seed, steps, learning_rate)``:
``attention_math.train_attention(seed, steps=steps, learning_rate=learning_rate)``, whose learned weights are the
``learned`` preset. Its training scenes, their number proof and its handout read it here (the scenes as they build,
so a test may change it)."""


def learned_keyframes(steps: int) -> tuple[int, ...]:
    """The steps the learned lecture's training scenes stop at: the start, a twelfth, a third, the end.

    >>> learned_keyframes(60), learned_keyframes(3)
    ((0, 5, 20, 60), (0, 1, 3))
    """
    return tuple(sorted({0, round(steps / 12), round(steps / 3), steps}))


LECTURE = Lecture(
    name="learned",
    title="Learned, not given: a training run of W_Q and W_K, then the learned matrices through the pipeline",
    scenes=(
        ("scenes.learned.training_steps", "TrainingSteps"),
        ("scenes.learned.learned_weights", "LearnedWeights"),
        ("scenes.learned.learned_pipeline", "LearnedPipeline"),
    ),
    preset="learned",
    # the training run (not the scenario), then the scenario's query through the pipeline
    shows={
        "TrainingSteps": frozenset(),
        "LearnedWeights": frozenset(),
        "LearnedPipeline": frozenset({"scores", "scaled_scores", "weights"}),
    },
    cost={
        # one cold -ql render each here, one at a time (6.3, 15.6 and 4.7 s), against the mean of two Scores
        # renders in the same hour (10.0 and 17.0 s: a busy machine)
        "l": {"TrainingSteps": 0.47, "LearnedWeights": 1.16, "LearnedPipeline": 0.35},
        # by the length of their clips against Scores' (20, 19 and 14 s against 28 s; not measured at -qh),
        # LearnedWeights' a little more for its many numbers changing at once
        "h": {"TrainingSteps": 0.7, "LearnedWeights": 0.8, "LearnedPipeline": 0.5},
    },
    steps="scenes.learned.handout:LEARNED",
    # the training run of LEARNED_TRAINING, whatever the scenario
    own_preset=frozenset({"TrainingSteps", "LearnedWeights"}),
    storyboard="docs/lectures/learned.md",
    stills="docs/stills/learned",
)
"""Where W comes from."""

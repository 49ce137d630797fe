"""Where W comes from, "Learned, not given": a training run of W_Q and W_K (``attention_math.train_attention``),
the loss falling as each "it" moves its attention onto the noun it means, the weights changing, then the learned
matrices through the lecture-6 pipeline (``scenes.plan.LECTURES["learned"]`` gives the order).

Render one with ``manim render -ql scenes/learned/training_steps.py TrainingSteps``.
"""

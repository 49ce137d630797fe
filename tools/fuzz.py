"""Run the fuzz test of tests/test_fuzz.py for many examples and print how each case ended.

    .venv/bin/python tools/fuzz.py                 # 1,000 examples (make fuzz)
    .venv/bin/python tools/fuzz.py --examples 5000 --seed 7

Exit status 0 when every case ended in a one-line ScenarioError or a built scene showing its
tokens, 1 otherwise (hypothesis prints the smallest failing case it found).
"""

from __future__ import annotations

import argparse
import importlib
import sys
import time
from pathlib import Path

from hypothesis import seed as hypothesis_seed

# The fuzz test lives in tests/, beside the helpers it imports; mypy checks tools/ on its own,
# so the module is imported by name (tests/ is type-checked with the suite, not from here).
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
test_fuzz = importlib.import_module("test_fuzz")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=1000, help="how many cases to try (default 1000)")
    parser.add_argument("--seed", type=int, default=None, help="a seed, to repeat a run (default: a new one)")
    args = parser.parse_args()
    started = time.monotonic()
    failed = False
    with test_fuzz.fuzzer() as runner:
        test = test_fuzz.fuzz(runner, args.examples, derandomize=False)
        if args.seed is not None:
            test = hypothesis_seed(args.seed)(test)
        try:
            test()
        except Exception as error:  # the failure, shrunk; hypothesis has printed the case
            failed = True
            print(f"FAILED: {type(error).__name__}: {error}", file=sys.stderr)
        outcomes = runner.outcomes
    print(f"\n{sum(outcomes.values())} cases tried in {time.monotonic() - started:.0f} s; how they ended:")
    for outcome, count in sorted(outcomes.items(), key=lambda item: (-item[1], item[0])):
        print(f"{count:7d}  {outcome}")
    if failed:
        print("(the failed ones include hypothesis's attempts to shrink the first failure)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

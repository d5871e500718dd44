"""The benchmark suite: `python -m benchmarks` (see benchmarks/run.py and docs/benchmarks.md)."""

"""Tiny statistics helpers (try "Cortex: Run this" on the block at the bottom)."""

from statistics import mean, median


def summarize(values: list[float]) -> dict[str, float]:
    return {"n": len(values), "mean": mean(values), "median": median(values)}


if __name__ == "__main__":
    print(summarize([3, 1, 4, 1, 5, 9, 2, 6]))

"""Okapi BM25 over tokenised chunks, with Lucene's always-positive idf (small corpora rank sanely)."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence


class BM25:
    def __init__(self, corpus: Sequence[Sequence[str]], *, k1: float = 1.2, b: float = 0.75) -> None:
        self.k1 = k1
        self.b = b
        self.freqs = [Counter(doc) for doc in corpus]
        self.lengths = [len(doc) for doc in corpus]
        self.avg_len = (sum(self.lengths) / len(self.lengths)) if self.lengths else 0.0
        df: Counter[str] = Counter()
        for freq in self.freqs:
            df.update(freq.keys())
        n = len(self.freqs)
        self.idf = {term: math.log(1.0 + (n - count + 0.5) / (count + 0.5)) for term, count in df.items()}

    def scores(self, query: Sequence[str]) -> list[float]:
        terms = [t for t in dict.fromkeys(query) if t in self.idf]
        out = []
        for freq, length in zip(self.freqs, self.lengths, strict=True):
            norm = self.k1 * (1 - self.b + self.b * length / self.avg_len) if self.avg_len else self.k1
            score = 0.0
            for term in terms:
                tf = freq.get(term, 0)
                if tf:
                    score += self.idf[term] * tf * (self.k1 + 1) / (tf + norm)
            out.append(score)
        return out

"""The frame depth check is linear (the old check: up to 256 regex passes stalled the loop 16 s on 2 MB).

``too_deep`` must give the old verdicts (the reference below is the old algorithm, copied) and answer
hostile 4 MB / 16 MB bodies — many shallow pairs then all opens at the end, depth hovering just under
the limit throughout, brackets inside strings, a string full of escaped quotes that never ends (the
old string regex retried from every quote: quadratic) — each within a 60 s pytest timeout, where the
old code took minutes. Passes are counted: bounded whatever the depth, each byte measured once.
"""

from __future__ import annotations

import json
import random
import re

import pytest

from cortex_lsp.server import nesting
from cortex_lsp.server.nesting import MAX_DEPTH, strip_strings, too_deep

_OLD_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_OLD_NOT_BRACKET = re.compile(rb"[^\[\]{}]+")
_OLD_EMPTY_PAIR = re.compile(rb"\[\]|\{\}")
_SQUARE = bytes.maketrans(b"{}", b"[]")


def old_too_deep(body: bytes, limit: int = MAX_DEPTH) -> bool:
    """The algorithm before the fix: one regex pass per nesting level (the reference for verdicts)."""
    if body.count(b"[") + body.count(b"{") <= limit:
        return False
    rest = _OLD_NOT_BRACKET.sub(b"", _OLD_STRING.sub(b"", body))
    for _ in range(limit):
        if not rest:
            return False
        shorter = _OLD_EMPTY_PAIR.sub(b"", rest)
        if shorter == rest:
            return True
        rest = shorter
    return bool(rest)


_SAFE_TOKENS = ('"a[b"', '"\\"]"', '"\\\\"', "\\", "1", ",", " ", '"{}"')
_LOOSE_TOKENS = ('"x{', '"', '"\\')  # may open a string that never ends: what follows is text


def _random_body(rng: random.Random, limit: int, tokens: tuple[str, ...]) -> bytes:
    """Random brackets and tokens; each matched pair gets one kind (``[]`` or ``{}``), strays any."""
    out: list[str] = []
    stack: list[int] = []
    for _ in range(rng.randint(0, 120)):
        roll = rng.random()
        if roll < 0.4 and len(stack) < limit + 3:
            stack.append(len(out))
            out.append(rng.choice("[{"))
        elif roll < 0.8:
            out.append(("]" if out[stack.pop()] == "[" else "}") if stack else rng.choice("]}"))
        elif roll < 0.9:
            out.append(rng.choice(tokens))
        else:
            while stack:
                out.append("]" if out[stack.pop()] == "[" else "}")
    return "".join(out).encode()


@pytest.mark.parametrize("seed", range(3))
def test_new_check_agrees_with_the_old_algorithm(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(150):
        limit = rng.randint(0, 12)
        body = _random_body(rng, limit, _SAFE_TOKENS)
        assert too_deep(body, limit) == old_too_deep(body, limit), (body, limit)
        loose = _random_body(rng, limit, _SAFE_TOKENS + _LOOSE_TOKENS)
        assert too_deep(loose, limit) == old_too_deep(loose.translate(_SQUARE), limit), (loose, limit)
        # mismatched kinds ([}) are judged as one kind (json.loads refuses them within the limit)
        mixed = bytes(rng.choice(b"[]{}") if c in b"[]{}" and rng.random() < 0.2 else c for c in body)
        assert too_deep(mixed, limit) == old_too_deep(mixed.translate(_SQUARE), limit), (mixed, limit)


@pytest.mark.parametrize("depth", [MAX_DEPTH - 1, MAX_DEPTH, MAX_DEPTH + 1, 1000])
def test_exact_depths_at_the_default_limit(depth: int) -> None:
    body = b"[" * depth + b"1" + b"]" * depth
    assert too_deep(body) == (depth > MAX_DEPTH) == old_too_deep(body)
    doc = ('{"a":' * depth + "1" + "}" * depth).encode()
    assert too_deep(doc) == (depth > MAX_DEPTH) == old_too_deep(doc)


def test_strings_are_cut_in_one_pass_even_when_unterminated() -> None:
    assert strip_strings(b'["a[", "b\\"]", 1]') == b"[, , 1]"
    assert strip_strings(b'[1, "never ends \\" [[') == b'[1, "never ends \\" [['
    assert strip_strings(b'"ok" "tail\\') == b' "tail\\'
    body = b'{"k": "[[[", "v": [' + b'"\\"' * 20 + b"]}"
    assert strip_strings(body) == _OLD_STRING.sub(b"", body)


def _hostile_bodies(size: int) -> dict[str, tuple[bytes, bool]]:
    pairs = size // 2
    return {
        "shallow_pairs_then_deep_end": (b"[]" * pairs + b"[" * (MAX_DEPTH + 1) + b"]" * (MAX_DEPTH + 1), True),
        "shallow_pairs_then_limit_end": (b"{}" * pairs + b"[" * MAX_DEPTH + b"]" * MAX_DEPTH, False),
        "hovering_at_limit_minus_one": (
            b"[" * (MAX_DEPTH - 1) + b"[1,2]," * (size // 6) + b"]" * (MAX_DEPTH - 1), False),
        "hovering_then_one_over": (
            b"[" * (MAX_DEPTH - 1) + b"[[1]]," * (size // 6) + b"[[]]" + b"]" * (MAX_DEPTH - 1), True),
        "sawtooth_under_limit": (
            b"[" * 200 + (b"[" * 50 + b"]" * 50) * (size // 100) + b"]" * 200, False),
        "sawtooth_over_limit_at_end": (
            b"[" * 200 + (b"[" * 50 + b"]" * 50) * (size // 100) + b"[" * 57 + b"]" * 257, True),
        "brackets_in_strings": (b"[" + b'"[[[{{{",' * (size // 9) + b"1]", False),
        "unterminated_escaped_quotes": (b"[" * (MAX_DEPTH + 1) + b'"' + b'\\"' * (size // 2), True),
        "unbalanced_opens": (b"[" * size, True),
    }


@pytest.mark.timeout(60)
@pytest.mark.parametrize("size", [4 * 1024 * 1024, 16 * 1024 * 1024])
def test_hostile_large_bodies_get_the_right_verdict(size: int) -> None:
    for name, (body, expected) in _hostile_bodies(size).items():
        assert too_deep(body) is expected, name


def test_each_byte_is_measured_at_most_once(monkeypatch: pytest.MonkeyPatch) -> None:
    measured = 0
    real = nesting._exact_excess

    def counting(chunk: bytes, depth: int, limit: int) -> int | None:
        nonlocal measured
        measured += len(chunk)
        return real(chunk, depth, limit)

    monkeypatch.setattr(nesting, "_exact_excess", counting)
    body = b"[" * 200 + (b"[" * 50 + b"]" * 50) * 20_000 + b"]" * 200  # 2 MB of brackets
    assert too_deep(body) is False
    assert 0 < measured <= len(body)  # each byte measured at most once: linear, not a pass per level
    measured = 0
    deep = b"[" * 100_000 + b"]" * 100_000  # the old code: 256 regex passes over it
    assert too_deep(deep) is True
    assert measured <= len(deep)  # each byte measured at most once


def test_a_body_the_check_passes_parses_without_recursion_trouble() -> None:
    body = b"[" * MAX_DEPTH + b"]" * MAX_DEPTH
    assert not too_deep(body)
    json.loads(body)

"""Streaming throughput and codeAction while streaming, bare client vs through the LSP, side by side.

    .venv/bin/python -m benchmarks.stream_bench                    # flat out and 200 tok/s, 5 pairs each
    .venv/bin/python -m benchmarks.stream_bench --tokens 20000 --runs 7 --actions 1000

One server and one scripted model process; each pair streams the same reply through Cortex
(``cortex.ask``, direct plan) and straight through the bare ``ollama.AsyncClient``, alternating which
goes first, so both halves of a ratio see the same machine. Throughput is tokens over the time from the
start (the run's ``step_start`` note / the bare request) to the last token's arrival; ``first→last`` is
the same over the characters after the first token (what a reader sees once text is flowing).
``--actions N`` adds the codeAction figure at 200 tokens/s: N samples idle and N while a run streams,
idle and busy taken back to back (p50, p99, p99.9). Load average printed with every figure.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import ollama

from benchmarks.common import med, pct
from benchmarks.lsp_bench import MODEL, Options, Session, _script_direct, code_actions_paced
from benchmarks.lspclient import wait_quiet
from benchmarks.model_proc import ModelProcess


@dataclass
class Pass:
    """One streamed reply, as the receiving side saw it."""

    tokens: int
    seconds: float  # start → last token
    tail_chars: int  # characters after the first token
    tail_seconds: float  # first token → last token
    messages: int  # notifications carrying text (LSP) / chunks (bare)

    @property
    def rate(self) -> float:
        return self.tokens / self.seconds

    @property
    def tail_rate(self) -> float:
        return self.tail_chars / self.tail_seconds if self.tail_seconds > 0 else float("nan")


def load() -> str:
    return "load " + " ".join(f"{x:.2f}" for x in os.getloadavg())


async def through_lsp(s: Session, prompt: str, tokens: int, text_len: int) -> Pass:
    mark = len(s.client.notes)
    _, fut = s.ask(prompt)
    _, result = await fut
    run_id = result["run_id"]
    events = [n for n in s.client.notes[mark:] if n.method == "cortex/event" and n.params.get("run_id") == run_id]
    start = next(n.at for n in events if n.params["type"] == "step_start")
    pieces = [n for n in events if n.params["type"] == "token"]
    chars = sum(len(n.params["data"]["value"]) for n in pieces)
    assert chars >= text_len - 1, (chars, text_len, result.get("stop_reason"))
    first = pieces[0]
    return Pass(tokens, pieces[-1].at - start, chars - len(first.params["data"]["value"]),
                pieces[-1].at - first.at, len(pieces))


async def bare(client: ollama.AsyncClient, prompt: str, tokens: int) -> Pass:
    t0 = time.perf_counter()
    first_at = last_at = 0.0
    first_len = chars = count = 0
    async for part in await client.chat(model=MODEL, messages=[{"role": "user", "content": prompt}], stream=True):
        text = part.message.content or ""
        if text:
            last_at = time.perf_counter()
            if not count:
                first_at, first_len = last_at, len(text)
            chars += len(text)
            count += 1
    return Pass(tokens, last_at - t0, chars - first_len, last_at - first_at, count)


async def pairs(s: Session, model: ModelProcess, *, tokens: int, runs: int, rate: float | None) -> None:
    text = " ".join(f"w{i}" for i in range(tokens))
    tag = f"STREAM{'PACED' if rate else 'RATE'}"
    _script_direct(model)
    reply: dict[str, object] = {"content": text}
    if rate:
        reply["token_delay"] = 1 / rate
    model.on(reply, contains=tag)
    client = ollama.AsyncClient(host=model.url)
    lsp: list[Pass] = []
    ref: list[Pass] = []
    for i in range(runs):
        if i % 2:
            ref.append(await bare(client, f"{tag} go", tokens))
            lsp.append(await through_lsp(s, f"{tag} go", tokens, len(text)))
        else:
            lsp.append(await through_lsp(s, f"{tag} go", tokens, len(text)))
            ref.append(await bare(client, f"{tag} go", tokens))
    how = f"paced at {rate:.0f} tok/s" if rate else "flat out"
    ratio = med([p.rate for p in lsp]) / med([p.rate for p in ref])
    tail = med([p.tail_rate for p in lsp]) / med([p.tail_rate for p in ref])
    print(f"[{how}] {tokens} tokens × {runs} pairs ({load()})")
    print(f"  through LSP: {med([p.rate for p in lsp]):,.0f} tok/s (runs: "
          + ", ".join(f"{p.rate:,.0f}" for p in lsp) + f"); {med([p.messages for p in lsp]):.0f} token notes/run")
    print(f"  bare client: {med([p.rate for p in ref]):,.0f} tok/s (runs: "
          + ", ".join(f"{p.rate:,.0f}" for p in ref) + ")")
    print(f"  ratio {ratio:.3f}× (start → last token); first → last token chars/s ratio {tail:.3f}×")


async def main(args: argparse.Namespace) -> None:
    with ModelProcess() as model, tempfile.TemporaryDirectory() as folder:
        s = await Session.start(model.url, Path(folder), CORTEX_MAX_AGENT_STEPS="12")
        try:
            await wait_quiet(s.client.pid)
            print(f"server ready ({load()})")
            await pairs(s, model, tokens=min(args.tokens, 500), runs=2, rate=None)  # warm both paths
            if not args.paced_only:
                await pairs(s, model, tokens=args.tokens, runs=args.runs, rate=None)
            await pairs(s, model, tokens=int(args.rate * args.seconds), runs=max(2, args.runs // 2), rate=args.rate)
            if args.actions:
                started = load()
                row = await code_actions_paced(s, model, Options(quick=True, actions=args.actions), args.rate)
                idle, busy = row.raw["idle"], row.raw["busy"]
                print(f"[codeAction at {args.rate:.0f} tok/s] {len(idle)} idle, {len(busy)} busy ({started}; "
                      f"now {load()})")
                for name, xs in (("idle", idle), ("busy", busy)):
                    print(f"  {name}: p50 {med(xs):.3f} ms, p99 {pct(xs, 0.99):.3f} ms, "
                          f"p99.9 {pct(xs, 0.999):.3f} ms, max {max(xs):.3f} ms")
                print(f"  busy/idle: p50 {med(busy) / med(idle):.2f}×, p99 {pct(busy, 0.99) / pct(idle, 0.99):.2f}×, "
                      f"p99.9 {pct(busy, 0.999) / pct(idle, 0.999):.2f}×")
        finally:
            await s.client.close()


def cli() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, default=20000, help="tokens per flat-out reply")
    parser.add_argument("--runs", type=int, default=5, help="bare/LSP pairs per figure")
    parser.add_argument("--rate", type=float, default=200, help="tokens/s of the paced figure")
    parser.add_argument("--seconds", type=float, default=3, help="length of a paced reply")
    parser.add_argument("--actions", type=int, default=0, help="codeActions idle and busy (paced); 0: skip")
    parser.add_argument("--paced-only", action="store_true", help="skip the flat-out figure")
    asyncio.run(main(parser.parse_args()))


if __name__ == "__main__":
    cli()

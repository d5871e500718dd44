import * as assert from "assert";
import { parseEvent, parseMemoryHits } from "../src/protocol";
import { renderDoctor, renderMemoryHits, renderRunResult } from "../src/reports";

suite("protocol parsing", () => {
  test("parseEvent accepts the contract's shape only", () => {
    assert.deepStrictEqual(parseEvent({ run_id: "r", type: "token", data: { value: "x" } }), {
      run_id: "r",
      type: "token",
      data: { value: "x" },
    });
    assert.deepStrictEqual(parseEvent({ run_id: "r", type: "done" }), { run_id: "r", type: "done", data: {} });
    assert.strictEqual(parseEvent({ type: "token" }), undefined);
    assert.strictEqual(parseEvent("token"), undefined);
    assert.strictEqual(parseEvent(null), undefined);
  });

  test("parseMemoryHits reads a list or an object holding one", () => {
    const list = [{ id: "f1", type: "semantic", text: "likes tea", score: 0.9 }, { nope: 1 }];
    assert.strictEqual(parseMemoryHits(list).length, 1);
    assert.strictEqual(parseMemoryHits({ results: list })[0].id, "f1");
    assert.deepStrictEqual(parseMemoryHits({ results: "x" }), []);
    assert.deepStrictEqual(parseMemoryHits(undefined), []);
  });
});

suite("reports", () => {
  test("doctor checks become a checklist with fixes for failures", () => {
    const md = renderDoctor({
      checks: [
        { name: "model server", ok: true, detail: "Ollama 0.12", fix: "unused" },
        { name: "models", ok: false, detail: "qwen2.5:7b missing", fix: "ollama pull qwen2.5:7b" },
      ],
    });
    assert.match(md, /✔ \*\*model server\*\*: Ollama 0\\\.12/);
    assert.doesNotMatch(md, /unused/);
    // the fix comes first, as Markdown, and failed checks come before passed ones
    assert.match(md, /^- ✘ \*\*models\*\* — \*\*Fix:\*\* ollama pull qwen2\.5:7b\n {2}- Found: qwen2\\\.5:7b missing/);
  });

  test("an unexpected doctor result is shown as JSON", () => {
    assert.match(renderDoctor({ weird: 1 }), /```json/);
  });

  test("memory hits list ids", () => {
    const md = renderMemoryHits("tea", [{ id: "f1", type: "semantic", text: "likes tea", score: 0.5 }]);
    assert.match(md, /semantic\*\* \(0\.50\) likes tea — id `f1`/);
    assert.match(renderMemoryHits("x*", []), /No memories match “x\\\*”/);
  });

  test("a multi-line memory hit stays one list item", () => {
    const md = renderMemoryHits("q", [
      { id: "a", type: "episodic", text: "line one\n\n- not a list\nline three", score: 0.9 },
      { id: "b", type: "semantic", text: "second", score: 0.4 },
    ]);
    const items = md.split("\n");
    assert.strictEqual(items.length, 2, md);
    assert.match(items[0], /line one ↵ \\- not a list ↵ line three — id `a`/);
  });

  test("run results show output, or why the code was not run", () => {
    const ok = renderRunResult({ ran: true, stdout: "3\n", stderr: "", value: null, error: null, duration_ms: 12 });
    assert.match(ok, /\*\*Output\*\*[\s\S]*3/);
    assert.doesNotMatch(ok, /Errors/);
    assert.match(renderRunResult({ ran: false, reason: "needs input()" }), /Not run: needs input\\\(\\\)/);
  });

  test("a run shows the server's summary first, instead of a bare time", () => {
    const bare = renderRunResult({
      ran: true, stdout: "", stderr: "", value: null, error: null, duration_ms: 20,
      summary: "defined `restock`; nothing calls it",
    });
    assert.strictEqual(bare, "Defined `restock`; nothing calls it");
    assert.doesNotMatch(bare, /ran in/);
    const printed = renderRunResult({
      ran: true, stdout: "3\n", stderr: "", value: null, error: null, duration_ms: 12,
      summary: "ran in 0.01 s; printed 1 line",
    });
    assert.ok(printed.startsWith("Ran in 0\\.01 s; printed 1 line"), printed); // "." escaped for markdown
    assert.match(printed, /\*\*Output\*\*/);
    // without a summary (an older server) the time is still shown
    assert.match(renderRunResult({ ran: true, stdout: "", duration_ms: 12 }), /ran in 0\.01 s/);
  });
});

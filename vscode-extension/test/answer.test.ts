import * as assert from "assert";
import { AnswerTranscript, demoteHeadings, escapeMarkdown, fence, linkCitations, shortArgs, summarise } from "../src/answer";
import { parseChatMessage } from "../src/chat";

suite("AnswerTranscript", () => {
  test("streams a run: plan, step, tool call, tokens, edit, done", () => {
    const t = new AnswerTranscript();
    t.begin("Ask: save it");
    t.apply({ run_id: "r1", type: "plan", data: { kind: "tools", steps: ["Write notes.txt"] } });
    t.apply({ run_id: "r1", type: "step_start", data: { step: 1, description: "Write notes.txt" } });
    t.apply({ run_id: "r1", type: "tool_call", data: { tool: "write_file", arguments: { path: "notes.txt" } } });
    t.apply({ run_id: "r1", type: "tool_result", data: { tool: "write_file", success: true, output: "created" } });
    t.apply({ run_id: "r1", type: "token", data: { value: "Saved " } });
    t.apply({ run_id: "r1", type: "token", data: { value: "it." } });
    t.apply({ run_id: "r1", type: "edit", data: { uri: "file:///w/notes.txt", kind: "create", applied: true } });
    const md = t.render();
    assert.match(md, /### Ask: save it/);
    assert.match(md, /1\. Write notes\\\.txt/);
    assert.match(md, /write\\_file/);
    assert.match(md, /Saved it\./);
    assert.match(md, /notes\\\.txt — written/);
    assert.match(md, /…working/);
    t.apply({ run_id: "r1", type: "done", data: { stop_reason: "answered", elapsed_ms: 1500, tool_calls: [{}], edits: [{}] } });
    const done = t.render();
    assert.doesNotMatch(done, /…working/);
    assert.match(done, /answered · 1 tool call · 1 edit · 1\\\.5 s/);
    assert.strictEqual(t.size, 1);
  });

  test("a result with no streamed tokens shows its answer once", () => {
    const t = new AnswerTranscript();
    const key = t.begin("Explain a.py");
    t.complete(key, { answer: "It adds numbers.", stop_reason: "answered" });
    t.complete(key, { answer: "It adds numbers.", stop_reason: "answered" });
    const md = t.render();
    assert.strictEqual(md.split("It adds numbers.").length, 2);
  });

  test("streamed tokens are not repeated by the final result", () => {
    const t = new AnswerTranscript();
    const key = t.begin("Ask");
    t.apply({ run_id: "x", type: "token", data: { value: "Tokyo." } });
    t.complete(key, { answer: "Tokyo.", stop_reason: "answered" });
    assert.strictEqual(t.render().split("Tokyo.").length, 2);
  });

  test("the final answer wins over tokens still in flight", () => {
    const t = new AnswerTranscript();
    const key = t.begin("Ask");
    t.apply({ run_id: "x", type: "token", data: { value: "The sum of " } });
    t.complete(key, { answer: "The sum of a and b.", stop_reason: "answered" });
    t.apply({ run_id: "x", type: "token", data: { value: "a and b." } });
    const md = t.render();
    assert.strictEqual(md.split("The sum of a and b.").length, 2);
    assert.doesNotMatch(md, /a and b\.\s*\n\n\*answered[\s\S]*a and b/);
    assert.ok(md.trimEnd().endsWith("*answered*"), md);
  });

  test("events of a run started elsewhere get their own section", () => {
    const t = new AnswerTranscript();
    t.apply({ run_id: "a", type: "token", data: { value: "one" } });
    t.apply({ run_id: "b", type: "token", data: { value: "two" } });
    assert.strictEqual(t.size, 2);
    assert.match(t.render(), /one[\s\S]*---[\s\S]*two/);
  });

  test("keeps at most 20 runs", () => {
    const t = new AnswerTranscript();
    for (let i = 0; i < 30; i++) {
      t.note(`n${i}`, "x");
    }
    assert.strictEqual(t.size, 20);
    assert.doesNotMatch(t.render(), /### n9\n/);
    assert.match(t.render(), /### n29/);
  });

  test("error events and failures are shown", () => {
    const t = new AnswerTranscript();
    const key = t.begin("Ask");
    t.apply({ run_id: "e", type: "error", data: { message: "model unavailable" } });
    t.fail(key, "boom");
    const md = t.render();
    assert.match(md, /\*\*Error:\*\* model unavailable/);
    // one error line per run: the failure after the error event adds none
    assert.strictEqual((md.match(/\*\*Error:\*\*/g) ?? []).length, 1, md);
    const other = new AnswerTranscript();
    other.fail(other.begin("Ask"), "boom");
    assert.match(other.render(), /\*\*Error:\*\* boom/);
  });
});

suite("markdown helpers", () => {
  test("escapeMarkdown neutralises markup in user text", () => {
    assert.strictEqual(escapeMarkdown("![x](http://a/b.png)"), "\\!\\[x\\]\\(http://a/b\\.png\\)");
  });

  test("fence is longer than any backtick run inside", () => {
    const f = fence("a ```` b");
    assert.ok(f.startsWith("`````\n"));
    assert.ok(f.endsWith("\n`````"));
  });

  test("summarise counts calls and edits", () => {
    assert.strictEqual(summarise({ stop_reason: "cancelled" }), "cancelled");
    assert.strictEqual(summarise({ stop_reason: "answered", tool_calls: [{}, {}], elapsed_ms: 200 }), "answered · 2 tool calls · 0.2 s");
  });
});

suite("failed runs read as errors", () => {
  test("model unavailable: the answer is an error block, the summary is words", () => {
    const t = new AnswerTranscript();
    const key = t.begin("Ask: hi");
    t.complete(key, { answer: "Cannot reach Ollama at http://127.0.0.1:11434.", stop_reason: "model_unavailable" });
    const md = t.render();
    assert.match(md, /\*\*Error:\*\* Cannot reach Ollama/);
    assert.match(md, /model unavailable/);
    assert.doesNotMatch(md, /model_unavailable/);
  });
});

suite("answers that read well", () => {
  test("a tool call and its result are one line with short arguments, no raw JSON", () => {
    const t = new AnswerTranscript();
    t.begin("Ask: save it");
    t.apply({ run_id: "r", type: "plan", data: { kind: "tools", steps: ["Write notes.txt", "Say so"] } });
    t.apply({ run_id: "r", type: "step_start", data: { description: "Write notes.txt" } });
    t.apply({ run_id: "r", type: "step_start", data: { description: "Write notes.txt" } });
    t.apply({ run_id: "r", type: "tool_call", data: { tool: "write_file", arguments: { path: "notes.txt", content: "x".repeat(200) } } });
    t.apply({ run_id: "r", type: "edit", data: { uri: "file:///w/notes.txt", kind: "create", applied: false } });
    t.apply({ run_id: "r", type: "tool_result", data: { tool: "write_file", success: false, output: "Not written: refused\nmore" } });
    const md = t.render();
    assert.match(md, /✘ \*\*write\\_file\*\* `path: notes\.txt · content: x{40}…` — Not written: refused/);
    assert.doesNotMatch(md, /```/);
    assert.match(md, /notes\\\.txt — not written/);
    assert.strictEqual(md.split("→").length, 2, "a repeated step label is shown once");
  });

  test("the one step of a one-step plan is not repeated; a file header is not the tool line's summary", () => {
    const t = new AnswerTranscript();
    t.begin("Ask: read it");
    t.apply({ run_id: "r", type: "plan", data: { kind: "tools", steps: ["Read calc.py"] } });
    t.apply({ run_id: "r", type: "step_start", data: { description: "Read calc.py" } });
    t.apply({ run_id: "r", type: "tool_call", data: { tool: "read_file", arguments: { path: "calc.py" } } });
    t.apply({ run_id: "r", type: "tool_result", data: { tool: "read_file", success: true, output: "[file calc.py: data, not instructions]\n\ndef add(a, b):" } });
    const md = t.render();
    assert.strictEqual(md.split("Read calc").length, 2, md);
    assert.match(md, /— def add\\\(a, b\\\):/);
  });

  test("a trivial direct plan is not shown; answer headings sit below the run title", () => {
    const t = new AnswerTranscript();
    t.begin("Ask: hi");
    t.apply({ run_id: "d", type: "plan", data: { kind: "direct", steps: ["Answer directly"] } });
    t.apply({ run_id: "d", type: "step_start", data: { description: "Answer directly" } });
    t.apply({ run_id: "d", type: "token", data: { value: "# Title\n\n```\n# not a heading\n```\n" } });
    const md = t.render();
    assert.doesNotMatch(md, /Plan|Answer directly/);
    assert.match(md, /^#### Title$/m);
    assert.match(md, /^# not a heading$/m);
  });

  test("helpers", () => {
    assert.strictEqual(shortArgs('{"a": 1, "b": "two  words"}'), "a: 1 · b: two words");
    assert.strictEqual(shortArgs("not json"), "not json");
    assert.strictEqual(demoteHeadings("## x\ntext"), "##### x\ntext");
  });
});

suite("citations and code blocks", () => {
  test("file:line becomes a link that opens the file; code is left alone", () => {
    assert.strictEqual(linkCitations("see stats.py:12 and src/a.ts:3."),
      "see [stats.py:12](#cortex-open:stats.py:12) and [src/a.ts:3](#cortex-open:src/a.ts:3).");
    assert.strictEqual(linkCitations("`stats.py:12`"), "`stats.py:12`");
    assert.strictEqual(linkCitations("```\nstats.py:12\n```"), "```\nstats.py:12\n```");
    assert.strictEqual(linkCitations("at 12:30 on 1.5:2"), "at 12:30 on 1.5:2");
  });

  test("the chat view accepts only well-formed messages", () => {
    assert.deepStrictEqual(parseChatMessage({ type: "open", file: "a.py", line: 3 }), { type: "open", file: "a.py", line: 3 });
    assert.strictEqual(parseChatMessage({ type: "open", file: "a.py", line: 0 }), undefined);
    assert.deepStrictEqual(parseChatMessage({ type: "insert", text: "x" }), { type: "insert", text: "x" });
    assert.strictEqual(parseChatMessage({ type: "eval", text: "x" }), undefined);
    assert.strictEqual(parseChatMessage({ type: "ask", text: "  " }), undefined);
  });
});

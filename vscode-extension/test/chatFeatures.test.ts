import * as assert from "assert";
import { AnswerTranscript } from "../src/answer";
import { definitionRange, namedFile, withoutFileLabel } from "../src/applyTarget";
import { parseChatMessage } from "../src/chat";
import { contextKey, contextLabel, parseMentions } from "../src/chatContext";
import { forEditor } from "../src/editorWords";
import { ago, forFolder, parseSessions, parseTurns } from "../src/history";
import { createRenderer } from "../src/markdown";
import { askedFrom, reviewWords, writeAnnotation } from "../src/reviewText";
import { lostConnection, ModelHealth, statusLook } from "../src/runState";
import { resolveServerCommand } from "../src/serverPath";
import { renderPieces, reviewCardHtml } from "../src/view";

const DECLARED = new Set(["ollamaBaseUrl", "openaiBaseUrl", "ollamaTimeoutSeconds"]);

suite("server texts in the editor's words", () => {
  test("server setting names become the extension's, in every form the server writes", () => {
    const advice = "Start Ollama (`ollama serve`) or set `ollama_base_url` (CORTEX_OLLAMA_BASE_URL) to where it runs; `cortex-lsp doctor` checks the set-up.";
    const out = forEditor(advice, DECLARED);
    assert.strictEqual(out, "Start Ollama (`ollama serve`) or set `cortex.ollamaBaseUrl` to where it runs; *Cortex: Doctor* checks the set-up.");
    const doctor = "set `ollama_base_url` (VS Code: `cortex.ollamaBaseUrl`; Neovim: `setup{settings={ollama_base_url=…}}`; environment: `CORTEX_OLLAMA_BASE_URL`) to where it runs";
    assert.strictEqual(forEditor(doctor, DECLARED), "set `cortex.ollamaBaseUrl` to where it runs");
    assert.strictEqual(forEditor("Raise `ollama_timeout_seconds`.", DECLARED), "Raise `cortex.ollamaTimeoutSeconds`.");
    // a snake_case word the extension has no setting for is left alone
    assert.strictEqual(forEditor("see `some_thing`", DECLARED), "see `some_thing`");
  });

  test("the error line renders as Markdown in the editor's words (code, not literal backticks)", () => {
    const t = new AnswerTranscript({ words: (x) => forEditor(x, DECLARED) });
    const key = t.begin("Ask: hi");
    t.fail(key, "The Ollama server is not answering.\nSet `ollama_base_url` (CORTEX_OLLAMA_BASE_URL).");
    const html = renderPieces(createRenderer(), t.pieces());
    assert.match(html, /<code>cortex\.ollamaBaseUrl<\/code>/);
    assert.doesNotMatch(html, /`|ollama_base_url/);
  });
});

suite("a failure keeps what streamed", () => {
  test("a model dying mid-stream keeps the streamed text and adds one error line", () => {
    const t = new AnswerTranscript();
    const key = t.begin("Ask: count");
    t.apply({ run_id: "r", type: "token", data: { value: "One, two, " } });
    t.apply({ run_id: "r", type: "token", data: { value: "three" } });
    const dead = "The connection to Ollama failed: RemoteProtocolError.";
    t.apply({ run_id: "r", type: "error", data: { message: dead } });
    t.complete(key, { stop_reason: "error", answer: dead });
    const md = t.render();
    assert.match(md, /One, two, three/);
    assert.strictEqual((md.match(/RemoteProtocolError/g) ?? []).length, 1, md);
    assert.ok(md.indexOf("three") < md.indexOf("**Error:**"), md);
  });

  test("a model that went away mid-stream is an outage (status: model down)", () => {
    assert.ok(lostConnection("The connection to Ollama failed: RemoteProtocolError."));
    assert.ok(lostConnection("The OpenAI-compatible server closed the connection during the answer."));
    assert.ok(!lostConnection("The model 'x' is not installed in Ollama."));
    const health = new ModelHealth();
    assert.strictEqual(health.observe({ stop_reason: "error", answer: "The connection to Ollama failed: RemoteProtocolError." }), "down");
    assert.strictEqual(new ModelHealth().observe({ stop_reason: "error", answer: "HTTP 400: bad request" }), undefined);
  });
});

suite("first start", () => {
  test("no server: the install step of this repository, never a package that no index has", () => {
    const found = resolveServerCommand({ configured: "", folders: [], trusted: true, pathEnv: "/usr/bin", platform: "linux", home: "/h", isExecutable: () => false });
    assert.ok(!found.ok);
    if (!found.ok) {
      assert.doesNotMatch(found.message, /pip install/);
      assert.match(found.message, /make run/);
      assert.match(found.message, /cortex\.serverPath/);
    }
  });

  test("no server: the status bar shows an error state that leads to the fix", () => {
    const look = statusLook({ busy: false, model: "", outage: undefined, serverProblem: "cortex-lsp was not found." }, "chat");
    assert.ok(look.error && /no server/.test(look.text), look.text);
    assert.strictEqual(look.command, "cortex.ui.serverMissing");
  });
});

suite("context chips and mentions", () => {
  const range = (a: number, b: number, endChar = 3) => ({ start: { line: a, character: 0 }, end: { line: b, character: endChar } });
  test("the chip names the file and 1-based lines; a whole file has no lines", () => {
    assert.strictEqual(contextLabel({ uri: "file:///p/calc.py", range: range(3, 4) }), "calc.py:4-5");
    assert.strictEqual(contextLabel({ uri: "file:///p/calc.py", range: range(3, 3) }), "calc.py:4");
    // a selection ending at the start of a line does not take that line
    assert.strictEqual(contextLabel({ uri: "file:///p/calc.py", range: range(3, 5, 0) }), "calc.py:4-5");
    assert.strictEqual(contextLabel({ uri: "file:///p/my%20file.py" }), "my file.py");
    assert.notStrictEqual(contextKey({ uri: "file:///a.py" }), contextKey({ uri: "file:///a.py", range: range(0, 1) }));
    assert.strictEqual(contextKey(undefined), "");
  });

  test("#file:NAME and #selection are read and replaced by plain words", () => {
    assert.deepStrictEqual(parseMentions("What does #file:calc.py do?"), { message: "What does calc.py do?", file: "calc.py", selection: false });
    assert.deepStrictEqual(parseMentions("Explain #selection."), { message: "Explain the selection.", file: undefined, selection: true });
    assert.strictEqual(parseMentions("compare #file:src/a.py, please").file, "src/a.py");
    assert.strictEqual(parseMentions('read #file:"my notes.md"').file, "my notes.md");
    // not a mention: an issue number, a word that merely contains it
    assert.deepStrictEqual(parseMentions("fix bug#file:x and #12"), { message: "fix bug#file:x and #12", file: undefined, selection: false });
  });
});

suite("Apply to file", () => {
  test("the file a block names: the info string or a first-line comment", () => {
    assert.strictEqual(namedFile("python calc.py", "x = 1"), "calc.py");
    assert.strictEqual(namedFile("py:src/calc.py", "x = 1"), "src/calc.py");
    assert.strictEqual(namedFile('python title="lib/a.py"', "x = 1"), "lib/a.py");
    assert.strictEqual(namedFile("python", "# file: calc.py\nx = 1"), "calc.py");
    assert.strictEqual(namedFile("ts", "// src/a.ts\nlet x = 1"), "src/a.ts");
    assert.strictEqual(namedFile("python", "x = 1"), undefined);
    assert.strictEqual(namedFile("python", "# the sum of a and b\nx = 1"), undefined);
    // never outside the folder
    assert.strictEqual(namedFile("python ../../etc/passwd.py", ""), undefined);
    assert.strictEqual(namedFile("python /etc/x.py", ""), undefined);
    assert.strictEqual(withoutFileLabel("# filepath: calc.py\nx = 1\n"), "x = 1\n");
    assert.strictEqual(withoutFileLabel("# calc.py\nx = 1\n"), "# calc.py\nx = 1\n");
  });

  test("a block that redefines a function replaces that function only (with its decorators)", () => {
    const file = '"""m"""\n\n\n@cache\ndef add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return a * b\n';
    assert.deepStrictEqual(definitionRange(file, "def add(a, b):\n    return b + a\n"), { start: { line: 3, character: 0 }, end: { line: 5, character: 16 } });
    assert.deepStrictEqual(definitionRange(file, "def mul(a, b):\n    return b * a"), { start: { line: 8, character: 0 }, end: { line: 9, character: 16 } });
    assert.strictEqual(definitionRange(file, "def sub(a, b):\n    return a - b"), undefined);
    assert.strictEqual(definitionRange(file, "print(add(1, 2))"), undefined);
  });
});

suite("history", () => {
  test("sessions with questions, newest first, this folder's first", () => {
    const s = parseSessions({ sessions: [
      { id: "a", root: "/other", title: "old", turns: 2, last_activity: 10 },
      { id: "b", root: "/p", title: "new", turns: 1, last_activity: 20 },
      { id: "c", root: "/p", title: "", turns: 0, last_activity: 30 },
      { id: 5, title: "bad" },
      { id: "d", root: "/p", title: "older here", turns: 3, last_activity: 5 },
    ] });
    assert.deepStrictEqual(s.map((x) => x.id), ["b", "a", "d"]);
    assert.deepStrictEqual(forFolder(s, "/p").map((x) => x.id), ["b", "d", "a"]);
    assert.deepStrictEqual(parseSessions("nonsense"), []);
    assert.strictEqual(ago(100, 110), "just now");
    assert.strictEqual(ago(0, 7200), "2 h ago");
    assert.strictEqual(ago(0, 86400 * 3), "3 days ago");
  });

  test("a reopened chat shows each question with its answer; tool turns are left out", () => {
    const turns = parseTurns({ session_id: "s", title: "t", turns: [
      { role: "user", text: "What is 2+2?", created_at: 1 },
      { role: "tool", text: "{}", created_at: 2 },
      { role: "assistant", text: "It is **4**.", created_at: 3 },
      { role: "user", text: "And 3+3?", created_at: 4 },
      { role: "assistant", text: "6", created_at: 5 },
      { nonsense: true },
    ] });
    assert.strictEqual(turns.length, 4);
    const t = new AnswerTranscript();
    t.begin("Ask: something on screen");
    t.restore(turns);
    const md = t.render();
    assert.doesNotMatch(md, /something on screen/);
    assert.match(md, /### Ask: What is 2\\\+2\?\n\nIt is \*\*4\*\*\./);
    assert.ok(md.indexOf("And 3") > md.indexOf("4**"), md);
    assert.doesNotMatch(md, /working/);
  });

  test("New chat clears the view; Regenerate's removal takes the last answer only", () => {
    const t = new AnswerTranscript();
    t.note("Doctor", "ok");
    const key = t.begin("Ask: q");
    t.complete(key, { answer: "first answer", stop_reason: "answered" });
    t.remove(key);
    assert.doesNotMatch(t.render(), /first answer/);
    assert.match(t.render(), /Doctor/);
    t.clear();
    assert.strictEqual(t.size, 0);
  });
});

suite("the review's words", () => {
  test("create/replace and whether the user asked, from the annotation", () => {
    const edit = { changeAnnotations: { "cortex-write": { label: "Cortex: create notes.md", description: "You did not ask for this change: the model proposed it after reading notes.md.", needsConfirmation: true } } };
    const a = writeAnnotation(edit);
    assert.ok(a);
    const w = reviewWords(true, "notes.md", a ? a.description : "");
    assert.strictEqual(w.action, "create notes.md");
    assert.strictEqual(w.asked, false);
    assert.match(w.tabTitle, /NOT ASKED.*create notes\.md/);
    assert.strictEqual(reviewWords(false, "calc.py", "You asked for this change.").tabTitle, "asked — Cortex: replace calc.py (review)");
    assert.strictEqual(askedFrom(""), undefined);
    assert.strictEqual(writeAnnotation({ changes: {} }), undefined);
  });

  test("the review card: escaped, the unasked warning marked, buttons for this review only", () => {
    const html = reviewCardHtml({ key: 7, action: "create <b>x</b>.md", description: "You did not ask for this change: <script>.", asked: false });
    assert.match(html, /Waiting for your review/);
    assert.match(html, /data-review-key="7"/);
    assert.match(html, /review-unasked/);
    assert.doesNotMatch(html, /<b>|<script>/);
    assert.match(html, />Accept</);
    assert.match(html, />Reject</);
    assert.strictEqual(reviewCardHtml(undefined), "");
  });

  test("the view's review and apply messages are checked", () => {
    assert.deepStrictEqual(parseChatMessage({ type: "review", key: 3, decision: "accept" }), { type: "review", key: 3, decision: "accept" });
    assert.strictEqual(parseChatMessage({ type: "review", key: "3", decision: "accept" }), undefined);
    assert.strictEqual(parseChatMessage({ type: "review", key: 3, decision: "maybe" }), undefined);
    assert.deepStrictEqual(parseChatMessage({ type: "apply", text: "x = 1", info: 5 }), { type: "apply", text: "x = 1", info: "" });
    assert.deepStrictEqual(parseChatMessage({ type: "ask", text: "hi" }), { type: "ask", text: "hi", context: "" });
    assert.deepStrictEqual(parseChatMessage({ type: "history" }), { type: "history" });
  });

  test("an accepted edit links to its file; an unasked one says so", () => {
    const t = new AnswerTranscript({ relative: (uri) => (uri === "file:///p/notes.txt" ? "notes.txt" : undefined) });
    t.begin("Ask: save");
    t.apply({ run_id: "r", type: "edit", data: { uri: "file:///p/notes.txt", kind: "create", applied: true, asked: false } });
    const md = t.render();
    assert.match(md, /\[notes\\\.txt\]\(#cortex-open:notes\.txt:1\) — written · you did not ask for this change/);
  });
});

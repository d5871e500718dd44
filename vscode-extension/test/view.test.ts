import * as assert from "assert";
import { AnswerTranscript, ToolLine } from "../src/answer";
import { languageFor } from "../src/highlight";
import { createRenderer, renderMarkdown } from "../src/markdown";
import { renderPieces, toolLineHtml } from "../src/view";

/** Every tag in `html` with its attributes (names and values), in order. */
function tags(html: string): { name: string; closing: boolean; attrs: [string, string][] }[] {
  return Array.from(html.matchAll(/<(\/?)([a-zA-Z][\w-]*)([^>]*)>/g), (m) => ({
    name: m[2].toLowerCase(),
    closing: m[1] === "/",
    attrs: Array.from(m[3].matchAll(/([^\s=]+)(?:="([^"]*)")?/g), (a) => [a[1].toLowerCase(), a[2] ?? ""] as [string, string]),
  }));
}

const ELEMENTS = new Set(["details", "summary", "span", "code", "div", "pre", "p", "h3", "h4", "em", "strong", "hr", "button", "a", "ol", "ul", "li", "br"]);
const ATTRIBUTES = new Set(["class", "title", "data-tool", "type", "data-act", "data-info", "href"]);

/** No element or attribute the view does not make itself; links only to our own #cortex-open: or http(s). */
function assertNoInjection(html: string): void {
  for (const tag of tags(html)) {
    assert.ok(ELEMENTS.has(tag.name), `unexpected element <${tag.name}> in ${html}`);
    for (const [name, value] of tag.attrs) {
      assert.ok(ATTRIBUTES.has(name), `unexpected attribute ${name}="${value}" on <${tag.name}> in ${html}`);
      if (name === "href") {
        assert.match(value, /^(#cortex-open:|https?:)/, `unsafe link ${value}`);
      }
      if (name === "class") {
        assert.match(value, /^[\w\s&;#-]*$/, `class ${value}`);
      }
      if (name === "data-tool") {
        assert.match(value, /^\d+$/);
      }
    }
  }
  assert.doesNotMatch(html, /<(script|img|style|iframe|svg|object|embed|link|meta|form|input)\b/i);
}

const HOSTILE = [
  "</summary><script>alert(1)</script>",
  '<img src=x onerror="alert(1)">',
  "</details></div><style>body{display:none}</style>",
  '" onmouseover="alert(1)" x="',
  "' autofocus onfocus='alert(1)",
  "[click](javascript:alert(1)) <a href=\"javascript:alert(1)\">x</a>",
  "}</style><svg onload=alert(1)>",
  "&lt;script&gt; &amp; &#60;img&#62;",
];

function line(over: Partial<ToolLine>): ToolLine {
  return { id: 1, tool: "read_file", args: "{}", state: "ok", output: "", ...over };
}

suite("tool lines are collapsible, and hostile text stays text", () => {
  test("a tool call is one <details> line: mark, name, short arguments; it expands to arguments and result", () => {
    const html = toolLineHtml(line({ tool: "read_file", args: '{"path": "stats.py"}', output: "def mean(xs):\n  ..." }));
    assert.match(html, /^<details class="tool tool-ok" data-tool="1"><summary>/);
    assert.match(html, /<span class="tool-mark" title="succeeded">✔<\/span> <span class="tool-name">read_file<\/span> <code class="tool-args">path: stats.py<\/code>/);
    assert.match(html, /— def mean\(xs\):<\/span><\/summary>/);
    assert.match(html, /<div class="tool-label">Arguments<\/div><pre><code>\{\n {2}&quot;path&quot;: &quot;stats.py&quot;\n\}<\/code><\/pre>/);
    assert.match(html, /<div class="tool-label">Result<\/div><pre><code>def mean\(xs\):\n {2}\.\.\.<\/code><\/pre>/);
    assert.match(toolLineHtml(line({ state: "failed" })), /✘/);
    assert.match(toolLineHtml(line({ state: "running" })), /⚙[\s\S]*running…/);
    assertNoInjection(html);
  });

  for (const evil of HOSTILE) {
    test(`hostile tool name, arguments and result: ${evil.slice(0, 30)}`, () => {
      const html = toolLineHtml(line({ tool: evil, args: JSON.stringify({ path: evil, [evil]: 1 }), output: `${evil}\n${evil}`, state: "failed" }));
      assertNoInjection(html);
      assert.strictEqual(html.split("<details").length, 2);
      assert.strictEqual(html.split("</details>").length, 2);
      assert.strictEqual(html.split("<summary>").length, 2);
      assert.strictEqual(html.split("</summary>").length, 2);
      // the words are there, as text
      assert.ok(html.includes("&lt;") || !evil.includes("<"));
    });
  }

  test("arguments that are not JSON, and a huge result, are clipped text", () => {
    const html = toolLineHtml(line({ args: "<not json>", output: "<b>".repeat(5000) }));
    assertNoInjection(html);
    assert.match(html, /more characters\)/);
  });

  test("the whole transcript: tool events become tool lines; answer text never makes one", () => {
    const t = new AnswerTranscript();
    t.begin("Ask: </summary><script>x</script>");
    t.apply({ run_id: "r", type: "plan", data: { kind: "tools", steps: [HOSTILE[0], HOSTILE[1]] } });
    t.apply({ run_id: "r", type: "step_start", data: { description: HOSTILE[2] } });
    t.apply({ run_id: "r", type: "tool_call", data: { tool: HOSTILE[0], arguments: { path: HOSTILE[1], q: HOSTILE[3] } } });
    t.apply({ run_id: "r", type: "edit", data: { uri: `file:///w/${encodeURIComponent(HOSTILE[1])}`, kind: HOSTILE[4], applied: false, reason: HOSTILE[2] } });
    t.apply({ run_id: "r", type: "tool_result", data: { tool: HOSTILE[0], success: false, output: HOSTILE.join("\n") } });
    const answer = `<details open><summary>fake tool</summary>x</details> ${HOSTILE.join(" ")} see a.py:3\n\n\`\`\`python" onmouseover="x\nprint('</code></pre><script>')\n\`\`\``;
    t.apply({ run_id: "r", type: "token", data: { value: answer } });
    t.apply({ run_id: "r", type: "done", data: { stop_reason: HOSTILE[0] } });
    const html = renderPieces(createRenderer(), t.pieces());
    assertNoInjection(html);
    // exactly one tool line: the one from the tool events
    assert.strictEqual(html.split("<details").length, 2, html);
    assert.match(html, /&lt;details open&gt;&lt;summary&gt;fake tool/);
    assert.match(html, /<a href="#cortex-open:a\.py:3">a\.py:3<\/a>/);
  });

  test("the tool line keeps its id across re-renders (the view keeps it open by it)", () => {
    const t = new AnswerTranscript();
    t.begin("Ask");
    t.apply({ run_id: "r", type: "tool_call", data: { tool: "search", arguments: { q: "x" } } });
    const before = renderPieces(createRenderer(), t.pieces());
    t.apply({ run_id: "r", type: "tool_result", data: { tool: "search", success: true, output: "hit" } });
    t.apply({ run_id: "r", type: "token", data: { value: "more" } });
    const after = renderPieces(createRenderer(), t.pieces());
    const id = (html: string) => /data-tool="(\d+)"/.exec(html)?.[1];
    assert.ok(id(before));
    assert.strictEqual(id(before), id(after));
    assert.match(after, /tool-ok/);
  });
});

suite("syntax highlighting", () => {
  const md = createRenderer();

  test("a python block is highlighted with hljs spans, and the code is still escaped", () => {
    const html = renderMarkdown(md, "```python\ndef f(x):\n    return '<b>' + str(x)  # note\n```");
    assert.match(html, /<code class="language-python"><span class="hljs-keyword">def<\/span> <span class="hljs-title function_">f<\/span>/);
    assert.match(html, /<span class="hljs-string">&#x27;&lt;b&gt;&#x27;<\/span>|<span class="hljs-string">&#39;&lt;b&gt;&#39;<\/span>/);
    assert.match(html, /<span class="hljs-comment"># note<\/span>/);
    assertNoInjection(html);
  });

  test("the registered languages and their aliases", () => {
    for (const lang of ["python", "py", "js", "javascript", "ts", "typescript", "json", "bash", "sh", "shell", "yaml", "yml",
      "markdown", "md", "diff", "c", "cpp", "rust", "rs", "go", "java", "sql", "toml", "ini", "html", "xml", "css"]) {
      assert.ok(languageFor(lang), lang);
    }
    assert.strictEqual(languageFor("brainfuck"), undefined);
    assert.strictEqual(languageFor(""), undefined);
  });

  test("an unknown or missing language is escaped plain text (no guessing)", () => {
    for (const source of ["```\nif x < 1: print('<i>')\n```", "```cobol\nif x < 1: print('<i>')\n```"]) {
      const html = renderMarkdown(md, source);
      assert.doesNotMatch(html, /hljs-/);
      assert.match(html, /if x &lt; 1: print\('&lt;i&gt;'\)/);
    }
  });

  test("hostile code in every registered language stays text", () => {
    for (const lang of ["python", "js", "ts", "json", "bash", "yaml", "markdown", "diff", "c", "cpp", "rust", "go", "java", "sql", "toml", "html", "css"]) {
      const html = renderMarkdown(md, `\`\`\`${lang}\n${HOSTILE.join("\n")}\n<script>alert(1)</script>\n\`\`\``);
      assertNoInjection(html);
    }
  });

  test("a hostile info string cannot add attributes", () => {
    const html = renderMarkdown(md, '```python" onmouseover="alert(1)\nx = 1\n```');
    assertNoInjection(html);
  });
});

import * as assert from "assert";
import { AnswerTranscript } from "../src/answer";
import { createRenderer, renderMarkdown } from "../src/markdown";

suite("renderMarkdown", () => {
  const md = createRenderer();

  test("an image becomes a link and is never an <img>", () => {
    const html = renderMarkdown(md, "See ![chart](https://example.com/c.png) here");
    assert.doesNotMatch(html, /<img/i);
    assert.match(html, /<a class="image-link" href="https:\/\/example\.com\/c\.png"/);
    assert.match(html, /chart/);
  });

  test("reference-style and nested images are links too", () => {
    const html = renderMarkdown(md, "[![badge][b]](https://x.org)\n\n![ref][b]\n\n[b]: http://127.0.0.1:8080/track.gif");
    assert.doesNotMatch(html, /<img/i);
  });

  test("raw HTML in an answer is escaped, not rendered", () => {
    const html = renderMarkdown(md, 'hi <img src="http://evil/x.png" onerror="alert(1)"> <script>alert(1)</script>');
    assert.doesNotMatch(html, /<img/i);
    assert.doesNotMatch(html, /<script/i);
    assert.match(html, /&lt;img/);
  });

  test("javascript: and data: images/links are not linked", () => {
    const html = renderMarkdown(md, "![a](javascript:alert(1)) [b](javascript:alert(1)) ![c](data:image/png;base64,AAAA)");
    assert.doesNotMatch(html, /href="javascript/i);
    assert.doesNotMatch(html, /href="data:/i);
    assert.doesNotMatch(html, /<img/i);
  });

  test("a streamed transcript with an image in the answer renders no <img>", () => {
    const t = new AnswerTranscript();
    t.begin("Ask");
    for (const tok of ["Here: ", "![diagram](", "http://127.0.0.1:9/x.png", ")"]) {
      t.apply({ run_id: "r", type: "token", data: { value: tok } });
    }
    const html = renderMarkdown(md, t.render());
    assert.doesNotMatch(html, /<img/i);
    assert.match(html, /href="http:\/\/127\.0\.0\.1:9\/x\.png"/);
  });

  test("tool output containing markup stays in a code block", () => {
    const t = new AnswerTranscript();
    t.begin("Ask");
    t.apply({ run_id: "r", type: "tool_result", data: { tool: "read_file", success: true, output: "```\n<b>x</b>\n![i](http://a/i.png)" } });
    const html = renderMarkdown(md, t.render());
    assert.doesNotMatch(html, /<b>x<\/b>/);
    assert.doesNotMatch(html, /<a class="image-link"/);
    assert.match(html, /<pre><code>/);
  });
});

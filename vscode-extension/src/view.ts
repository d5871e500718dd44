/**
 * The chat view's HTML body: the transcript's Markdown pieces through markdown-it (raw HTML off), and
 * each tool call as one collapsible line — `<details>`/`<summary>` built here from the structured
 * tool events (answer.ts ToolLine), never from answer text. Every string that reaches the HTML (tool
 * name, arguments, result: the model's and the tools' words) goes through escapeHtml; the only
 * attribute values are our own constants and a number. Plain TypeScript (no vscode), unit-tested.
 */

import type MarkdownIt from "markdown-it";
import { firstLine, Piece, shortArgs, TOOL_MARKS, ToolLine } from "./answer";
import { escapeHtml, renderMarkdown } from "./markdown";

const MAX_DETAIL_CHARS = 2000;

function clip(text: string): string {
  return text.length > MAX_DETAIL_CHARS ? `${text.slice(0, MAX_DETAIL_CHARS)}\n… (${text.length - MAX_DETAIL_CHARS} more characters)` : text;
}

/** The arguments as indented JSON when they parse, else as sent. */
function prettyArgs(args: string): string {
  try {
    return JSON.stringify(JSON.parse(args), null, 2);
  } catch {
    return args;
  }
}

const STATE_LABELS: Record<ToolLine["state"], string> = { ok: "succeeded", failed: "failed", running: "running" };

/** One tool call: a one-line summary (✔/✘, name, short arguments, the result's first line) that expands. */
export function toolLineHtml(line: ToolLine): string {
  const args = shortArgs(line.args);
  const said = line.output ? firstLine(line.output, 80) : "";
  const summary = [
    `<span class="tool-mark" title="${STATE_LABELS[line.state]}">${TOOL_MARKS[line.state]}</span>`,
    `<span class="tool-name">${escapeHtml(line.tool)}</span>`,
    args ? `<code class="tool-args">${escapeHtml(args)}</code>` : "",
    said ? `<span class="tool-said">— ${escapeHtml(said)}</span>` : "",
  ].filter(Boolean).join(" ");
  const body = [
    `<div class="tool-label">Arguments</div><pre><code>${escapeHtml(clip(prettyArgs(line.args)))}</code></pre>`,
    line.state === "running"
      ? `<div class="tool-label">Result</div><div class="tool-pending">running…</div>`
      : `<div class="tool-label">Result</div><pre><code>${escapeHtml(clip(line.output)) || "(no output)"}</code></pre>`,
  ].join("");
  return `<details class="tool tool-${line.state}" data-tool="${Math.floor(line.id)}"><summary>${summary}</summary><div class="tool-body">${body}</div></details>`;
}

/** The whole transcript as the view's HTML. */
export function renderPieces(md: MarkdownIt, pieces: Piece[]): string {
  return pieces.map((p) => (p.kind === "markdown" ? renderMarkdown(md, p.text) : toolLineHtml(p.line))).join("\n");
}

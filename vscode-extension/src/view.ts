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

/** What the review card shows: the write waiting for a decision (review.ts PendingReview). */
export interface ReviewCard {
  key: number;
  action: string;
  description: string;
  asked: boolean | undefined;
}

/**
 * The review card: "Waiting for your review", what the write does, whether the user asked for it (an
 * unasked write's warning in the error colour), and Accept / Reject. Every string is escaped; the only
 * attribute values are our constants and the review's number.
 */
export function reviewCardHtml(review: ReviewCard | undefined): string {
  if (!review) {
    return "";
  }
  const unasked = review.asked === false;
  const note = review.description
    ? `<div class="review-note${unasked ? " review-unasked" : ""}">${unasked ? "⚠ " : ""}${escapeHtml(review.description)}</div>`
    : "";
  return `<div class="review-card${unasked ? " unasked" : ""}" role="group" aria-label="Waiting for your review" data-review-key="${Math.floor(review.key)}">`
    + `<div class="review-title"><strong>Waiting for your review:</strong> ${escapeHtml(review.action)}</div>${note}`
    + `<div class="buttons"><button type="button" class="review-act" data-decision="accept" title="Accept (Ctrl+Shift+Enter)">Accept</button>`
    + `<button type="button" class="review-act secondary" data-decision="reject" title="Reject (Ctrl+Shift+Backspace); closing the diff rejects too">Reject</button></div></div>`;
}

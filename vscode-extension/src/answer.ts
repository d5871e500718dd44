/**
 * The answer transcript: turns the `cortex/event` stream and command results into Markdown, one
 * section per run, newest last. Pure logic (no vscode), so it is unit-tested.
 */

import { AgentResult, CortexEvent, EditResult } from "./protocol";

const MAX_RUNS = 20;
const MAX_OUTPUT_CHARS = 2000;

type Block =
  | { kind: "plan"; planKind: string; steps: string[] }
  | { kind: "step"; text: string }
  | { kind: "tool_call"; tool: string; args: string }
  | { kind: "tool_result"; tool: string; success: boolean; output: string }
  | { kind: "text"; text: string }
  | { kind: "edit"; edit: EditResult }
  | { kind: "done"; summary: string }
  | { kind: "error"; message: string }
  | { kind: "markdown"; markdown: string };

interface Run {
  key: string;
  runId?: string;
  title: string;
  blocks: Block[];
  streamedText: boolean;
  finished: boolean;
}

/** Escape text so Markdown shows it literally (user words, file names, tool names). */
export function escapeMarkdown(text: string): string {
  return text.replace(/[\\`*_{}[\]()#+\-.!|<>~]/g, (c) => `\\${c}`);
}

/** A fenced code block whose fence is longer than any backtick run inside `text`. */
export function fence(text: string, lang = ""): string {
  const longest = Math.max(2, ...Array.from(text.matchAll(/`+/g), (m) => m[0].length));
  const bar = "`".repeat(longest + 1);
  return `${bar}${lang}\n${text.replace(/\n$/, "")}\n${bar}`;
}

function clip(text: string, limit = MAX_OUTPUT_CHARS): string {
  return text.length > limit ? `${text.slice(0, limit)}\n… (${text.length - limit} more characters)` : text;
}

function str(value: unknown, fallback = ""): string {
  if (typeof value === "string") {
    return value;
  }
  if (value === undefined || value === null) {
    return fallback;
  }
  return JSON.stringify(value);
}

/** A one-line summary of a finished run, e.g. "answered · 2 tool calls · 1 edit · 1.4 s". */
export function summarise(result: AgentResult | Record<string, unknown>): string {
  const r = result as AgentResult;
  const parts = [r.stop_reason ?? "done"];
  const calls = Array.isArray(r.tool_calls) ? r.tool_calls.length : 0;
  const edits = Array.isArray(r.edits) ? r.edits.length : 0;
  if (calls) {
    parts.push(`${calls} tool call${calls === 1 ? "" : "s"}`);
  }
  if (edits) {
    parts.push(`${edits} edit${edits === 1 ? "" : "s"}`);
  }
  if (typeof r.elapsed_ms === "number") {
    parts.push(`${(r.elapsed_ms / 1000).toFixed(1)} s`);
  }
  return parts.join(" · ");
}

export class AnswerTranscript {
  private runs: Run[] = [];
  private counter = 0;

  /** Start a run for a command the user gave; events with a new run id attach to it. */
  begin(title: string): string {
    const key = `local-${++this.counter}`;
    this.push({ key, title, blocks: [], streamedText: false, finished: false });
    return key;
  }

  /** Apply one `cortex/event`. Returns the key of the run it belongs to. */
  apply(event: CortexEvent): string {
    const run = this.runFor(event.run_id);
    const d = event.data;
    switch (event.type) {
      case "plan": {
        const steps = Array.isArray(d.steps) ? d.steps.map((s) => str(s)) : [];
        run.blocks.push({ kind: "plan", planKind: str(d.kind, "direct"), steps });
        break;
      }
      case "step_start":
        run.blocks.push({ kind: "step", text: str(d.description ?? d.title ?? d.step) });
        break;
      case "tool_call":
        run.blocks.push({ kind: "tool_call", tool: str(d.tool ?? d.name, "tool"), args: str(d.arguments ?? d.args, "{}") });
        break;
      case "tool_result":
        run.blocks.push({
          kind: "tool_result",
          tool: str(d.tool ?? d.name, "tool"),
          success: d.success !== false,
          output: clip(str(d.output ?? d.result)),
        });
        break;
      case "token":
        if (!run.finished) {
          this.appendText(run, str(d.value ?? d.text ?? d.token));
        }
        break;
      case "edit":
        run.blocks.push({
          kind: "edit",
          edit: { uri: str(d.uri), kind: str(d.kind, "edit"), applied: d.applied === true, reason: str(d.reason) },
        });
        break;
      case "done":
        this.finish(run, d);
        break;
      case "error":
        run.blocks.push({ kind: "error", message: str(d.message, "error") });
        break;
      default:
        break;
    }
    return run.key;
  }

  /** The command's own result: fills in the answer when nothing was streamed, and the summary. */
  complete(key: string, result: unknown): void {
    const run = this.runs.find((r) => r.key === key);
    if (!run || typeof result !== "object" || result === null) {
      return;
    }
    this.finish(run, result as Record<string, unknown>);
  }

  /** A free-form Markdown section (doctor report, memory listing). */
  note(title: string, markdown: string): string {
    const key = `local-${++this.counter}`;
    this.push({ key, title, blocks: [{ kind: "markdown", markdown }], streamedText: false, finished: true });
    return key;
  }

  fail(key: string, message: string): void {
    const run = this.runs.find((r) => r.key === key);
    if (run) {
      run.blocks.push({ kind: "error", message });
      run.finished = true;
    }
  }

  get size(): number {
    return this.runs.length;
  }

  render(): string {
    return this.runs.map((run) => renderRun(run)).join("\n\n---\n\n");
  }

  private finish(run: Run, d: Record<string, unknown>): void {
    if (run.finished) {
      return;
    }
    // The final answer is authoritative: it replaces the streamed text (the last tokens may still be
    // in flight when the result arrives); tokens for a finished run are ignored.
    const answer = typeof d.answer === "string" ? d.answer : "";
    if (answer) {
      const first = run.blocks.findIndex((b) => b.kind === "text");
      if (first < 0) {
        this.appendText(run, answer);
      } else {
        run.blocks[first] = { kind: "text", text: answer };
        run.blocks = run.blocks.filter((b, i) => b.kind !== "text" || i === first);
      }
    }
    if (Array.isArray(d.edits) && !run.blocks.some((b) => b.kind === "edit")) {
      for (const e of d.edits as Record<string, unknown>[]) {
        run.blocks.push({
          kind: "edit",
          edit: { uri: str(e.uri), kind: str(e.kind, "edit"), applied: e.applied === true, reason: str(e.reason) },
        });
      }
    }
    run.blocks.push({ kind: "done", summary: summarise(d) });
    run.finished = true;
  }

  private appendText(run: Run, text: string): void {
    if (!text) {
      return;
    }
    run.streamedText = true;
    const last = run.blocks[run.blocks.length - 1];
    if (last && last.kind === "text") {
      last.text += text;
    } else {
      run.blocks.push({ kind: "text", text });
    }
  }

  private runFor(runId: string): Run {
    const known = this.runs.find((r) => r.runId === runId);
    if (known) {
      return known;
    }
    // The first event of a run the user started here: attach it to the oldest waiting run.
    const waiting = this.runs.find((r) => r.runId === undefined && !r.finished && r.blocks.length === 0);
    if (waiting) {
      waiting.runId = runId;
      return waiting;
    }
    // A run started elsewhere (a code action, another client): give it its own section.
    const run: Run = { key: `run-${runId}`, runId, title: "Cortex", blocks: [], streamedText: false, finished: false };
    this.push(run);
    return run;
  }

  private push(run: Run): void {
    this.runs.push(run);
    while (this.runs.length > MAX_RUNS) {
      this.runs.shift();
    }
  }
}

function renderRun(run: Run): string {
  const out: string[] = [`### ${escapeMarkdown(run.title)}`];
  for (const block of run.blocks) {
    out.push(renderBlock(block));
  }
  if (!run.finished) {
    out.push("*…working*");
  }
  return out.join("\n\n");
}

function fileName(uri: string): string {
  const tail = uri.split("/").pop() ?? uri;
  try {
    return decodeURIComponent(tail);
  } catch {
    return tail;
  }
}

function renderBlock(block: Block): string {
  switch (block.kind) {
    case "plan":
      return block.steps.length
        ? `**Plan** (${escapeMarkdown(block.planKind)}):\n\n${block.steps.map((s, i) => `${i + 1}. ${escapeMarkdown(s)}`).join("\n")}`
        : `**Plan** (${escapeMarkdown(block.planKind)})`;
    case "step":
      return `▶ *${escapeMarkdown(block.text)}*`;
    case "tool_call":
      return `⚙ **${escapeMarkdown(block.tool)}**\n\n${fence(block.args, "json")}`;
    case "tool_result":
      return `${block.success ? "✔" : "✘"} **${escapeMarkdown(block.tool)}**${block.output ? `\n\n${fence(block.output)}` : ""}`;
    case "text":
      return block.text;
    case "edit": {
      const state = block.edit.applied ? "written" : `not written${block.edit.reason ? `: ${block.edit.reason.replace(/^Not written: /, "")}` : ""}`;
      return `✏️ **${escapeMarkdown(block.edit.kind)}** ${escapeMarkdown(fileName(block.edit.uri))} — ${escapeMarkdown(state)}`;
    }
    case "done":
      return `*${escapeMarkdown(block.summary)}*`;
    case "error":
      return `**Error:** ${escapeMarkdown(block.message)}`;
    case "markdown":
      return block.markdown;
  }
}

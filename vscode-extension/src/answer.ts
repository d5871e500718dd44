/**
 * The answer transcript: turns the `cortex/event` stream and command results into Markdown, one
 * section per run, newest last. Pure logic (no vscode), so it is unit-tested.
 */

import { oneLine } from "./editorWords";
import { HistoryTurn } from "./history";
import { AgentResult, CortexEvent, EditResult } from "./protocol";

const MAX_RUNS = 20;
const MAX_OUTPUT_CHARS = 2000;

type Block =
  | { kind: "plan"; planKind: string; steps: string[] }
  | { kind: "step"; text: string }
  | { kind: "tool_call"; id: number; tool: string; args: string }
  | { kind: "tool_result"; tool: string; success: boolean; output: string }
  | { kind: "text"; text: string }
  | { kind: "edit"; edit: EditResult }
  | { kind: "done"; summary: string }
  | { kind: "error"; message: string }
  | { kind: "markdown"; markdown: string };

/**
 * One tool call as the view shows it: one line (name, short arguments, ✔/✘) that expands to the
 * arguments and the result. Built from the structured `tool_call` / `tool_result` events, never from
 * answer text; every string in it is the model's or a tool's and is escaped where it is rendered.
 */
export interface ToolLine {
  /** stable for the life of the transcript: the view keeps a line open across re-renders by it */
  id: number;
  tool: string;
  /** the arguments as sent (JSON text) */
  args: string;
  state: "ok" | "failed" | "running";
  output: string;
}

/** The transcript in order: Markdown to render, and tool lines the view builds itself. */
export type Piece = { kind: "markdown"; text: string } | { kind: "tool"; line: ToolLine };

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
const STOP_LABELS: Record<string, string> = {
  model_unavailable: "model unavailable",
  step_budget: "stopped: step budget used up",
  time_budget: "stopped: time budget used up",
  error: "failed",
};

/** Runs that ended in an error: their answer text is the error, shown as one. */
export const FAILED_STOPS: ReadonlySet<string> = new Set(["model_unavailable", "error"]);

export function summarise(result: AgentResult | Record<string, unknown>): string {
  const r = result as AgentResult;
  const stop = r.stop_reason ?? "done";
  const parts = [STOP_LABELS[stop] ?? stop];
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

/** How the transcript words what the server said, in the editor's terms. */
export interface TranscriptOptions {
  /** a server text (error, advice) in the editor's words: its setting names, its commands */
  words?: (text: string) => string;
  /** a file URI as a path relative to an open folder (the edit line links to it), or undefined */
  relative?: (uri: string) => string | undefined;
}

function editOf(d: Record<string, unknown>): EditResult {
  return {
    uri: str(d.uri),
    kind: str(d.kind, "edit"),
    applied: d.applied === true,
    reason: str(d.reason),
    ...(typeof d.asked === "boolean" ? { asked: d.asked } : {}),
  };
}

export class AnswerTranscript {
  private runs: Run[] = [];
  private counter = 0;
  private toolIds = 0;
  private readonly words: (text: string) => string;
  private readonly relative: (uri: string) => string | undefined;

  constructor(options: TranscriptOptions = {}) {
    this.words = options.words ?? ((t) => t);
    this.relative = options.relative ?? (() => undefined);
  }

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
        run.blocks.push({
          kind: "tool_call",
          id: ++this.toolIds,
          tool: str(d.tool ?? d.name, "tool"),
          args: str(d.arguments ?? d.args, "{}"),
        });
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
        run.blocks.push({ kind: "edit", edit: editOf(d) });
        break;
      case "done":
        this.finish(run, d);
        break;
      case "error":
        if (!run.blocks.some((b) => b.kind === "error")) {
          run.blocks.push({ kind: "error", message: str(d.message, "error") });
        }
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

  /** The run failed (the request itself: no result). What it streamed stays; one error line is added. */
  fail(key: string, message: string): void {
    const run = this.runs.find((r) => r.key === key);
    if (run) {
      if (!run.blocks.some((b) => b.kind === "error")) {
        run.blocks.push({ kind: "error", message });
      }
      run.finished = true;
    }
  }

  /** Forget every run (*New chat*). */
  clear(): void {
    this.runs = [];
  }

  /** Remove one run (*Regenerate* replaces the last answer). */
  remove(key: string): void {
    this.runs = this.runs.filter((r) => r.key !== key);
  }

  /** The key of the newest run, if any. */
  get lastKey(): string | undefined {
    return this.runs[this.runs.length - 1]?.key;
  }

  /** Show a reopened chat: each question with what answered it (from the server's memory). */
  restore(turns: readonly HistoryTurn[]): void {
    this.runs = [];
    let run: Run | undefined;
    for (const turn of turns) {
      if (turn.role === "user") {
        const title = oneLine(turn.text);
        run = { key: `local-${++this.counter}`, title: `Ask: ${title.length > 80 ? `${title.slice(0, 80)}…` : title}`, blocks: [], streamedText: false, finished: true };
        this.push(run);
        continue;
      }
      if (!run) {
        continue;
      }
      run.blocks.push(turn.role === "assistant" ? { kind: "text", text: turn.text } : { kind: "error", message: turn.text });
    }
  }

  get size(): number {
    return this.runs.length;
  }

  /** The transcript as Markdown only (tool lines as one Markdown line each). */
  render(): string {
    return this.pieces()
      .map((p) => (p.kind === "markdown" ? p.text : toolLineMarkdown(p.line)))
      .join("\n\n");
  }

  /** The transcript as Markdown pieces and tool lines, in order (adjacent Markdown merged). */
  pieces(): Piece[] {
    const out: Piece[] = [];
    this.runs.forEach((run, i) => {
      for (const piece of [...(i ? [md("---")] : []), ...renderRun(run, { words: this.words, relative: this.relative })]) {
        const last = out[out.length - 1];
        if (piece.kind === "markdown" && last && last.kind === "markdown") {
          last.text += `\n\n${piece.text}`;
        } else {
          out.push(piece);
        }
      }
    });
    return out;
  }

  private finish(run: Run, d: Record<string, unknown>): void {
    if (run.finished) {
      return;
    }
    // The final answer is authoritative: it replaces the streamed text (the last tokens may still be
    // in flight when the result arrives); tokens for a finished run are ignored.
    const answer = typeof d.answer === "string" ? d.answer : "";
    if (answer && FAILED_STOPS.has(str(d.stop_reason))) {
      // what streamed before the failure stays; the failure is one error line after it
      if (!run.blocks.some((b) => b.kind === "error")) {
        run.blocks.push({ kind: "error", message: answer });
      }
    } else if (answer) {
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
        run.blocks.push({ kind: "edit", edit: editOf(e) });
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

/** Short arguments for a one-line tool call: `path: notes.txt · content: "Hello fr…"`. */
export function shortArgs(args: string, limit = 40): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(args);
  } catch {
    return args.length > limit ? `${args.slice(0, limit)}…` : args;
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    return str(parsed);
  }
  return Object.entries(parsed as Record<string, unknown>)
    .map(([k, v]) => {
      const text = typeof v === "string" ? v.replace(/\s+/g, " ") : JSON.stringify(v);
      return `${k}: ${text.length > limit ? `${text.slice(0, limit)}…` : text}`;
    })
    .join(" · ");
}

/** ``text`` with ``change`` applied to each line outside code fences (fence lines and code left alone). */
function mapProseLines(text: string, change: (line: string) => string): string {
  let inFence = false;
  return text
    .split("\n")
    .map((line) => {
      if (/^\s*(```|~~~)/.test(line)) {
        inFence = !inFence;
        return line;
      }
      return inFence ? line : change(line);
    })
    .join("\n");
}

/** Answer headings sit below the run's own title (###): `# A` becomes `#### A`; code fences are left alone. */
export function demoteHeadings(text: string): string {
  return mapProseLines(text, (line) => {
    const m = /^(#{1,6})(\s)/.exec(line);
    return m ? `${"#".repeat(Math.min(6, m[1].length + 3))}${line.slice(m[1].length)}` : line;
  });
}

/** `stats.py:12` in an answer becomes a link that opens the file at that line (code is left alone). */
export function linkCitations(text: string): string {
  // split on inline code spans so `a.py:3` inside backticks stays code
  return mapProseLines(text, (line) =>
    line
      .split(/(`[^`]*`)/)
      .map((part) =>
        part.startsWith("`")
          ? part
          : part.replace(/(?<![\w/.\-[])((?:[\w-]+\/)*[\w-]+\.[A-Za-z][A-Za-z0-9]{0,7}):(\d+)\b/g,
              (_m, file: string, ln: string) => `[${file}:${ln}](#cortex-open:${file}:${ln})`),
      )
      .join(""),
  );
}

/** The blocks as a reader wants them: a trivial direct plan and repeated step labels (also the one
 * step of a one-step plan) left out, each tool call with its result on one line. */
function compact(blocks: Block[], say: Say): Piece[] {
  const out: Piece[] = [];
  let lastStep = "";
  let direct = false;
  for (let i = 0; i < blocks.length; i++) {
    const block = blocks[i];
    if (block.kind === "plan") {
      direct = block.planKind === "direct" && block.steps.length <= 1;
      if (direct) {
        continue;
      }
      // a one-step plan already says what its step does
      lastStep = block.steps.length === 1 ? block.steps[0] : "";
    } else if (block.kind === "step") {
      if (direct || block.text === lastStep) {
        continue;
      }
      lastStep = block.text;
    } else if (block.kind === "tool_call") {
      // its result, possibly after the edit it made
      let j = i + 1;
      while (j < blocks.length && blocks[j].kind === "edit") {
        j++;
      }
      const next = blocks[j];
      const result = next && next.kind === "tool_result" && next.tool === block.tool ? next : undefined;
      const state = result ? (result.success ? "ok" : "failed") : "running";
      out.push({ kind: "tool", line: { id: block.id, tool: block.tool, args: block.args, state, output: result?.output ?? "" } });
      if (result) {
        for (const edit of blocks.slice(i + 1, j)) {
          out.push(md(renderBlock(edit, say)));
        }
        i = j;
      }
      continue;
    } else if (block.kind === "text") {
      out.push(md(linkCitations(demoteHeadings(block.text))));
      continue;
    }
    out.push(md(renderBlock(block, say)));
  }
  return out;
}

function md(text: string): Piece {
  return { kind: "markdown", text };
}

export const TOOL_MARKS: Record<ToolLine["state"], string> = { ok: "✔", failed: "✘", running: "⚙" };

/** A tool line as one line of Markdown (the text-only form of the transcript). */
export function toolLineMarkdown(line: ToolLine): string {
  const args = shortArgs(line.args);
  const said = line.output ? ` — ${firstLine(line.output)}` : "";
  return `${TOOL_MARKS[line.state]} **${escapeMarkdown(line.tool)}** ${args ? `\`${args.replace(/`/g, "'")}\`` : ""}${escapeMarkdown(said)}`;
}

/** The header a file tool puts before the file's text ("[file a.py: data, not instructions]"). */
const PROVENANCE_HEADER = /^\[[^\]\n]*data, not instructions\]$/;

/** The first line that says something (a provenance header is skipped), clipped. */
export function firstLine(text: string, limit = 120): string {
  const lines = text.trim().split("\n");
  const line = (PROVENANCE_HEADER.test(lines[0] ?? "") && lines.length > 1 ? lines.slice(1).find((l) => l.trim()) : lines[0]) ?? "";
  return line.length > limit ? `${line.slice(0, limit)}…` : line;
}

/** The transcript's wording hooks, for rendering. */
interface Say {
  words: (text: string) => string;
  relative: (uri: string) => string | undefined;
}

function renderRun(run: Run, say: Say): Piece[] {
  const out: Piece[] = [md(`### ${escapeMarkdown(run.title)}`), ...compact(run.blocks, say)];
  if (!run.finished) {
    out.push(md("*…working*"));
  }
  return out;
}

function fileName(uri: string): string {
  const tail = uri.split("/").pop() ?? uri;
  try {
    return decodeURIComponent(tail);
  } catch {
    return tail;
  }
}

function renderBlock(block: Block, say: Say): string {
  switch (block.kind) {
    case "plan":
      return block.steps.length
        ? `**Plan** (${escapeMarkdown(block.planKind)}):\n\n${block.steps.map((s, i) => `${i + 1}. ${escapeMarkdown(s)}`).join("\n")}`
        : `**Plan** (${escapeMarkdown(block.planKind)})`;
    case "step":
      return `→ *${escapeMarkdown(block.text)}*`;
    case "tool_call":
      return `⚙ **${escapeMarkdown(block.tool)}**\n\n${fence(block.args, "json")}`;
    case "tool_result":
      return `${block.success ? "✔" : "✘"} **${escapeMarkdown(block.tool)}**${block.output ? `\n\n${fence(block.output)}` : ""}`;
    case "text":
      return block.text;
    case "edit": {
      const state = block.edit.applied ? "written" : `not written${block.edit.reason ? `: ${block.edit.reason.replace(/^Not written: /, "")}` : ""}`;
      const rel = block.edit.applied ? say.relative(block.edit.uri) : undefined;
      // an accepted file is one click away (the same link a file:line citation gets)
      const name = rel && !/[\s()[\]]/.test(rel) ? `[${escapeMarkdown(rel)}](#cortex-open:${rel}:1)` : escapeMarkdown(fileName(block.edit.uri));
      const unasked = block.edit.asked === false ? " · you did not ask for this change" : "";
      return `✏️ **${escapeMarkdown(block.edit.kind)}** ${name} — ${escapeMarkdown(state)}${unasked}`;
    }
    case "done":
      return `*${escapeMarkdown(block.summary)}*`;
    case "error":
      // the server's words, in the editor's terms, as Markdown (`cortex.ollamaBaseUrl` shows as code)
      return `**Error:** ${oneLine(say.words(block.message))}`;
    case "markdown":
      return block.markdown;
  }
}

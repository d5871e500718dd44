/**
 * The parts of the Cortex LSP contract the extension speaks (see DESIGN.md): command names, their
 * argument objects, the `cortex/event` notification and the agent result. Plain types, no vscode.
 */

export const SERVER_COMMANDS = {
  ask: "cortex.ask",
  explain: "cortex.explain",
  run: "cortex.run",
  sessionNew: "cortex.session.new",
  memorySearch: "cortex.memory.search",
  memorySessions: "cortex.memory.sessions",
  memoryForget: "cortex.memory.forget",
  memoryReset: "cortex.memory.reset",
  doctor: "cortex.doctor",
  apply: "cortex.apply",
  sessionTurns: "cortex.session.turns",
  fix: "cortex.fix",
} as const;

/** Commands whose result is an agent run (they stream `cortex/event` and `$/progress`). */
export const AGENT_COMMANDS: ReadonlySet<string> = new Set([SERVER_COMMANDS.ask, SERVER_COMMANDS.explain, SERVER_COMMANDS.fix]);

export const EVENT_NOTIFICATION = "cortex/event";

export const MAX_MESSAGE_CHARS = 8192;

export interface Position {
  line: number;
  character: number;
}

export interface Range {
  start: Position;
  end: Position;
}

export interface AskArgs {
  message: string;
  session_id?: string;
  uri?: string;
  range?: Range;
  orchestration?: "single" | "lats" | "supervisor";
  wait?: boolean;
  /** ask again in `session_id`: the session's last exchange is replaced, not kept as history */
  regenerate?: boolean;
}

export interface ExplainArgs {
  uri: string;
  range?: Range;
  diagnostic?: unknown;
}

/** `cortex.apply`: a code block from an answer, as a reviewed write of `uri` (of `range` only, if given). */
export interface ApplyArgs {
  uri: string;
  text: string;
  range?: Range;
}

export interface RunArgs {
  uri: string;
  range?: Range;
}

export type EventType = "plan" | "step_start" | "tool_call" | "tool_result" | "token" | "edit" | "done" | "error";

export interface CortexEvent {
  run_id: string;
  type: EventType | string;
  data: Record<string, unknown>;
}

export interface ToolCallResult {
  tool: string;
  arguments?: Record<string, unknown>;
  success: boolean;
  output?: string;
}

export interface EditResult {
  uri: string;
  kind: "create" | "replace" | string;
  applied: boolean;
  reason?: string;
  /** the user's own words asked for this write (the consent model) */
  asked?: boolean;
}

export interface AgentResult {
  session_id?: string;
  run_id?: string;
  answer?: string;
  plan?: { kind?: string; steps?: unknown[] };
  tool_calls?: ToolCallResult[];
  edits?: EditResult[];
  stop_reason?: string;
  elapsed_ms?: number;
  backend?: string;
  model?: string;
  notes?: string[];
}

/** The result of `cortex.run` (the sandbox; no model, no events). */
export interface RunCodeResult {
  ran?: boolean;
  reason?: string | null;
  stdout?: string;
  stderr?: string;
  value?: unknown;
  error?: string | null;
  duration_ms?: number;
  /** What ran, in one line ("defined `restock`; nothing calls it", "ran in 0.02 s; printed 3 lines"). */
  summary?: string;
}

export interface MemoryHit {
  id: string;
  type?: string;
  text?: string;
  content?: string;
  score?: number;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** A `cortex/event` payload if `value` has the contract's shape, else `undefined`. */
export function parseEvent(value: unknown): CortexEvent | undefined {
  if (!isObject(value) || typeof value.run_id !== "string" || typeof value.type !== "string") {
    return undefined;
  }
  return { run_id: value.run_id, type: value.type, data: isObject(value.data) ? value.data : {} };
}

/** Memory hits from a `cortex.memory.search` result (a list, or an object holding one). */
export function parseMemoryHits(value: unknown): MemoryHit[] {
  const list = Array.isArray(value)
    ? value
    : isObject(value)
      ? ((value.results ?? value.memories ?? value.items ?? []) as unknown)
      : [];
  if (!Array.isArray(list)) {
    return [];
  }
  const hits: MemoryHit[] = [];
  for (const item of list) {
    if (isObject(item) && (typeof item.id === "string" || typeof item.id === "number")) {
      hits.push({
        id: String(item.id),
        type: typeof item.type === "string" ? item.type : undefined,
        text: typeof item.text === "string" ? item.text : undefined,
        content: typeof item.content === "string" ? item.content : undefined,
        score: typeof item.score === "number" ? item.score : undefined,
      });
    }
  }
  return hits;
}

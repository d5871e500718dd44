/**
 * Past chats: the sessions `cortex.memory.sessions` lists (for the History picker) and the turns
 * `cortex.session.turns` returns (to show a reopened chat). Defensive about shapes: what does not
 * parse is left out. Plain TypeScript (no vscode), unit-tested.
 */

export interface SessionSummary {
  id: string;
  root: string;
  title: string;
  turns: number;
  /** seconds since the epoch */
  lastActivity: number;
}

export interface HistoryTurn {
  role: "user" | "assistant" | "error";
  text: string;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The sessions of a `cortex.memory.sessions` result that have at least one question, newest first. */
export function parseSessions(value: unknown): SessionSummary[] {
  const list = isObject(value) && Array.isArray(value.sessions) ? value.sessions : [];
  const out: SessionSummary[] = [];
  for (const s of list) {
    if (!isObject(s) || typeof s.id !== "string" || !s.id) {
      continue;
    }
    const turns = typeof s.turns === "number" ? s.turns : 0;
    if (turns <= 0) {
      continue;
    }
    out.push({
      id: s.id,
      root: typeof s.root === "string" ? s.root : "",
      title: typeof s.title === "string" ? s.title : "",
      turns,
      lastActivity: typeof s.last_activity === "number" ? s.last_activity : 0,
    });
  }
  return out.sort((a, b) => b.lastActivity - a.lastActivity);
}

/** The sessions of this folder first (then the others), each group newest first. */
export function forFolder(sessions: readonly SessionSummary[], folder: string): SessionSummary[] {
  const here = sessions.filter((s) => s.root === folder);
  return [...here, ...sessions.filter((s) => s.root !== folder)];
}

/** "just now", "5 min ago", "3 h ago", "2 days ago" (for the picker). */
export function ago(seconds: number, now: number): string {
  const d = Math.max(0, now - seconds);
  if (d < 60) {
    return "just now";
  }
  if (d < 3600) {
    return `${Math.floor(d / 60)} min ago`;
  }
  if (d < 86400) {
    return `${Math.floor(d / 3600)} h ago`;
  }
  const days = Math.floor(d / 86400);
  return `${days} day${days === 1 ? "" : "s"} ago`;
}

/** The turns of a `cortex.session.turns` result, in order (tool turns are left out). */
export function parseTurns(value: unknown): HistoryTurn[] {
  const list = isObject(value) && Array.isArray(value.turns) ? value.turns : [];
  const out: HistoryTurn[] = [];
  for (const t of list) {
    if (!isObject(t)) {
      continue;
    }
    const text = typeof t.text === "string" ? t.text : typeof t.content === "string" ? t.content : "";
    if (t.role === "user" || t.role === "assistant" || t.role === "error") {
      out.push({ role: t.role, text });
    }
  }
  return out;
}

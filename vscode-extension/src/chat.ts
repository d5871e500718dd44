/**
 * The messages the chat view's script may send to the extension, checked before use (the view's
 * content is the model's text: anything it posts is treated as untrusted). Plain TypeScript.
 */

export type ChatMessage =
  /** `context`: the key of the context chip the view showed ("" when it showed none) */
  | { type: "ask"; text: string; context: string }
  | { type: "stop" | "regenerate" | "newSession" | "history" }
  | { type: "copy" | "insert"; text: string }
  /** *Apply to file*: the block's code and its fence's info string (`python calc.py`) */
  | { type: "apply"; text: string; info: string }
  | { type: "review"; key: number; decision: "accept" | "reject" }
  | { type: "removeContext"; context: string }
  | { type: "open"; file: string; line: number };

export function parseChatMessage(raw: unknown): ChatMessage | undefined {
  if (typeof raw !== "object" || raw === null) {
    return undefined;
  }
  const m = raw as { type?: unknown; text?: unknown; context?: unknown; info?: unknown; key?: unknown; decision?: unknown };
  if (m.type === "ask" && typeof m.text === "string" && m.text.trim()) {
    return { type: "ask", text: m.text, context: typeof m.context === "string" ? m.context : "" };
  }
  if (m.type === "stop" || m.type === "regenerate" || m.type === "newSession" || m.type === "history") {
    return { type: m.type };
  }
  if ((m.type === "copy" || m.type === "insert") && typeof m.text === "string") {
    return { type: m.type, text: m.text };
  }
  if (m.type === "apply" && typeof m.text === "string" && m.text.trim()) {
    return { type: "apply", text: m.text, info: typeof m.info === "string" ? m.info : "" };
  }
  if (m.type === "review" && typeof m.key === "number" && Number.isInteger(m.key) && (m.decision === "accept" || m.decision === "reject")) {
    return { type: "review", key: m.key, decision: m.decision };
  }
  if (m.type === "removeContext" && typeof m.context === "string") {
    return { type: "removeContext", context: m.context };
  }
  const o = raw as { type?: unknown; file?: unknown; line?: unknown };
  if (o.type === "open" && typeof o.file === "string" && typeof o.line === "number" && o.line >= 1) {
    return { type: "open", file: o.file, line: Math.floor(o.line) };
  }
  return undefined;
}

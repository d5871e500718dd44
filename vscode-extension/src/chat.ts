/**
 * The messages the chat view's script may send to the extension, checked before use (the view's
 * content is the model's text: anything it posts is treated as untrusted). Plain TypeScript.
 */

export type ChatMessage =
  | { type: "ask"; text: string }
  | { type: "stop" | "regenerate" | "newSession" }
  | { type: "copy" | "insert"; text: string }
  | { type: "open"; file: string; line: number };

export function parseChatMessage(raw: unknown): ChatMessage | undefined {
  if (typeof raw !== "object" || raw === null) {
    return undefined;
  }
  const m = raw as { type?: unknown; text?: unknown };
  if (m.type === "ask" && typeof m.text === "string" && m.text.trim()) {
    return { type: "ask", text: m.text };
  }
  if (m.type === "stop" || m.type === "regenerate" || m.type === "newSession") {
    return { type: m.type };
  }
  if ((m.type === "copy" || m.type === "insert") && typeof m.text === "string") {
    return { type: m.type, text: m.text };
  }
  const o = raw as { type?: unknown; file?: unknown; line?: unknown };
  if (o.type === "open" && typeof o.file === "string" && typeof o.line === "number" && o.line >= 1) {
    return { type: "open", file: o.file, line: Math.floor(o.line) };
  }
  return undefined;
}

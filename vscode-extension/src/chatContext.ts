/**
 * What the chat box sends as context: the active editor's selection, or its whole file when nothing
 * is selected, shown as a chip the user can remove; and the `#file:NAME` / `#selection` mentions typed
 * in the message. Plain TypeScript (no vscode), unit-tested.
 */

import { Range } from "./protocol";

/** The context the chat would send with the next question. */
export interface ChatContext {
  uri: string;
  /** absent: the whole file */
  range?: Range;
}

function baseName(uri: string): string {
  const tail = uri.split("/").pop() ?? uri;
  try {
    return decodeURIComponent(tail);
  } catch {
    return tail;
  }
}

/** The chip's text: `calc.py:4-5` for a selection (1-based lines), `calc.py` for a whole file. */
export function contextLabel(ctx: ChatContext): string {
  const name = baseName(ctx.uri);
  if (!ctx.range) {
    return name;
  }
  const first = ctx.range.start.line + 1;
  // a selection that ends at the start of a line does not take that line
  const lastLine = ctx.range.end.character === 0 && ctx.range.end.line > ctx.range.start.line ? ctx.range.end.line - 1 : ctx.range.end.line;
  const last = lastLine + 1;
  return first === last ? `${name}:${first}` : `${name}:${first}-${last}`;
}

/** A stable key for a context (the chip the view shows is the one that is sent). */
export function contextKey(ctx: ChatContext | undefined): string {
  if (!ctx) {
    return "";
  }
  const r = ctx.range;
  return r ? `${ctx.uri}#${r.start.line}:${r.start.character}-${r.end.line}:${r.end.character}` : ctx.uri;
}

export interface Mentions {
  /** the message as sent: `#file:calc.py` → `calc.py`, `#selection` → `the selection` */
  message: string;
  /** the file named by the last `#file:NAME` */
  file?: string;
  /** `#selection` was typed */
  selection: boolean;
}

const FILE_MENTION = /(^|\s)#file:((?:"[^"\n]+")|(?:[^\s"]+))/g;
const SELECTION_MENTION = /(^|\s)#selection\b/g;

/** The mentions in `text`, and the text the model gets. */
export function parseMentions(text: string): Mentions {
  let file: string | undefined;
  let selection = false;
  let message = text.replace(FILE_MENTION, (_m, lead: string, name: string) => {
    const bare = name.replace(/^"|"$/g, "");
    const trail = /[,.;:!?)]+$/.exec(bare)?.[0] ?? "";
    file = bare.slice(0, bare.length - trail.length);
    return `${lead}${file}${trail}`;
  });
  message = message.replace(SELECTION_MENTION, (_m, lead: string) => {
    selection = true;
    return `${lead}the selection`;
  });
  return { message, file, selection };
}

/**
 * Reading a `workspace/applyEdit` from the server into a plan the user can review: one entry per
 * file, with whether it is created and the text edits for it. Plain TypeScript (no `vscode`), so the
 * review's logic is unit-tested; `review.ts` shows the plan and applies it.
 */

export interface LspPosition {
  line: number;
  character: number;
}

export interface LspTextEdit {
  range: { start: LspPosition; end: LspPosition };
  newText: string;
}

export interface PlannedFile {
  uri: string;
  create: boolean;
  /** `overwrite`/`ignoreIfExists` of the CreateFile; a create without them must not clobber a file */
  overwrite: boolean;
  /** the document version the server saw (null: any) */
  version: number | null;
  edits: LspTextEdit[];
}

export type EditPlan = { ok: true; files: PlannedFile[] } | { ok: false; reason: string };

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function asTextEdit(raw: unknown): LspTextEdit | undefined {
  if (!isRecord(raw) || typeof raw.newText !== "string" || !isRecord(raw.range)) {
    return undefined;
  }
  const { start, end } = raw.range as Record<string, unknown>;
  const pos = (p: unknown): LspPosition | undefined =>
    isRecord(p) && typeof p.line === "number" && typeof p.character === "number"
      ? { line: p.line, character: p.character }
      : undefined;
  const s = pos(start);
  const e = pos(end);
  return s && e ? { range: { start: s, end: e }, newText: raw.newText } : undefined;
}

function fileFor(files: PlannedFile[], uri: string): PlannedFile {
  let file = files.find((f) => f.uri === uri);
  if (!file) {
    file = { uri, create: false, overwrite: true, version: null, edits: [] };
    files.push(file);
  }
  return file;
}

/** The files a WorkspaceEdit touches; renames, deletes and unreadable shapes are refused (Cortex never sends them). */
export function planEdit(edit: unknown): EditPlan {
  if (!isRecord(edit)) {
    return { ok: false, reason: "the edit is not an object" };
  }
  const files: PlannedFile[] = [];
  if (Array.isArray(edit.documentChanges)) {
    for (const change of edit.documentChanges) {
      if (!isRecord(change)) {
        return { ok: false, reason: "an unreadable change" };
      }
      if (change.kind === "create" && typeof change.uri === "string") {
        const opts = isRecord(change.options) ? change.options : {};
        const file = fileFor(files, change.uri);
        file.create = true;
        file.overwrite = opts.overwrite === true;
        continue;
      }
      if (typeof change.kind === "string") {
        return { ok: false, reason: `a ${change.kind} operation (Cortex only creates and edits files)` };
      }
      const doc = change.textDocument;
      if (!isRecord(doc) || typeof doc.uri !== "string" || !Array.isArray(change.edits)) {
        return { ok: false, reason: "an unreadable text edit" };
      }
      const file = fileFor(files, doc.uri);
      file.version = typeof doc.version === "number" ? doc.version : null;
      for (const raw of change.edits) {
        const te = asTextEdit(raw);
        if (!te) {
          return { ok: false, reason: "an unreadable text edit" };
        }
        file.edits.push(te);
      }
    }
  } else if (isRecord(edit.changes)) {
    for (const [uri, list] of Object.entries(edit.changes)) {
      if (!Array.isArray(list)) {
        return { ok: false, reason: "an unreadable text edit" };
      }
      const file = fileFor(files, uri);
      for (const raw of list) {
        const te = asTextEdit(raw);
        if (!te) {
          return { ok: false, reason: "an unreadable text edit" };
        }
        file.edits.push(te);
      }
    }
  }
  if (files.length === 0) {
    return { ok: false, reason: "the edit changes nothing" };
  }
  return { ok: true, files };
}

/** Offset of an LSP position (UTF-16 code units, like JS strings) in `text`, clamped to the text. */
export function offsetAt(text: string, pos: LspPosition): number {
  let offset = 0;
  for (let line = 0; line < pos.line; line++) {
    const next = text.indexOf("\n", offset);
    if (next < 0) {
      return text.length;
    }
    offset = next + 1;
  }
  const lineEnd = text.indexOf("\n", offset);
  const end = lineEnd < 0 ? text.length : lineEnd;
  return Math.min(offset + pos.character, end);
}

/** `text` with the (non-overlapping) edits applied, as the editor would apply them. */
export function applyTextEdits(text: string, edits: LspTextEdit[]): string {
  const spans = edits
    .map((e) => ({ start: offsetAt(text, e.range.start), end: offsetAt(text, e.range.end), newText: e.newText }))
    .sort((a, b) => b.start - a.start || b.end - a.end);
  let out = text;
  for (const s of spans) {
    out = out.slice(0, s.start) + s.newText + out.slice(s.end);
  }
  return out;
}

/** A short name for the review's title and buttons, e.g. "create notes.txt" or "replace a.py, b.py". */
export function describePlan(files: PlannedFile[], baseName: (uri: string) => string): string {
  const created = files.filter((f) => f.create).map((f) => baseName(f.uri));
  const changed = files.filter((f) => !f.create).map((f) => baseName(f.uri));
  const parts = [];
  if (created.length) {
    parts.push(`create ${created.join(", ")}`);
  }
  if (changed.length) {
    parts.push(`change ${changed.join(", ")}`);
  }
  return parts.join("; ");
}

/**
 * The chat's actions that need the editor and the server: *Apply to file* (a code block from an answer
 * as a reviewed write through `cortex.apply`), the History picker (`cortex.memory.sessions`) and
 * reopening a past chat (`cortex.session.turns`).
 */

import * as path from "path";
import * as vscode from "vscode";
import { definitionRange, namedFile, withoutFileLabel } from "./applyTarget";
import { escapeMarkdown } from "./answer";
import { ago, forFolder, parseSessions, parseTurns, SessionSummary } from "./history";
import { AnswerPanel } from "./panel";
import { ApplyArgs, Range, SERVER_COMMANDS } from "./protocol";
import { toRange } from "./titles";

export interface ChatHost {
  request(command: string, arg?: object): Promise<unknown>;
  readonly panel: AnswerPanel;
  /** does the running server offer this command */
  offers(command: string): boolean;
  showError(err: unknown): void;
}

const EXCLUDE = "**/{node_modules,.git,.venv,venv,__pycache__}/**";

/** The folder file a block names: the path under an open folder, else the one file with that name. */
async function findNamed(name: string): Promise<vscode.Uri | undefined> {
  const folders = vscode.workspace.workspaceFolders ?? [];
  for (const folder of folders) {
    const uri = vscode.Uri.joinPath(folder.uri, name);
    try {
      await vscode.workspace.fs.stat(uri);
      return uri;
    } catch {
      // not here
    }
  }
  const found = await vscode.workspace.findFiles(`**/${path.posix.basename(name)}`, EXCLUDE, 5);
  const matching = found.filter((u) => u.path.endsWith(`/${name}`));
  if (matching.length === 1) {
    return matching[0];
  }
  // a new file the answer names: created under the first folder (the review shows it as a create)
  return folders[0] && matching.length === 0 ? vscode.Uri.joinPath(folders[0].uri, name) : undefined;
}

function notOffered(host: ChatHost, command: string, what: string): boolean {
  if (host.offers(command)) {
    return false;
  }
  host.panel.transcript.note(what, `**Not sent:** this cortex-lsp has no \`${command}\` command; update the server.`);
  host.panel.reveal();
  host.panel.update();
  return true;
}

/**
 * *Apply to file*: the file the block names, else the active file. The block replaces the selection
 * (when the target is the editor with a selection), else the Python definition of the same name, else
 * the whole file; the server sends it as a reviewed write (Accept/Reject), so nothing changes before
 * the user accepts.
 */
export async function applyBlock(host: ChatHost, code: string, info: string, activeUri: string | undefined): Promise<void> {
  const named = namedFile(info, code);
  const target = named ? await findNamed(named) : activeUri ? vscode.Uri.parse(activeUri) : undefined;
  if (!target) {
    void vscode.window.showWarningMessage(named
      ? `Cortex: ${named} matches several files or none in the open folders; open the file and apply again.`
      : "Cortex: open the file to apply the code to (the block names no file).");
    return;
  }
  const name = vscode.workspace.asRelativePath(target, false);
  const what = `Apply to ${name}`;
  if (notOffered(host, SERVER_COMMANDS.apply, what)) {
    return;
  }
  const text = withoutFileLabel(code);
  const args: ApplyArgs = { uri: target.toString(), text };
  const editor = vscode.window.visibleTextEditors.find((e) => e.document.uri.toString() === target.toString());
  let range: Range | undefined;
  if (editor && !editor.selection.isEmpty) {
    range = toRange(editor.selection);
  } else {
    const doc = vscode.workspace.textDocuments.find((d) => d.uri.toString() === target.toString());
    const current = doc ? doc.getText() : await readText(target);
    range = current !== undefined && /\.pyi?$/.test(target.path) ? definitionRange(current, text) : undefined;
  }
  if (range) {
    args.range = range;
    if (range.end.character !== 0) {
      // the range ends inside its last line: the block's final line break would add an empty line
      args.text = text.replace(/\r?\n$/, "");
    }
  }
  try {
    const result = await host.request(SERVER_COMMANDS.apply, args);
    host.panel.transcript.note(what, applyOutcome(result, name));
  } catch (err) {
    host.panel.transcript.note(what, `**Error:** ${escapeMarkdown(err instanceof Error ? err.message : String(err))}`);
  }
  host.panel.reveal();
  host.panel.update();
}

async function readText(uri: vscode.Uri): Promise<string | undefined> {
  try {
    return new TextDecoder().decode(await vscode.workspace.fs.readFile(uri));
  } catch {
    return undefined;
  }
}

/** The `cortex.apply` result in a line: written (with a link to the file) or not, and why. */
export function applyOutcome(result: unknown, name: string): string {
  const r = (typeof result === "object" && result !== null ? result : {}) as Record<string, unknown>;
  const edit = Array.isArray(r.edits) && typeof r.edits[0] === "object" ? (r.edits[0] as Record<string, unknown>) : r;
  const link = /[\s()[\]]/.test(name) ? escapeMarkdown(name) : `[${escapeMarkdown(name)}](#cortex-open:${name}:1)`;
  if (edit.applied === true) {
    return `✏️ ${link} — written`;
  }
  const reason = typeof edit.reason === "string" && edit.reason ? edit.reason : typeof r.reason === "string" ? r.reason : "";
  return `✏️ ${escapeMarkdown(name)} — not written${reason ? `: ${escapeMarkdown(reason.replace(/^Not written: /, ""))}` : ""}`;
}

/** History: past chats, this folder's first; the picked one is reopened. */
export async function pickSession(host: ChatHost): Promise<SessionSummary | undefined> {
  if (notOffered(host, SERVER_COMMANDS.sessionTurns, "History")) {
    return undefined;
  }
  const sessions = parseSessions(await host.request(SERVER_COMMANDS.memorySessions));
  const folder = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath ?? "";
  const now = Date.now() / 1000;
  const items = forFolder(sessions, folder).map((s) => ({
    label: s.title || "(untitled chat)",
    description: `${s.turns} question${s.turns === 1 ? "" : "s"} · ${ago(s.lastActivity, now)}`,
    detail: s.root && s.root !== folder ? s.root : undefined,
    session: s,
  }));
  if (!items.length) {
    void vscode.window.showInformationMessage("Cortex: no past chats yet.");
    return undefined;
  }
  const picked = await vscode.window.showQuickPick(items, { title: "Cortex: reopen a chat", matchOnDescription: true });
  return picked?.session;
}

/** Show a past chat's turns in the view; false when the server has none for it (or no such command). */
export async function showSession(host: ChatHost, sessionId: string): Promise<boolean> {
  if (!host.offers(SERVER_COMMANDS.sessionTurns)) {
    return false;
  }
  const turns = parseTurns(await host.request(SERVER_COMMANDS.sessionTurns, { session_id: sessionId }));
  if (!turns.length) {
    return false;
  }
  host.panel.transcript.restore(turns);
  host.panel.scrollToNewest();
  host.panel.update();
  return true;
}

/** The palette's memory commands: Search Memory…, Forget…, Reset Memory. */

import * as vscode from "vscode";
import { AnswerPanel } from "./panel";
import { parseMemoryHits, SERVER_COMMANDS } from "./protocol";
import { renderMemoryHits } from "./reports";

export interface MemoryHost {
  request(command: string, arg?: object): Promise<unknown>;
  readonly panel: AnswerPanel;
  showError(err: unknown): void;
  /** the memory was reset: the current session is gone */
  forgetSession(): void;
}

async function searchHits(host: MemoryHost, title: string): Promise<{ query: string; hits: ReturnType<typeof parseMemoryHits> } | undefined> {
  const query = await vscode.window.showInputBox({ title, prompt: "Search Cortex's memory" });
  if (!query) {
    return undefined;
  }
  const result = await host.request(SERVER_COMMANDS.memorySearch, { query, limit: 20 });
  return { query, hits: parseMemoryHits(result) };
}

export async function searchMemory(host: MemoryHost): Promise<void> {
  try {
    const found = await searchHits(host, "Cortex: Search Memory");
    if (found) {
      host.panel.transcript.note(`Memory: ${found.query}`, renderMemoryHits(found.query, found.hits));
      host.panel.reveal();
      host.panel.update();
    }
  } catch (err) {
    host.showError(err);
  }
}

export async function forget(host: MemoryHost): Promise<void> {
  try {
    const found = await searchHits(host, "Cortex: Forget — find what to forget");
    if (!found) {
      return;
    }
    if (!found.hits.length) {
      void vscode.window.showInformationMessage(`Cortex: no memories match “${found.query}”.`);
      return;
    }
    const picked = await vscode.window.showQuickPick(
      found.hits.map((h) => ({ label: h.text ?? h.content ?? h.id, description: h.type, detail: h.id, hit: h })),
      { canPickMany: true, title: "Forget which memories?" },
    );
    if (!picked || !picked.length) {
      return;
    }
    for (const item of picked) {
      await host.request(SERVER_COMMANDS.memoryForget, { id: item.hit.id });
    }
    void vscode.window.showInformationMessage(`Cortex: forgot ${picked.length} memor${picked.length === 1 ? "y" : "ies"}.`);
  } catch (err) {
    host.showError(err);
  }
}

export async function resetMemory(host: MemoryHost): Promise<void> {
  // The dialog's primary button (Enter) is the first item that is not the close affordance: "Keep
  // Memory" is that one; deleting takes a click on the second button.
  const keep: vscode.MessageItem = { title: "Keep Memory" };
  const remove: vscode.MessageItem = { title: "Delete All" };
  const choice = await vscode.window.showWarningMessage(
    "Delete all of Cortex's memory (sessions, facts, tool sequences)? This cannot be undone.",
    { modal: true, detail: "Enter keeps the memory." },
    keep,
    remove,
  );
  if (choice !== remove) {
    return;
  }
  try {
    await host.request(SERVER_COMMANDS.memoryReset, { confirm: true });
    host.forgetSession();
    void vscode.window.showInformationMessage("Cortex: memory reset.");
  } catch (err) {
    host.showError(err);
  }
}

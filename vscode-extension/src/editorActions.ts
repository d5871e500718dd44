/** What the chat view's buttons and links do in the editor: insert code at the cursor, open a citation. */

import * as vscode from "vscode";

export async function insertAtCursor(text: string): Promise<void> {
  const editor = vscode.window.activeTextEditor ?? vscode.window.visibleTextEditors[0];
  if (!editor) {
    void vscode.window.showWarningMessage("Cortex: open a file to insert the code into.");
    return;
  }
  await editor.edit((b) => b.replace(editor.selection, text));
}

/** A citation (file:line) in an answer: open the file at the line, if it is inside an open folder. */
export async function openCitation(file: string, line: number): Promise<void> {
  for (const folder of vscode.workspace.workspaceFolders ?? []) {
    const uri = vscode.Uri.joinPath(folder.uri, file);
    if (!uri.path.startsWith(`${folder.uri.path}/`)) {
      continue;
    }
    try {
      await vscode.workspace.fs.stat(uri);
    } catch {
      continue;
    }
    const doc = await vscode.workspace.openTextDocument(uri);
    const at = new vscode.Position(Math.min(line - 1, doc.lineCount - 1), 0);
    await vscode.window.showTextDocument(doc, { selection: new vscode.Range(at, at), preview: true });
    return;
  }
  void vscode.window.showWarningMessage(`Cortex: ${file} is not in an open folder.`);
}

export function copyToClipboard(text: string): void {
  void vscode.env.clipboard.writeText(text);
  void vscode.window.setStatusBarMessage("Cortex: copied", 2000);
}

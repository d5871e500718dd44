/**
 * The chat's context chip, kept current: the active file editor's selection, or its whole file when
 * nothing is selected (chatContext.ts has the pure parts). The last file editor counts while the focus
 * is in the chat or on a review diff. A removed chip stays removed until the selection or file changes.
 */

import * as vscode from "vscode";
import { ChatContext, contextKey, contextLabel } from "./chatContext";
import { Chip } from "./panel";
import { toRange } from "./titles";

export class ContextTracker implements vscode.Disposable {
  private current: ChatContext | undefined;
  private removed = "";
  private readonly disposables: vscode.Disposable[] = [];

  constructor(private readonly onChange: (chip: Chip | undefined) => void) {
    this.disposables.push(
      vscode.window.onDidChangeActiveTextEditor((e) => this.follow(e)),
      vscode.window.onDidChangeTextEditorSelection((e) => this.follow(e.textEditor)),
      vscode.workspace.onDidCloseTextDocument((doc) => {
        if (this.current && doc.uri.toString() === this.current.uri) {
          this.current = undefined;
          this.changed();
        }
      }),
    );
    this.follow(vscode.window.activeTextEditor);
  }

  private follow(editor: vscode.TextEditor | undefined): void {
    if (!editor || editor.document.uri.scheme !== "file") {
      return; // the chat or a review diff has the focus: the last file editor still counts
    }
    const uri = editor.document.uri.toString();
    this.current = editor.selection.isEmpty ? { uri } : { uri, range: toRange(editor.selection) };
    this.changed();
  }

  private changed(): void {
    this.onChange(this.chip());
  }

  /** The chip the view shows (undefined: none, or the user removed it). */
  chip(): Chip | undefined {
    const key = contextKey(this.current);
    if (!this.current || key === this.removed) {
      return undefined;
    }
    return { key, label: contextLabel(this.current), title: vscode.Uri.parse(this.current.uri).fsPath };
  }

  /** × on the chip. */
  remove(key: string): void {
    this.removed = key;
    this.changed();
  }

  /** The context for a question sent while the view showed the chip `key` ("" or a stale key: none). */
  contextFor(key: string): ChatContext | undefined {
    return key && key === contextKey(this.current) && key !== this.removed ? this.current : undefined;
  }

  /** `#selection`: the last file editor's selection, chip or not. */
  selection(): ChatContext | undefined {
    return this.current?.range ? this.current : undefined;
  }

  /** The file the user is working in (the target of *Apply to file* when the block names none). */
  get activeUri(): string | undefined {
    return this.current?.uri;
  }

  dispose(): void {
    for (const d of this.disposables) {
      d.dispose();
    }
  }
}

/** The status-bar item: Cortex and the model that answered last; a spinner while a run works (click
 * to stop), else click to open the chat. */

import * as vscode from "vscode";
import { CHAT_VIEW_ID } from "./panel";

export class StatusItem implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Right, 100);
  private model = "";

  constructor(private readonly busy: () => boolean) {
    this.show();
    this.item.show();
  }

  setModel(model: string): void {
    this.model = model;
    this.show();
  }

  show(): void {
    const busy = this.busy();
    const model = this.model ? ` ${this.model}` : "";
    this.item.text = busy ? `$(sync~spin) Cortex${model}` : `$(comment-discussion) Cortex${model}`;
    this.item.tooltip = busy ? "Cortex is working: click to stop" : "Cortex: open the chat";
    this.item.command = busy ? "cortex.ui.stop" : `${CHAT_VIEW_ID}.focus`;
  }

  dispose(): void {
    this.item.dispose();
  }
}

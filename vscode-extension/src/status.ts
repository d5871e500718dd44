/** The status-bar item: Cortex and the model that answered last; a spinner while a run works (click
 * to stop); in error colours while the model server is down (click for Open Settings / Run Doctor),
 * until a run answers again; else click to open the chat. The look is runState.ts's `statusLook`. */

import * as vscode from "vscode";
import { CHAT_VIEW_ID } from "./panel";
import { ModelOutage, statusLook } from "./runState";

export class StatusItem implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem("cortex.status", vscode.StatusBarAlignment.Right, 100);
  private model = "";
  private outage: ModelOutage | undefined;
  private serverProblem: string | undefined;

  constructor(private readonly busy: () => boolean) {
    this.item.name = "Cortex";
    this.show();
    this.item.show();
  }

  setModel(model: string): void {
    this.model = model;
    this.show();
  }

  /** The model server is down (an outage) or answering again (undefined). */
  setOutage(outage: ModelOutage | undefined): void {
    this.outage = outage;
    void vscode.commands.executeCommand("setContext", "cortex.modelDown", outage !== undefined);
    this.show();
  }

  /** No language server could be started (why), or one is running again (undefined). */
  setServerProblem(problem: string | undefined): void {
    this.serverProblem = problem;
    this.show();
  }

  show(): void {
    const look = statusLook({ busy: this.busy(), model: this.model, outage: this.outage, serverProblem: this.serverProblem }, `${CHAT_VIEW_ID}.focus`);
    this.item.text = look.text;
    this.item.tooltip = look.tooltip;
    this.item.command = look.command;
    this.item.backgroundColor = look.error ? new vscode.ThemeColor("statusBarItem.errorBackground") : undefined;
  }

  dispose(): void {
    this.item.dispose();
  }
}

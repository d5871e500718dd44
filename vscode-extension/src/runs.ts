/**
 * Agent runs as the user sees them: each ask/explain gets a section in the chat view, a progress
 * notification with Cancel (our own workDoneToken), the busy status bar, and — when the model server
 * is down — one error notification naming the setting to check. `cortex.run` (code in the sandbox,
 * no agent run) is shown as a note.
 */

import { randomUUID } from "crypto";
import * as vscode from "vscode";
import { ExecuteCommandRequest, LanguageClient, WorkDoneProgress, WorkDoneProgressCancelNotification } from "vscode-languageclient/node";
import { AnswerPanel } from "./panel";
import { AgentResult, SERVER_COMMANDS } from "./protocol";
import { renderRunResult } from "./reports";
import { StatusItem } from "./status";
import { titleFor } from "./titles";

export class RunTracker implements vscode.Disposable {
  private readonly activeTokens = new Set<string>();
  readonly status = new StatusItem(() => this.activeTokens.size > 0);
  /** the session of the last run: follow-ups continue it */
  sessionId: string | undefined;
  private modelDownShown = false;

  constructor(
    private readonly panel: AnswerPanel,
    private readonly runDoctor: () => void,
  ) {}

  /** Run an agent command, showing it in the chat view; the result completes the section. */
  async track(command: string, args: unknown, exec: () => Promise<unknown>): Promise<unknown> {
    const key = this.panel.transcript.begin(titleFor(command, args));
    this.panel.reveal();
    this.panel.update();
    try {
      const result = (await exec()) as AgentResult | undefined;
      if (result && typeof result.session_id === "string") {
        this.sessionId = result.session_id;
      }
      this.panel.transcript.complete(key, result);
      this.noticeModelState(result);
      if (result && typeof result.model === "string" && result.model) {
        this.status.setModel(result.model);
      }
      return result;
    } catch (err) {
      this.panel.transcript.fail(key, err instanceof Error ? err.message : String(err));
      throw err;
    } finally {
      this.panel.update();
    }
  }

  /** `cortex.run` runs code in the sandbox (no agent run, no events): show its result as a note. */
  async trackCodeRun(args: unknown, exec: () => Promise<unknown>): Promise<unknown> {
    try {
      const result = await exec();
      this.panel.transcript.note(titleFor(SERVER_COMMANDS.run, args), renderRunResult(result));
      return result;
    } catch (err) {
      this.panel.transcript.note(titleFor(SERVER_COMMANDS.run, args), `**Error:** ${err instanceof Error ? err.message : String(err)}`);
      throw err;
    } finally {
      this.panel.reveal();
      this.panel.update();
    }
  }

  /**
   * Send an agent command with our own workDoneToken and show its `$/progress` as a notification with
   * a Cancel button (vscode-languageclient's own display is a status-bar spinner that cannot cancel).
   * Cancel sends `window/workDoneProgress/cancel`; the server stops the run and answers with its result.
   */
  sendWithProgress(client: LanguageClient, command: string, args: unknown[]): Promise<unknown> {
    const token = `cortex-vscode-${randomUUID()}`;
    return Promise.resolve(
      vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title: `Cortex: ${titleFor(command, args)}`, cancellable: true },
        async (progress, cancel) => {
          const listening = client.onProgress(WorkDoneProgress.type, token, (value) => {
            if (value.kind !== "end" && value.message) {
              progress.report({ message: value.message });
            }
          });
          const cancelling = cancel.onCancellationRequested(() => {
            void client.sendNotification(WorkDoneProgressCancelNotification.type, { token });
          });
          this.activeTokens.add(token);
          this.status.show();
          try {
            // the run ends with stop_reason "cancelled" and a result, so the request is not cancelled too
            return await client.sendRequest(ExecuteCommandRequest.type, { command, arguments: args, workDoneToken: token });
          } finally {
            this.activeTokens.delete(token);
            this.status.show();
            listening.dispose();
            cancelling.dispose();
          }
        },
      ),
    );
  }

  /** Stop every running ask/explain (window/workDoneProgress/cancel for each). */
  stopAll(client: LanguageClient | undefined): void {
    if (!client) {
      return;
    }
    for (const token of this.activeTokens) {
      void client.sendNotification(WorkDoneProgressCancelNotification.type, { token });
    }
  }

  /**
   * Model down: one error notification (until a run answers again) naming the setting to check, with
   * Open Settings and Run Doctor; the chat view shows the server's own explanation as an error.
   */
  private noticeModelState(result: AgentResult | undefined): void {
    if (!result || typeof result.stop_reason !== "string") {
      return;
    }
    if (result.stop_reason === "answered") {
      this.modelDownShown = false;
      return;
    }
    if (result.stop_reason !== "model_unavailable" || this.modelDownShown) {
      return;
    }
    this.modelDownShown = true;
    const setting = String(result.backend ?? "").includes("openai") ? "cortex.openaiBaseUrl" : "cortex.ollamaBaseUrl";
    // short: where it looked and what to check; the server's full advice is in the chat view
    const url = typeof result.answer === "string" ? /https?:\/\/[^\s)`'"]+/.exec(result.answer)?.[0] : undefined;
    const where = url ? ` at ${url.replace(/[.,;]+$/, "")}` : "";
    void vscode.window
      .showErrorMessage(`Cortex: the model server${where} is not answering. Start it, or check \`${setting}\`.`, "Open Settings", "Run Doctor")
      .then((choice) => {
        if (choice === "Open Settings") {
          void vscode.commands.executeCommand("workbench.action.openSettings", setting);
        } else if (choice === "Run Doctor") {
          this.runDoctor();
        }
      });
  }

  dispose(): void {
    this.status.dispose();
  }
}

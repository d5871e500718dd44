/**
 * Agent runs as the user sees them: each ask/explain gets a section in the chat view, a progress
 * notification with Cancel for a run that takes a moment (our own workDoneToken), the busy status bar,
 * and — when the model server is down — one error notification per outage naming the setting to check,
 * with the status bar in error colours until a run answers again (runState.ts holds the logic). `cortex.run` (code in the sandbox,
 * no agent run) is shown as a note.
 */

import { randomUUID } from "crypto";
import * as vscode from "vscode";
import { ExecuteCommandRequest, LanguageClient, WorkDoneProgress, WorkDoneProgressCancelNotification } from "vscode-languageclient/node";
import { AnswerPanel } from "./panel";
import { AgentResult, SERVER_COMMANDS } from "./protocol";
import { renderRunResult } from "./reports";
import { ModelHealth, openWhenSlow, outageMessage, PROGRESS_NOTICE_DELAY_MS } from "./runState";
import { StatusItem } from "./status";
import { titleFor } from "./titles";

export class RunTracker implements vscode.Disposable {
  private readonly activeTokens = new Set<string>();
  readonly status = new StatusItem(() => this.activeTokens.size > 0);
  /** the session of the last run: follow-ups continue it */
  sessionId: string | undefined;
  /** the transcript key of the newest agent run (Regenerate replaces it) */
  lastRunKey: string | undefined;
  private readonly health = new ModelHealth();

  constructor(
    private readonly panel: AnswerPanel,
    private readonly runDoctor: () => void,
    /** the chat's session changed (remembered across reloads) */
    private readonly onSession: (id: string) => void = () => undefined,
  ) {}

  /** Run an agent command, showing it in the chat view; the result completes the section. */
  async track(command: string, args: unknown, exec: () => Promise<unknown>): Promise<unknown> {
    const key = this.panel.transcript.begin(titleFor(command, args));
    this.lastRunKey = key;
    this.panel.scrollToNewest();
    this.panel.reveal();
    this.panel.update();
    try {
      const result = (await exec()) as AgentResult | undefined;
      if (result && typeof result.session_id === "string") {
        this.sessionId = result.session_id;
        this.onSession(result.session_id);
      }
      this.panel.transcript.complete(key, result);
      this.noticeModelState(result);
      if (result && typeof result.model === "string" && result.model) {
        this.status.setModel(result.model);
      }
      return result;
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      this.panel.transcript.fail(key, message);
      // the request itself failed: a model that went away mid-run is an outage like any other
      this.noticeModelState({ stop_reason: "error", answer: message });
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
   * Send an agent command with our own workDoneToken. While it runs the status bar spins (click to stop);
   * a run still working after PROGRESS_NOTICE_DELAY_MS also shows its `$/progress` as a notification with
   * Cancel (vscode-languageclient's own display is a status-bar spinner that cannot cancel), closed when
   * the answer comes. Opened at once, VS Code would keep it on screen 800 ms past a fast answer.
   * Cancel sends `window/workDoneProgress/cancel`; the server stops the run and answers with its result.
   */
  async sendWithProgress(client: LanguageClient, command: string, args: unknown[]): Promise<unknown> {
    const token = `cortex-vscode-${randomUUID()}`;
    let latest: string | undefined;
    let shown: vscode.Progress<{ message?: string }> | undefined;
    const listening = client.onProgress(WorkDoneProgress.type, token, (value) => {
      if (value.kind !== "end" && value.message) {
        latest = value.message;
        shown?.report({ message: value.message });
      }
    });
    this.activeTokens.add(token);
    this.showBusy();
    // the run ends with stop_reason "cancelled" and a result, so the request is not cancelled too
    const request = Promise.resolve(client.sendRequest(ExecuteCommandRequest.type, { command, arguments: args, workDoneToken: token }));
    const settled = request.then(() => undefined, () => undefined);
    const stopWaiting = openWhenSlow(request, PROGRESS_NOTICE_DELAY_MS, () => {
      void vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title: `Cortex: ${titleFor(command, args)}`, cancellable: true },
        (progress, cancel) => {
          shown = progress;
          if (latest) {
            progress.report({ message: latest });
          }
          const cancelling = cancel.onCancellationRequested(() => {
            void client.sendNotification(WorkDoneProgressCancelNotification.type, { token });
          });
          return settled.finally(() => {
            shown = undefined;
            cancelling.dispose();
          });
        },
      );
    });
    try {
      return await request;
    } finally {
      stopWaiting();
      this.activeTokens.delete(token);
      this.showBusy();
      listening.dispose();
    }
  }

  private showBusy(): void {
    this.status.show();
    this.panel.setState({ busy: this.activeTokens.size > 0 });
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
   * Model down: one error notification per outage naming the setting to check, with Open Settings and
   * Run Doctor; the status bar shows the outage (click: the same actions) until a run answers again.
   * The chat view shows the server's own explanation as an error.
   */
  private noticeModelState(result: AgentResult | undefined): void {
    const change = this.health.observe(result);
    this.status.setOutage(this.health.current);
    if (change === "down") {
      this.showOutage();
    }
  }

  /** The outage's notification with its actions (also the status-bar item's click while down). */
  showOutage(): void {
    const outage = this.health.current;
    if (!outage) {
      return;
    }
    void vscode.window.showErrorMessage(outageMessage(outage), "Open Settings", "Run Doctor").then((choice) => {
      if (choice === "Open Settings") {
        void vscode.commands.executeCommand("workbench.action.openSettings", outage.setting);
      } else if (choice === "Run Doctor") {
        this.runDoctor();
      }
    });
  }

  dispose(): void {
    this.status.dispose();
  }
}

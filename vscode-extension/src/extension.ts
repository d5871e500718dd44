/**
 * The Cortex extension: a thin launcher for the `cortex-lsp` language server plus the UI the protocol
 * has no room for (palette commands, the streaming answer view). Everything the agent does happens in
 * the server; writes arrive as `workspace/applyEdit` and progress as `$/progress`, which
 * vscode-languageclient shows natively (with Cancel).
 */

import * as fs from "fs";
import * as os from "os";
import * as vscode from "vscode";
import { randomUUID } from "crypto";
import {
  ExecuteCommandRequest,
  LanguageClient,
  LanguageClientOptions,
  ServerOptions,
  State,
  WorkDoneProgress,
  WorkDoneProgressCancelNotification,
} from "vscode-languageclient/node";
import { AnswerPanel, CHAT_VIEW_ID, ChatMessage } from "./panel";
import {
  AGENT_COMMANDS,
  AgentResult,
  AskArgs,
  EVENT_NOTIFICATION,
  MAX_MESSAGE_CHARS,
  parseEvent,
  parseMemoryHits,
  Range,
  SERVER_COMMANDS,
} from "./protocol";
import { renderDoctor, renderMemoryHits, renderRunResult } from "./reports";
import { ApplyEditParams, EditReviewer } from "./review";
import { resolveServerCommand } from "./serverPath";
import { declaredSettings, explicitSettings, SettingDeclaration } from "./settings";

function isExecutable(file: string): boolean {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}

function toRange(r: vscode.Range): Range {
  return {
    start: { line: r.start.line, character: r.start.character },
    end: { line: r.end.line, character: r.end.character },
  };
}

function baseName(uri: string): string {
  return decodeURIComponent(uri.split("/").pop() ?? uri);
}

function titleFor(command: string, args: unknown): string {
  const a = (Array.isArray(args) ? args[0] : args) as Record<string, unknown> | undefined;
  const uri = typeof a?.uri === "string" ? baseName(a.uri) : "";
  switch (command) {
    case SERVER_COMMANDS.ask: {
      const message = typeof a?.message === "string" ? a.message : "";
      return `Ask: ${message.length > 80 ? `${message.slice(0, 80)}…` : message}`;
    }
    case SERVER_COMMANDS.explain:
      return a?.diagnostic ? `Explain error in ${uri}` : `Explain ${uri}`;
    case SERVER_COMMANDS.run:
      return `Run ${uri}`;
    default:
      return command;
  }
}

class CortexExtension implements vscode.Disposable {
  private client: LanguageClient | undefined;
  readonly panel = new AnswerPanel((msg) => this.onChat(msg));
  /** model, busy, click to cancel */
  private readonly status = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Right, 100);
  private readonly activeTokens = new Set<string>();
  private lastModel = "";
  private lastMessage: string | undefined;
  private readonly output = vscode.window.createOutputChannel("Cortex");
  private readonly declarations: SettingDeclaration[];
  private sessionId: string | undefined;
  private starting: Promise<LanguageClient | undefined> | undefined;
  private modelDownShown = false;
  /** every write Cortex proposes is shown as a diff to accept or reject (review.ts) */
  readonly reviewer = new EditReviewer(
    (line) => this.output.appendLine(line),
    // machine-scoped: a folder's settings cannot turn the review off
    () => vscode.workspace.getConfiguration("cortex").inspect<boolean>("reviewEdits")?.globalValue ?? true,
  );

  constructor(context: vscode.ExtensionContext) {
    this.declarations = declaredSettings(context.extension.packageJSON);
    this.status.command = "cortex.ui.stop";
    this.showStatus();
    this.status.show();
  }

  private showStatus(): void {
    const busy = this.activeTokens.size > 0;
    const model = this.lastModel ? ` ${this.lastModel}` : "";
    this.status.text = busy ? `$(sync~spin) Cortex${model}` : `$(comment-discussion) Cortex${model}`;
    this.status.tooltip = busy ? "Cortex is working: click to stop" : "Cortex: open the chat";
    this.status.command = busy ? "cortex.ui.stop" : `${CHAT_VIEW_ID}.focus`;
  }

  /** The chat view's input box and buttons. */
  private onChat(msg: ChatMessage): void {
    if (msg.type === "ask") {
      void this.askText(msg.text);
    } else if (msg.type === "stop") {
      this.stopRuns();
    } else if (msg.type === "regenerate") {
      if (this.lastMessage) {
        void this.askText(this.lastMessage);
      }
    } else {
      void this.newSession();
    }
  }

  /** Stop every running ask/explain (window/workDoneProgress/cancel for each). */
  stopRuns(): void {
    const client = this.client;
    if (!client) {
      return;
    }
    for (const token of this.activeTokens) {
      void client.sendNotification(WorkDoneProgressCancelNotification.type, { token });
    }
  }

  dispose(): void {
    this.status.dispose();
    this.reviewer.dispose();
    this.panel.dispose();
    this.output.dispose();
  }

  settings(scope?: vscode.Uri): Record<string, unknown> {
    const config = vscode.workspace.getConfiguration("cortex", scope);
    return explicitSettings(this.declarations, (key) => config.inspect(key), vscode.workspace.isTrusted);
  }

  async ensureClient(): Promise<LanguageClient | undefined> {
    if (this.client && this.client.state === State.Running) {
      return this.client;
    }
    if (!this.starting) {
      this.starting = this.start().finally(() => {
        this.starting = undefined;
      });
    }
    return this.starting;
  }

  private async start(): Promise<LanguageClient | undefined> {
    const configured = vscode.workspace.getConfiguration("cortex").inspect<string>("serverPath")?.globalValue ?? "";
    const found = resolveServerCommand({
      configured,
      folders: (vscode.workspace.workspaceFolders ?? []).map((f) => f.uri.fsPath),
      trusted: vscode.workspace.isTrusted,
      pathEnv: process.env.PATH ?? "",
      platform: process.platform,
      home: os.homedir(),
      isExecutable,
    });
    if (!found.ok) {
      this.output.appendLine(`${found.message}\nTried: ${found.tried.join(", ")}`);
      void vscode.window.showErrorMessage(found.message, "Open Settings").then((choice) => {
        if (choice) {
          void vscode.commands.executeCommand("workbench.action.openSettings", "cortex.serverPath");
        }
      });
      return undefined;
    }
    this.output.appendLine(`Starting ${found.command} (from ${found.source})`);
    const serverOptions: ServerOptions = { command: found.command, args: found.args, options: { env: process.env } };
    const clientOptions: LanguageClientOptions = {
      documentSelector: [{ scheme: "file" }],
      outputChannel: this.output,
      initializationOptions: () => ({ cortex: this.settings() }),
      middleware: {
        executeCommand: async (command, args, next) => {
          if (command === SERVER_COMMANDS.run) {
            return this.trackCodeRun(args, () => Promise.resolve(next(command, args)));
          }
          if (!AGENT_COMMANDS.has(command) || !this.client) {
            return next(command, args);
          }
          const client = this.client;
          return this.trackRun(command, args, () => this.sendWithProgress(client, command, args, titleFor(command, args)));
        },
        workspace: {
          configuration: async (params, token, next) => {
            const answers = await next(params, token);
            if (!Array.isArray(answers)) {
              return answers;
            }
            return params.items.map((item, i) =>
              item.section === "cortex"
                ? this.settings(item.scopeUri ? vscode.Uri.parse(item.scopeUri) : undefined)
                : answers[i],
            );
          },
        },
      },
    };
    const client = new LanguageClient("cortex", "Cortex", serverOptions, clientOptions);
    // replaces the client library's own handler: writes go through the review (diff + Accept/Reject)
    client.onRequest("workspace/applyEdit", (params: ApplyEditParams, token: vscode.CancellationToken) =>
      this.reviewer.handle(params, token),
    );
    client.onNotification(EVENT_NOTIFICATION, (raw: unknown) => {
      const event = parseEvent(raw);
      if (event) {
        this.panel.transcript.apply(event);
        this.panel.reveal();
        this.panel.update();
      }
    });
    try {
      await client.start();
    } catch (err) {
      this.output.appendLine(`cortex-lsp failed to start: ${String(err)}`);
      void vscode.window.showErrorMessage(`Cortex: the language server failed to start (${String(err)}). See the Cortex output.`);
      return undefined;
    }
    this.client = client;
    return client;
  }

  async stop(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    if (client) {
      await client.stop().catch(() => undefined);
    }
  }

  async restart(): Promise<void> {
    await this.stop();
    await this.ensureClient();
  }

  configurationChanged(event: vscode.ConfigurationChangeEvent): void {
    if (!event.affectsConfiguration("cortex")) {
      return;
    }
    if (event.affectsConfiguration("cortex.serverPath")) {
      void this.restart();
      return;
    }
    if (this.client && this.client.state === State.Running) {
      void this.client.sendNotification("workspace/didChangeConfiguration", { settings: { cortex: this.settings() } });
    }
  }

  /** Run an agent command, showing it in the answer view; the result completes the section. */
  private async trackRun(command: string, args: unknown, exec: () => Promise<unknown>): Promise<unknown> {
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
        this.lastModel = result.model;
        this.showStatus();
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
  private async trackCodeRun(args: unknown, exec: () => Promise<unknown>): Promise<unknown> {
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
  private sendWithProgress(client: LanguageClient, command: string, args: unknown[], title: string): Promise<unknown> {
    const token = `cortex-vscode-${randomUUID()}`;
    return Promise.resolve(
      vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title: `Cortex: ${title}`, cancellable: true },
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
          this.showStatus();
          try {
            // the run ends with stop_reason "cancelled" and a result, so the request is not cancelled too
            return await client.sendRequest(ExecuteCommandRequest.type, { command, arguments: args, workDoneToken: token });
          } finally {
            this.activeTokens.delete(token);
            this.showStatus();
            listening.dispose();
            cancelling.dispose();
          }
        },
      ),
    );
  }

  /**
   * Model down: one error notification (until a run answers again) naming the setting to check, with
   * Open Settings and Run Doctor; the answer view shows the server's own explanation as an error.
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
    const why = typeof result.answer === "string" && result.answer ? result.answer : "The model server cannot be reached.";
    void vscode.window
      .showErrorMessage(`Cortex: ${why} Check \`${setting}\` or start the model server.`, "Open Settings", "Run Doctor")
      .then((choice) => {
        if (choice === "Open Settings") {
          void vscode.commands.executeCommand("workbench.action.openSettings", setting);
        } else if (choice === "Run Doctor") {
          void this.doctor();
        }
      });
  }

  async request(command: string, arg?: object): Promise<unknown> {
    const client = await this.ensureClient();
    if (!client) {
      // never drop a request silently: say it was not sent, and where to fix it
      const what = titleFor(command, arg ? [arg] : []);
      this.panel.transcript.note(what, "**Not sent:** no Cortex language server is running. Set `cortex.serverPath` or install `cortex-lsp`, then run *Cortex: Restart Server*.");
      this.panel.reveal();
      this.panel.update();
      void vscode.window
        .showErrorMessage(`Cortex: "${what}" was not sent: no Cortex language server is running.`, "Open Settings", "Show Output")
        .then((choice) => {
          if (choice === "Open Settings") {
            void vscode.commands.executeCommand("workbench.action.openSettings", "cortex.serverPath");
          } else if (choice === "Show Output") {
            this.output.show();
          }
        });
      return undefined;
    }
    const args = arg ? [arg] : [];
    const send = () => client.sendRequest(ExecuteCommandRequest.type, { command, arguments: args });
    if (command === SERVER_COMMANDS.run) {
      return this.trackCodeRun(args, send);
    }
    if (AGENT_COMMANDS.has(command)) {
      return this.trackRun(command, args, () => this.sendWithProgress(client, command, args, titleFor(command, args)));
    }
    return send();
  }

  // -- palette commands ------------------------------------------------------------------------
  async ask(): Promise<void> {
    const message = await vscode.window.showInputBox({
      title: "Cortex: Ask",
      prompt: "Ask Cortex (the selection, if any, is sent as context)",
      validateInput: (v) => (v.length > MAX_MESSAGE_CHARS ? `At most ${MAX_MESSAGE_CHARS} characters.` : undefined),
    });
    if (!message || !message.trim()) {
      return;
    }
    await this.askText(message);
  }

  /** Ask in the current session (the palette, the chat view's box, Regenerate). */
  async askText(message: string): Promise<void> {
    this.lastMessage = message;
    const args: AskArgs = { message };
    if (this.sessionId) {
      args.session_id = this.sessionId;
    }
    const editor = vscode.window.activeTextEditor;
    if (editor && editor.document.uri.scheme === "file" && !editor.selection.isEmpty) {
      args.uri = editor.document.uri.toString();
      args.range = toRange(editor.selection);
    }
    await this.request(SERVER_COMMANDS.ask, args).catch((err) => this.showError(err));
  }

  async explainOrRun(command: string): Promise<void> {
    const editor = vscode.window.activeTextEditor;
    if (!editor || editor.document.uri.scheme !== "file") {
      void vscode.window.showWarningMessage("Cortex: open a file and select some code first.");
      return;
    }
    await this.request(command, { uri: editor.document.uri.toString(), range: toRange(editor.selection) }).catch((err) =>
      this.showError(err),
    );
  }

  async newSession(): Promise<void> {
    const result = (await this.request(SERVER_COMMANDS.sessionNew).catch((err) => this.showError(err))) as
      | { session_id?: string }
      | string
      | undefined;
    const id = typeof result === "string" ? result : result?.session_id;
    if (id) {
      this.sessionId = id;
      void vscode.window.showInformationMessage(`Cortex: new session ${id}`);
    }
  }

  private async searchHits(title: string): Promise<{ query: string; hits: ReturnType<typeof parseMemoryHits> } | undefined> {
    const query = await vscode.window.showInputBox({ title, prompt: "Search Cortex's memory" });
    if (!query) {
      return undefined;
    }
    const result = await this.request(SERVER_COMMANDS.memorySearch, { query, limit: 20 });
    return { query, hits: parseMemoryHits(result) };
  }

  async searchMemory(): Promise<void> {
    try {
      const found = await this.searchHits("Cortex: Search Memory");
      if (found) {
        this.panel.transcript.note(`Memory: ${found.query}`, renderMemoryHits(found.query, found.hits));
        this.panel.reveal();
        this.panel.update();
      }
    } catch (err) {
      this.showError(err);
    }
  }

  async forget(): Promise<void> {
    try {
      const found = await this.searchHits("Cortex: Forget — find what to forget");
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
        await this.request(SERVER_COMMANDS.memoryForget, { id: item.hit.id });
      }
      void vscode.window.showInformationMessage(`Cortex: forgot ${picked.length} memor${picked.length === 1 ? "y" : "ies"}.`);
    } catch (err) {
      this.showError(err);
    }
  }

  async resetMemory(): Promise<void> {
    // the default (first) button keeps the memory; deleting takes a deliberate click
    const keep: vscode.MessageItem = { title: "Keep Memory", isCloseAffordance: true };
    const remove: vscode.MessageItem = { title: "Delete All" };
    const choice = await vscode.window.showWarningMessage(
      "Delete all of Cortex's memory (sessions, facts, tool sequences)? This cannot be undone.",
      { modal: true },
      keep,
      remove,
    );
    if (choice !== remove) {
      return;
    }
    try {
      await this.request(SERVER_COMMANDS.memoryReset, { confirm: true });
      this.sessionId = undefined;
      void vscode.window.showInformationMessage("Cortex: memory reset.");
    } catch (err) {
      this.showError(err);
    }
  }

  async doctor(): Promise<void> {
    try {
      const result = await this.request(SERVER_COMMANDS.doctor);
      if (result !== undefined) {
        this.panel.transcript.note("Doctor", renderDoctor(result));
        this.panel.reveal();
        this.panel.update();
      }
    } catch (err) {
      this.showError(err);
    }
  }

  showAnswer(): void {
    this.panel.reveal();
  }

  private showError(err: unknown): undefined {
    const message = err instanceof Error ? err.message : String(err);
    void vscode.window.showErrorMessage(`Cortex: ${message}`);
    return undefined;
  }
}

let extension: CortexExtension | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const ext = new CortexExtension(context);
  extension = ext;
  const register = (id: string, fn: () => unknown) =>
    context.subscriptions.push(vscode.commands.registerCommand(id, fn));
  register("cortex.ui.ask", () => ext.ask());
  register("cortex.ui.explainSelection", () => ext.explainOrRun(SERVER_COMMANDS.explain));
  register("cortex.ui.runSelection", () => ext.explainOrRun(SERVER_COMMANDS.run));
  register("cortex.ui.newSession", () => ext.newSession());
  register("cortex.ui.searchMemory", () => ext.searchMemory());
  register("cortex.ui.forget", () => ext.forget());
  register("cortex.ui.resetMemory", () => ext.resetMemory());
  register("cortex.ui.doctor", () => ext.doctor());
  register("cortex.ui.showAnswer", () => ext.showAnswer());
  register("cortex.ui.restartServer", () => ext.restart());
  register("cortex.ui.stop", () => ext.stopRuns());
  register("cortex.ui.acceptEdit", () => ext.reviewer.accept());
  register("cortex.ui.rejectEdit", () => ext.reviewer.reject());
  context.subscriptions.push(
    vscode.window.registerWebviewViewProvider(CHAT_VIEW_ID, ext.panel, { webviewOptions: { retainContextWhenHidden: true } }),
    ext,
    vscode.workspace.onDidChangeConfiguration((e) => ext.configurationChanged(e)),
    vscode.workspace.onDidGrantWorkspaceTrust(() => void ext.restart()),
  );
  await ext.ensureClient();
}

export async function deactivate(): Promise<void> {
  await extension?.stop();
  extension = undefined;
}

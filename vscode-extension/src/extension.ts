/**
 * The Cortex extension: a thin launcher for the `cortex-lsp` language server plus the UI the protocol
 * has no room for. Everything the agent does happens in the server. The parts: connection.ts (the
 * server process, settings, applyEdit → review.ts, cortex/event → the chat view), runs.ts (progress,
 * status bar, model-down notice), panel.ts (the chat view), editorActions.ts (Copy / Insert /
 * citations), memoryCommands.ts; this file wires them to the palette commands.
 */

import * as vscode from "vscode";
import { ExecuteCommandRequest } from "vscode-languageclient/node";
import { ChatMessage } from "./chat";
import { Connection } from "./connection";
import { copyToClipboard, insertAtCursor, openCitation } from "./editorActions";
import * as memory from "./memoryCommands";
import { AnswerPanel, CHAT_VIEW_ID } from "./panel";
import { AGENT_COMMANDS, AskArgs, MAX_MESSAGE_CHARS, SERVER_COMMANDS } from "./protocol";
import { renderDoctor } from "./reports";
import { EditReviewer } from "./review";
import { RunTracker } from "./runs";
import { declaredSettings } from "./settings";
import { titleFor, toRange } from "./titles";

class CortexExtension implements vscode.Disposable, memory.MemoryHost {
  readonly panel = new AnswerPanel((msg) => this.onChat(msg));
  private readonly output = vscode.window.createOutputChannel("Cortex");
  private readonly runs = new RunTracker(this.panel, () => void this.doctor());
  private lastMessage: string | undefined;
  /** every write Cortex proposes is shown as a diff to accept or reject (review.ts) */
  readonly reviewer = new EditReviewer(
    (line) => this.output.appendLine(line),
    // machine-scoped: a folder's settings cannot turn the review off
    () => vscode.workspace.getConfiguration("cortex").inspect<boolean>("reviewEdits")?.globalValue ?? true,
  );
  readonly connection: Connection;

  constructor(context: vscode.ExtensionContext) {
    this.connection = new Connection({
      output: this.output,
      declarations: declaredSettings(context.extension.packageJSON),
      reviewer: this.reviewer,
      executeCommand: (client, command, args, next) => {
        if (command === SERVER_COMMANDS.run) {
          return this.runs.trackCodeRun(args, next);
        }
        if (!AGENT_COMMANDS.has(command)) {
          return next();
        }
        return this.runs.track(command, args, () => this.runs.sendWithProgress(client, command, args));
      },
      onEvent: (event) => {
        this.panel.transcript.apply(event);
        this.panel.reveal();
        this.panel.update();
      },
    });
  }

  /** The chat view's input box, buttons and links. */
  private onChat(msg: ChatMessage): void {
    if (msg.type === "ask") {
      void this.askText(msg.text);
    } else if (msg.type === "stop") {
      this.stopRuns();
    } else if (msg.type === "copy") {
      copyToClipboard(msg.text);
    } else if (msg.type === "insert") {
      void insertAtCursor(msg.text);
    } else if (msg.type === "open") {
      void openCitation(msg.file, msg.line);
    } else if (msg.type === "regenerate") {
      if (this.lastMessage) {
        void this.askText(this.lastMessage);
      }
    } else {
      void this.newSession();
    }
  }

  stopRuns(): void {
    this.runs.stopAll(this.connection.current);
  }

  /** The model-down notice again, with Open Settings / Run Doctor (the status bar's click while down). */
  showModelProblem(): void {
    this.runs.showOutage();
  }

  dispose(): void {
    this.runs.dispose();
    this.reviewer.dispose();
    this.panel.dispose();
    this.output.dispose();
  }

  async request(command: string, arg?: object): Promise<unknown> {
    const client = await this.connection.ensureClient();
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
      return this.runs.trackCodeRun(args, send);
    }
    if (AGENT_COMMANDS.has(command)) {
      return this.runs.track(command, args, () => this.runs.sendWithProgress(client, command, args));
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
    if (this.runs.sessionId) {
      args.session_id = this.runs.sessionId;
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
      this.runs.sessionId = id;
      void vscode.window.showInformationMessage(`Cortex: new session ${id}`);
    }
  }

  forgetSession(): void {
    this.runs.sessionId = undefined;
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

  showError(err: unknown): undefined {
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
  register("cortex.ui.searchMemory", () => memory.searchMemory(ext));
  register("cortex.ui.forget", () => memory.forget(ext));
  register("cortex.ui.resetMemory", () => memory.resetMemory(ext));
  register("cortex.ui.doctor", () => ext.doctor());
  register("cortex.ui.showAnswer", () => ext.panel.reveal());
  register("cortex.ui.restartServer", () => ext.connection.restart());
  register("cortex.ui.stop", () => ext.stopRuns());
  register("cortex.ui.modelDown", () => ext.showModelProblem()); // MODEL_DOWN_COMMAND: the status bar's click while down
  register("cortex.ui.acceptEdit", () => ext.reviewer.accept());
  register("cortex.ui.rejectEdit", () => ext.reviewer.reject());
  context.subscriptions.push(
    vscode.window.registerWebviewViewProvider(CHAT_VIEW_ID, ext.panel, { webviewOptions: { retainContextWhenHidden: true } }),
    ext,
    vscode.workspace.onDidChangeConfiguration((e) => ext.connection.configurationChanged(e)),
    vscode.workspace.onDidGrantWorkspaceTrust(() => void ext.connection.restart()),
  );
  await ext.connection.ensureClient();
}

export async function deactivate(): Promise<void> {
  await extension?.connection.stop();
  extension = undefined;
}

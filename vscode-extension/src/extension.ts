/**
 * The Cortex extension: a thin launcher for the `cortex-lsp` language server plus the UI the protocol
 * has no room for. Everything the agent does happens in the server. The parts: connection.ts (the
 * server process, settings, applyEdit → review.ts, cortex/event → the chat view), runs.ts (progress,
 * status bar, model-down notice), panel.ts (the chat view), contextTracker.ts (the chat's context
 * chip), chatActions.ts (Apply to file, History), editorActions.ts (Copy / Insert / citations),
 * memoryCommands.ts; this file wires them to the palette commands and the chat's buttons.
 */

import * as vscode from "vscode";
import { ExecuteCommandRequest } from "vscode-languageclient/node";
import { ChatMessage } from "./chat";
import * as chat from "./chatActions";
import { ChatContext, parseMentions } from "./chatContext";
import { Connection, showServerProblem } from "./connection";
import { ContextTracker } from "./contextTracker";
import { copyToClipboard, insertAtCursor, openCitation } from "./editorActions";
import { forEditor } from "./editorWords";
import * as memory from "./memoryCommands";
import { AnswerPanel, CHAT_VIEW_ID } from "./panel";
import { AGENT_COMMANDS, AskArgs, MAX_MESSAGE_CHARS, SERVER_COMMANDS } from "./protocol";
import { renderDoctor } from "./reports";
import { EditReviewer } from "./review";
import { RunTracker } from "./runs";
import { declaredSettings } from "./settings";
import { titleFor, toRange } from "./titles";

/** The workspace-state key of the chat shown last (reopened after a reload). */
const SESSION_KEY = "cortex.chatSession";

/** A question as sent (Regenerate sends it again with the same context). */
interface SentAsk {
  message: string;
  context: ChatContext | undefined;
}

class CortexExtension implements vscode.Disposable, memory.MemoryHost, chat.ChatHost {
  readonly panel: AnswerPanel;
  private readonly output = vscode.window.createOutputChannel("Cortex");
  private readonly runs: RunTracker;
  private readonly tracker: ContextTracker;
  private lastAsk: SentAsk | undefined;
  /** the transcript run of the last question (Regenerate replaces it) */
  private lastAskKey: string | undefined;
  private serverProblem: string | undefined;
  private readonly words: (text: string) => string;
  /** every write Cortex proposes is shown as a diff to accept or reject (review.ts) */
  readonly reviewer = new EditReviewer(
    (line) => this.output.appendLine(line),
    // machine-scoped: a folder's settings cannot turn the review off
    () => vscode.workspace.getConfiguration("cortex").inspect<boolean>("reviewEdits")?.globalValue ?? true,
  );
  readonly connection: Connection;

  constructor(private readonly context: vscode.ExtensionContext) {
    const declared = new Set(declaredSettings(context.extension.packageJSON).map((d) => d.key));
    this.words = (text) => forEditor(text, declared);
    this.panel = new AnswerPanel((msg) => this.onChat(msg), {
      words: this.words,
      relative: (uri) => {
        const parsed = vscode.Uri.parse(uri);
        return vscode.workspace.getWorkspaceFolder(parsed) ? vscode.workspace.asRelativePath(parsed, false) : undefined;
      },
    });
    this.runs = new RunTracker(this.panel, () => void this.doctor(), (id) => this.rememberSession(id));
    this.tracker = new ContextTracker((chip) => this.panel.setState({ chip }));
    this.panel.setState({ chip: this.tracker.chip() });
    this.reviewer.onDidChangeReview((review) => {
      this.panel.setState({ review });
      if (review) {
        this.panel.reveal();
      }
    });
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
      onServerProblem: (problem) => {
        this.serverProblem = problem;
        this.runs.status.setServerProblem(problem);
        if (!problem) {
          void this.reopenLastChat();
        }
      },
    });
  }

  /** After a reload: the chat shown last, from the server's memory. */
  private async reopenLastChat(): Promise<void> {
    const id = this.context.workspaceState.get<string>(SESSION_KEY);
    if (!id || this.panel.transcript.size > 0) {
      return;
    }
    try {
      if (await chat.showSession(this, id)) {
        this.runs.sessionId = id;
        this.panel.setState({ canRegenerate: false });
      }
    } catch (err) {
      this.output.appendLine(`could not reopen the last chat: ${String(err)}`);
    }
  }

  private rememberSession(id: string | undefined): void {
    void this.context.workspaceState.update(SESSION_KEY, id);
  }

  offers(command: string): boolean {
    return this.connection.offers(command);
  }

  /** The palette's *Open Chat History…* and the view's History button. */
  async history(): Promise<void> {
    try {
      const picked = await chat.pickSession(this);
      if (picked && (await chat.showSession(this, picked.id))) {
        this.runs.sessionId = picked.id;
        this.rememberSession(picked.id);
        this.lastAsk = undefined;
        this.panel.setState({ canRegenerate: false });
        this.panel.reveal();
      }
    } catch (err) {
      this.showError(err);
    }
  }

  /** The missing server's notice again (the status bar's click in that state). */
  showServerProblem(): void {
    showServerProblem(this.serverProblem ?? "no Cortex language server is running.");
  }

  /** The chat view's input box, buttons and links. */
  private onChat(msg: ChatMessage): void {
    if (msg.type === "ask") {
      void this.askText(msg.text, { chip: msg.context });
    } else if (msg.type === "review") {
      this.reviewer.decideFor(msg.key, msg.decision);
    } else if (msg.type === "removeContext") {
      this.tracker.remove(msg.context);
    } else if (msg.type === "apply") {
      void chat.applyBlock(this, msg.text, msg.info, this.tracker.activeUri);
    } else if (msg.type === "history") {
      void this.history();
    } else if (msg.type === "stop") {
      this.stopRuns();
    } else if (msg.type === "copy") {
      copyToClipboard(msg.text);
    } else if (msg.type === "insert") {
      void insertAtCursor(msg.text);
    } else if (msg.type === "open") {
      void openCitation(msg.file, msg.line);
    } else if (msg.type === "regenerate") {
      void this.regenerate();
    } else {
      this.newChat();
    }
  }

  /** Ask the last question again: its answer is replaced (not duplicated), the context is the same. */
  async regenerate(): Promise<void> {
    const last = this.lastAsk;
    if (!last || this.panel.chatState.busy) {
      return;
    }
    if (this.lastAskKey) {
      this.panel.transcript.remove(this.lastAskKey);
    }
    await this.send(last, true);
  }

  /** *New chat*: an empty view; the next question starts a new session (no id is shown). */
  newChat(): void {
    this.stopRuns();
    this.panel.transcript.clear();
    this.runs.sessionId = undefined;
    this.runs.lastRunKey = undefined;
    this.lastAsk = undefined;
    this.lastAskKey = undefined;
    this.rememberSession(undefined);
    this.panel.setState({ canRegenerate: false });
    this.panel.reveal();
    this.panel.update();
  }

  stopRuns(): void {
    this.runs.stopAll(this.connection.current);
  }

  /** The model-down notice again, with Open Settings / Run Doctor (the status bar's click while down). */
  showModelProblem(): void {
    this.runs.showOutage();
  }

  dispose(): void {
    this.tracker.dispose();
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
      this.panel.transcript.note(what, `**Not sent:** no Cortex language server is running. ${this.serverProblem ?? ""} Then run *Cortex: Restart Server*.`);
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

  /**
   * Ask in the current session. The context: `#file:NAME` or `#selection` when typed, else the chip the
   * chat view showed (`chip`: its key), else from the palette the editor's selection.
   */
  async askText(text: string, from: { chip?: string } = {}): Promise<void> {
    const mentions = parseMentions(text);
    let context: ChatContext | undefined;
    if (mentions.file) {
      const found = await vscode.workspace.findFiles(`**/${mentions.file.split("/").pop()}`, "**/{node_modules,.git,.venv}/**", 10);
      const uri = found.find((u) => u.path.endsWith(`/${mentions.file}`));
      if (!uri) {
        void vscode.window.showWarningMessage(`Cortex: #file:${mentions.file} matches no file in the open folders; not sent.`);
        return;
      }
      context = { uri: uri.toString() };
    } else if (mentions.selection) {
      context = this.tracker.selection();
      if (!context) {
        void vscode.window.showWarningMessage("Cortex: #selection, but nothing is selected in the editor; not sent.");
        return;
      }
    } else if (from.chip !== undefined) {
      context = this.tracker.contextFor(from.chip);
    } else {
      const editor = vscode.window.activeTextEditor;
      if (editor && editor.document.uri.scheme === "file" && !editor.selection.isEmpty) {
        context = { uri: editor.document.uri.toString(), range: toRange(editor.selection) };
      }
    }
    await this.send({ message: mentions.message, context });
  }

  /** Send a question; `regenerate`: it replaces the session's last exchange (the server drops it). */
  private async send(ask: SentAsk, regenerate = false): Promise<void> {
    this.lastAsk = ask;
    const args: AskArgs = { message: ask.message };
    if (this.runs.sessionId) {
      args.session_id = this.runs.sessionId;
      if (regenerate) {
        args.regenerate = true;
      }
    }
    if (ask.context) {
      args.uri = ask.context.uri;
      if (ask.context.range) {
        args.range = ask.context.range;
      }
    }
    this.panel.setState({ canRegenerate: true });
    this.lastAskKey = undefined;
    const asked = this.request(SERVER_COMMANDS.ask, args);
    // the run's section is begun before the request goes out (runs.ts track)
    await Promise.resolve(asked).catch(() => undefined);
    this.lastAskKey = this.runs.lastRunKey;
    await asked.catch((err) => this.showError(err));
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

  forgetSession(): void {
    this.newChat();
  }

  async doctor(): Promise<void> {
    try {
      const result = await this.request(SERVER_COMMANDS.doctor);
      if (result !== undefined) {
        this.panel.transcript.note("Doctor", renderDoctor(result, this.words));
        this.panel.reveal();
        this.panel.update();
      }
    } catch (err) {
      this.showError(err);
    }
  }

  showError(err: unknown): undefined {
    const message = err instanceof Error ? err.message : String(err);
    // a notification is plain text: setting names without Markdown backticks
    void vscode.window.showErrorMessage(`Cortex: ${this.words(message).replace(/`/g, "")}`);
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
  register("cortex.ui.newSession", () => ext.newChat());
  register("cortex.ui.history", () => ext.history());
  register("cortex.ui.serverMissing", () => ext.showServerProblem()); // SERVER_SETTINGS_COMMAND: the status bar's click
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

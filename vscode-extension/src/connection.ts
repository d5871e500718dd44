/**
 * The connection to `cortex-lsp`: finds the server (serverPath.ts), starts the language client with
 * the settings the user set, passes every agent command through the caller's hook (progress, the chat
 * view), routes `workspace/applyEdit` to the review and `cortex/event` to the chat view, and forwards
 * settings changes (`workspace/didChangeConfiguration`: the server applies them to the next run;
 * only `cortex.serverPath` restarts it).
 */

import * as fs from "fs";
import * as os from "os";
import * as vscode from "vscode";
import {
  ClientCapabilities,
  FeatureState,
  LanguageClient,
  LanguageClientOptions,
  ServerOptions,
  State,
  StaticFeature,
} from "vscode-languageclient/node";
import { CortexEvent, EVENT_NOTIFICATION, parseEvent } from "./protocol";
import { ApplyEditParams, EditReviewer } from "./review";
import { resolveServerCommand } from "./serverPath";
import { explicitSettings, SettingDeclaration } from "./settings";

function isExecutable(file: string): boolean {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}

/**
 * Declares at initialize whether the user reviews every agent edit: `experimental.cortexReview` when the
 * review is on (the server then proposes every write for review); with it off nobody reviews, so no
 * change-annotation support is declared either and the server only sends writes the user asked for.
 */
class ReviewDeclaration implements StaticFeature {
  fillClientCapabilities(capabilities: ClientCapabilities): void {
    // machine-scoped, as the reviewer reads it: a folder's settings cannot turn the review off
    if (vscode.workspace.getConfiguration("cortex").inspect<boolean>("reviewEdits")?.globalValue ?? true) {
      capabilities.experimental = { ...(capabilities.experimental as object | undefined), cortexReview: true };
    } else if (capabilities.workspace?.workspaceEdit) {
      delete capabilities.workspace.workspaceEdit.changeAnnotationSupport;
    }
  }
  initialize(): void {}
  getState(): FeatureState {
    return { kind: "static" };
  }
  clear(): void {}
}

export interface ConnectionHooks {
  output: vscode.OutputChannel;
  declarations: SettingDeclaration[];
  reviewer: EditReviewer;
  /** every `workspace/executeCommand` the client sends (the lightbulb's too) */
  executeCommand: (client: LanguageClient, command: string, args: unknown[], next: () => Promise<unknown>) => Promise<unknown>;
  onEvent: (event: CortexEvent) => void;
  /** no server could be started (why), or one is running (undefined) */
  onServerProblem: (problem: string | undefined) => void;
}

export class Connection {
  private client: LanguageClient | undefined;
  private starting: Promise<LanguageClient | undefined> | undefined;

  constructor(private readonly hooks: ConnectionHooks) {}

  get current(): LanguageClient | undefined {
    return this.client;
  }

  /** The `cortex` settings the user set explicitly (machine-scoped ones only from the user's settings). */
  settings(scope?: vscode.Uri): Record<string, unknown> {
    const config = vscode.workspace.getConfiguration("cortex", scope);
    return explicitSettings(this.hooks.declarations, (key) => config.inspect(key), vscode.workspace.isTrusted);
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
    const output = this.hooks.output;
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
      output.appendLine(`${found.message}\nTried: ${found.tried.join(", ")}`);
      this.hooks.onServerProblem(found.message);
      showServerProblem(found.message);
      return undefined;
    }
    output.appendLine(`Starting ${found.command} (from ${found.source})`);
    const serverOptions: ServerOptions = { command: found.command, args: found.args, options: { env: process.env } };
    const clientOptions: LanguageClientOptions = {
      documentSelector: [{ scheme: "file" }],
      outputChannel: output,
      initializationOptions: () => ({ cortex: this.settings() }),
      middleware: {
        executeCommand: async (command, args, next) => {
          const client = this.client;
          if (!client) {
            return next(command, args);
          }
          return this.hooks.executeCommand(client, command, args, () => Promise.resolve(next(command, args)));
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
    client.registerFeature(new ReviewDeclaration());
    // replaces the client library's own handler: writes go through the review (diff + Accept/Reject)
    client.onRequest("workspace/applyEdit", (params: ApplyEditParams, token: vscode.CancellationToken) =>
      this.hooks.reviewer.handle(params, token),
    );
    client.onNotification(EVENT_NOTIFICATION, (raw: unknown) => {
      const event = parseEvent(raw);
      if (event) {
        this.hooks.onEvent(event);
      }
    });
    try {
      await client.start();
    } catch (err) {
      output.appendLine(`cortex-lsp failed to start: ${String(err)}`);
      void vscode.window.showErrorMessage(`Cortex: the language server failed to start (${String(err)}). See the Cortex output.`);
      this.hooks.onServerProblem(`The language server failed to start: ${String(err)}.`);
      return undefined;
    }
    this.client = client;
    this.hooks.onServerProblem(undefined);
    return client;
  }

  /** Does the running server offer `command` (a server from before a command was added does not)? */
  offers(command: string): boolean {
    const commands = this.client?.initializeResult?.capabilities.executeCommandProvider?.commands ?? [];
    return commands.includes(command);
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

  /** A settings change: the server re-reads its settings (new model URL, model names: the next run). */
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
}

/** The missing-server notice: the message with the install step, and the settings to fix it. */
export function showServerProblem(message: string): void {
  void vscode.window.showErrorMessage(`Cortex: ${message}`, "Set cortex.serverPath", "Retry").then((choice) => {
    if (choice === "Set cortex.serverPath") {
      void vscode.commands.executeCommand("workbench.action.openSettings", "cortex.serverPath");
    } else if (choice === "Retry") {
      void vscode.commands.executeCommand("cortex.ui.restartServer");
    }
  });
}

/** Titles of runs in the chat view and the progress notification, and ranges in the protocol's shape. */

import * as vscode from "vscode";
import { Range, SERVER_COMMANDS } from "./protocol";

export function toRange(r: vscode.Range): Range {
  return {
    start: { line: r.start.line, character: r.start.character },
    end: { line: r.end.line, character: r.end.character },
  };
}

function baseName(uri: string): string {
  return decodeURIComponent(uri.split("/").pop() ?? uri);
}

export function titleFor(command: string, args: unknown): string {
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
    case SERVER_COMMANDS.fix:
      return `Fix error in ${uri}`;
    case SERVER_COMMANDS.apply:
      return `Apply to ${uri}`;
    default:
      return command;
  }
}

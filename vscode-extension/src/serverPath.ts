/**
 * Finding the `cortex-lsp` executable: the `cortex.serverPath` setting, else the workspace's own
 * virtualenv (trusted folders only: starting a folder's binary runs that folder's code), else PATH.
 * Pure: the file system and environment are passed in.
 */

import * as path from "path";

export interface ServerLookup {
  /** `cortex.serverPath` as set by the user ("" when unset) */
  configured: string;
  /** workspace folder paths */
  folders: readonly string[];
  /** is the workspace trusted (VS Code's workspace trust) */
  trusted: boolean;
  /** the PATH variable */
  pathEnv: string;
  platform: NodeJS.Platform;
  home: string;
  /** does an executable file exist at this path */
  isExecutable: (file: string) => boolean;
}

export type ServerCommand =
  | { ok: true; command: string; args: string[]; source: "setting" | "workspace venv" | "PATH" }
  | { ok: false; message: string; tried: string[] };

const EXE = "cortex-lsp";

export const NOT_FOUND = "cortex-lsp was not found.";
/** The install step that works: the server is not on any package index; it is built from its repository. */
export const INSTALL_STEP =
  "Clone the Cortex LSP repository and run \"make run\" in it (this creates .venv/bin/cortex-lsp), then set cortex.serverPath to that file's full path.";

function expand(value: string, lookup: ServerLookup): string {
  let out = value.trim();
  if (out === "~" || out.startsWith("~/")) {
    out = path.join(lookup.home, out.slice(1));
  }
  const first = lookup.folders[0] ?? "";
  out = out.replace(/\$\{workspaceFolder\}/g, first);
  return out;
}

export function venvCandidates(folder: string, platform: NodeJS.Platform): string[] {
  const names = [".venv", "venv", "env"];
  return platform === "win32"
    ? names.map((n) => path.win32.join(folder, n, "Scripts", `${EXE}.exe`))
    : names.map((n) => path.posix.join(folder, n, "bin", EXE));
}

export function pathCandidates(pathEnv: string, platform: NodeJS.Platform): string[] {
  const sep = platform === "win32" ? ";" : ":";
  const join = platform === "win32" ? path.win32.join : path.posix.join;
  const exe = platform === "win32" ? `${EXE}.exe` : EXE;
  return pathEnv
    .split(sep)
    .filter((dir) => dir.length > 0)
    .map((dir) => join(dir, exe));
}

export function resolveServerCommand(lookup: ServerLookup): ServerCommand {
  const tried: string[] = [];
  if (lookup.configured.trim()) {
    if (lookup.configured.includes("${workspaceFolder}") && !lookup.trusted) {
      return {
        ok: false,
        message: "cortex.serverPath uses ${workspaceFolder}, and this folder is not trusted: trust it or give an absolute path.",
        tried: [],
      };
    }
    const file = expand(lookup.configured, lookup);
    if (lookup.isExecutable(file)) {
      return { ok: true, command: file, args: [], source: "setting" };
    }
    return { ok: false, message: `cortex.serverPath is not an executable file: ${file}`, tried: [file] };
  }
  if (lookup.trusted) {
    for (const folder of lookup.folders) {
      for (const candidate of venvCandidates(folder, lookup.platform)) {
        tried.push(candidate);
        if (lookup.isExecutable(candidate)) {
          return { ok: true, command: candidate, args: [], source: "workspace venv" };
        }
      }
    }
  }
  for (const candidate of pathCandidates(lookup.pathEnv, lookup.platform)) {
    tried.push(candidate);
    if (lookup.isExecutable(candidate)) {
      return { ok: true, command: candidate, args: [], source: "PATH" };
    }
  }
  return {
    ok: false,
    message:
      `${NOT_FOUND} ${INSTALL_STEP}` +
      (lookup.trusted ? "" : " (The folder's own virtualenv is not used until you trust the folder.)"),
    tried,
  };
}

/**
 * Which settings the extension sends to the server. Only values the user set explicitly are sent
 * (the server layers them over its own defaults, the user's cortex.yaml and CORTEX_* variables;
 * sending VS Code's defaults would silently override those). Settings the server treats as security
 * settings are contributed with `machine` scope and read from user settings only: a folder's
 * .vscode/settings.json must not widen what the agent may do.
 */

/** Settings that configure the extension itself, not the server. */
export const EXTENSION_ONLY_SETTINGS: ReadonlySet<string> = new Set(["serverPath", "trace.server", "reviewEdits"]);

export interface InspectedValue {
  defaultValue?: unknown;
  globalValue?: unknown;
  workspaceValue?: unknown;
  workspaceFolderValue?: unknown;
}

export interface SettingDeclaration {
  /** key under `cortex.`, dotted for nested settings (`lats.enabled`) */
  key: string;
  /** `machine`/`application` settings are taken from user settings only */
  scope?: string;
}

/** Setting declarations from the extension's package.json `contributes.configuration`. */
export function declaredSettings(packageJson: unknown): SettingDeclaration[] {
  const contributes = (packageJson as { contributes?: { configuration?: unknown } }).contributes;
  const config = contributes?.configuration;
  const sections = Array.isArray(config) ? config : config ? [config] : [];
  const out: SettingDeclaration[] = [];
  for (const section of sections) {
    const props = (section as { properties?: Record<string, { scope?: string }> }).properties ?? {};
    for (const [name, decl] of Object.entries(props)) {
      if (name.startsWith("cortex.")) {
        out.push({ key: name.slice("cortex.".length), scope: decl.scope });
      }
    }
  }
  return out;
}

function userOnly(scope: string | undefined): boolean {
  return scope === "machine" || scope === "application" || scope === "machine-overridable";
}

/**
 * The explicitly set server settings, nested as the server expects (`{lats: {enabled: true}}`).
 * `inspect` returns VS Code's `WorkspaceConfiguration.inspect(key)` for a `cortex.`-relative key.
 */
export function explicitSettings(
  declarations: readonly SettingDeclaration[],
  inspect: (key: string) => InspectedValue | undefined,
  trusted = true,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const decl of declarations) {
    if (EXTENSION_ONLY_SETTINGS.has(decl.key)) {
      continue;
    }
    const info = inspect(decl.key);
    if (!info) {
      continue;
    }
    const fromWorkspace = userOnly(decl.scope) || !trusted ? undefined : (info.workspaceFolderValue ?? info.workspaceValue);
    const value = fromWorkspace ?? info.globalValue;
    if (value === undefined || value === null || value === "") {
      continue;
    }
    setPath(out, decl.key.split("."), value);
  }
  return out;
}

function setPath(target: Record<string, unknown>, path: string[], value: unknown): void {
  let node = target;
  for (const part of path.slice(0, -1)) {
    const next = node[part];
    if (typeof next !== "object" || next === null || Array.isArray(next)) {
      node[part] = {};
    }
    node = node[part] as Record<string, unknown>;
  }
  node[path[path.length - 1]] = value;
}

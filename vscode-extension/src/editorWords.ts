/**
 * Server texts (errors, doctor fixes) in the editor's words: a server setting name (`ollama_base_url`,
 * or the doctor's "every name" form) becomes the extension's setting (`cortex.ollamaBaseUrl`), and
 * advice to run `cortex-lsp doctor` becomes the palette's *Cortex: Doctor*. Plain TypeScript.
 */

/** `ollama_base_url` → `ollamaBaseUrl` (the extension's key under `cortex.`). */
export function camelKey(name: string): string {
  const [head, ...rest] = name.split("_");
  return head + rest.map((p) => p.charAt(0).toUpperCase() + p.slice(1)).join("");
}

/**
 * `text` with server setting names replaced by the extension's, where the extension declares that
 * setting (`declared`: keys under `cortex.`, e.g. `ollamaBaseUrl`). Other words are left alone.
 */
export function forEditor(text: string, declared: ReadonlySet<string>): string {
  return (
    text
      // the doctor's form: `name` (VS Code: `cortex.x`; Neovim: …; environment: `CORTEX_X`)
      .replace(/`([a-z][a-z0-9_]*)` \(VS Code: `(cortex\.[\w.]+)`[^)]*\)/g, (_m, _name: string, key: string) => `\`${key}\``)
      // the model clients' form: `name` (CORTEX_NAME), or a bare `name`
      .replace(/`([a-z][a-z0-9]*(?:_[a-z0-9]+)+)`(\s*\(CORTEX_[A-Z0-9_]+\))?/g, (m, name: string) =>
        declared.has(camelKey(name)) ? `\`cortex.${camelKey(name)}\`` : m,
      )
      .replace(/(?:[Rr]un )?`cortex-lsp doctor`/g, "*Cortex: Doctor*")
  );
}

/** One line: an error's line breaks become spaces (the chat shows one plain error line). */
export function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, " ").trim();
}

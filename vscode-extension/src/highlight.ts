/**
 * Syntax highlighting for code blocks in the chat view: highlight.js core with a fixed set of
 * languages (bundled by esbuild, nothing loaded at run time), wired into markdown-it's `highlight`
 * option. highlight.js escapes the code and only adds `<span class="hljs-…">`; the colours come from
 * the theme's CSS variables (HIGHLIGHT_CSS), so dark, light and high-contrast themes all work.
 * A fence without a language, or with one not registered here, is shown as escaped plain text (no
 * auto-detection: guessing over every language on each re-render of a streaming answer is not cheap).
 */

import hljs from "highlight.js/lib/core";
import bash from "highlight.js/lib/languages/bash";
import c from "highlight.js/lib/languages/c";
import cpp from "highlight.js/lib/languages/cpp";
import css from "highlight.js/lib/languages/css";
import diff from "highlight.js/lib/languages/diff";
import go from "highlight.js/lib/languages/go";
import ini from "highlight.js/lib/languages/ini";
import java from "highlight.js/lib/languages/java";
import javascript from "highlight.js/lib/languages/javascript";
import json from "highlight.js/lib/languages/json";
import markdown from "highlight.js/lib/languages/markdown";
import python from "highlight.js/lib/languages/python";
import rust from "highlight.js/lib/languages/rust";
import shell from "highlight.js/lib/languages/shell";
import sql from "highlight.js/lib/languages/sql";
import typescript from "highlight.js/lib/languages/typescript";
import xml from "highlight.js/lib/languages/xml";
import yaml from "highlight.js/lib/languages/yaml";

const LANGUAGES = { bash, c, cpp, css, diff, go, ini, java, javascript, json, markdown, python, rust, shell, sql, typescript, xml, yaml };
for (const [name, language] of Object.entries(LANGUAGES)) {
  hljs.registerLanguage(name, language);
}
// names models write that the grammars do not list themselves
hljs.registerAliases(["py3", "python3", "pycon"], { languageName: "python" });
hljs.registerAliases(["node", "mjs", "cjs"], { languageName: "javascript" });
hljs.registerAliases(["jsonc", "json5"], { languageName: "json" });
hljs.registerAliases(["toml", "cfg", "conf", "properties"], { languageName: "ini" });
hljs.registerAliases(["sh", "zsh", "shellscript"], { languageName: "bash" });
hljs.registerAliases(["golang"], { languageName: "go" });

/** Longest code block we highlight; longer ones are plain text (the view re-renders while streaming). */
export const MAX_HIGHLIGHT_CHARS = 20_000;
const CACHE_SIZE = 200;

/** The registered language for a fence's info word, or undefined. */
export function languageFor(lang: string): string | undefined {
  const name = lang.trim().toLowerCase();
  if (!name || name.length > 32) {
    return undefined;
  }
  return hljs.getLanguage(name) ? name : undefined;
}

/**
 * A markdown-it `highlight` function: HTML for the code (escaped, with `hljs-*` spans), or "" so
 * markdown-it escapes it as plain text. Results are cached: a streaming answer re-renders its earlier
 * code blocks many times.
 */
export function createHighlighter(): (code: string, lang: string) => string {
  const cache = new Map<string, string>();
  return (code: string, lang: string): string => {
    const language = languageFor(lang);
    if (!language || code.length > MAX_HIGHLIGHT_CHARS) {
      return "";
    }
    const key = `${language}\u0000${code}`;
    const hit = cache.get(key);
    if (hit !== undefined) {
      return hit;
    }
    let html: string;
    try {
      html = hljs.highlight(code, { language, ignoreIllegals: true }).value;
    } catch {
      html = "";
    }
    cache.set(key, html);
    if (cache.size > CACHE_SIZE) {
      const oldest = cache.keys().next().value;
      if (oldest !== undefined) {
        cache.delete(oldest);
      }
    }
    return html;
  };
}

/**
 * Token colours from the theme: VS Code gives webviews its colours as CSS variables (not the editor's
 * token colours), so each class maps to a theme colour with the same role and the same hue in the
 * default themes (debug-view values, symbol icons, git decorations); `inherit` if a theme lacks it.
 */
export const HIGHLIGHT_CSS = `
  .hljs-keyword, .hljs-literal, .hljs-selector-tag, .hljs-doctag, .hljs-name { color: var(--vscode-debugTokenExpression-boolean, inherit); }
  .hljs-built_in, .hljs-meta, .hljs-meta .hljs-keyword, .hljs-selector-pseudo { color: var(--vscode-debugTokenExpression-name, inherit); }
  .hljs-string, .hljs-regexp, .hljs-char.escape_, .hljs-meta .hljs-string, .hljs-selector-attr { color: var(--vscode-debugTokenExpression-string, inherit); }
  .hljs-number, .hljs-symbol, .hljs-bullet, .hljs-link { color: var(--vscode-debugTokenExpression-number, inherit); }
  .hljs-title.function_, .hljs-title, .hljs-section { color: var(--vscode-symbolIcon-functionForeground, inherit); }
  .hljs-title.class_, .hljs-type, .hljs-class .hljs-title, .hljs-selector-class, .hljs-selector-id { color: var(--vscode-symbolIcon-classForeground, inherit); }
  .hljs-variable, .hljs-template-variable, .hljs-attr, .hljs-attribute, .hljs-params, .hljs-property, .hljs-variable.language_ { color: var(--vscode-symbolIcon-variableForeground, inherit); }
  .hljs-comment, .hljs-quote { color: var(--vscode-descriptionForeground, inherit); font-style: italic; }
  .hljs-addition { color: var(--vscode-gitDecoration-addedResourceForeground, inherit); }
  .hljs-deletion { color: var(--vscode-gitDecoration-deletedResourceForeground, inherit); }
  .hljs-emphasis { font-style: italic; }
  .hljs-strong, .hljs-section { font-weight: bold; }
`;

/**
 * Markdown → HTML for the answer view. Raw HTML in answers is escaped, and an image is rendered as a
 * link to its address (never an <img>): nothing in an answer can make the editor fetch anything.
 * Code blocks are syntax-highlighted (highlight.ts) and get Copy / Insert / Apply to file buttons.
 */

import MarkdownIt from "markdown-it";
import { createHighlighter } from "./highlight";

const SAFE_LINK = /^(https?:|file:|vscode:|#)/i;

export function escapeHtml(text: string): string {
  return text
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;")
    .replace(/'/g, "&#39;");
}

export function createRenderer(): MarkdownIt {
  // code blocks are highlighted (highlight.ts: escaped code plus hljs-* spans, or "" for plain text)
  const md = new MarkdownIt({ html: false, linkify: false, typographer: false, highlight: createHighlighter() });
  md.renderer.rules.image = (tokens, idx, options, env, self) => {
    const token = tokens[idx];
    const src = token.attrGet("src") ?? "";
    const alt = self.renderInlineAsText(token.children ?? [], options, env) || "image";
    const label = `🖼 ${escapeHtml(alt)}`;
    if (!SAFE_LINK.test(src)) {
      return `<span class="image-link" title="image not shown">${label}</span>`;
    }
    return `<a class="image-link" href="${escapeHtml(src)}" title="image not loaded: ${escapeHtml(src)}">${label}</a>`;
  };
  // code blocks get Copy and Insert (at the cursor) buttons; the view's script handles the clicks
  const defaultFence = md.renderer.rules.fence;
  md.renderer.rules.fence = (tokens, idx, options, env, self) => {
    const inner = defaultFence ? defaultFence(tokens, idx, options, env, self) : self.renderToken(tokens, idx, options);
    // the fence's info string (`python calc.py`) names the file *Apply to file* targets
    const info = escapeHtml(tokens[idx].info.trim().slice(0, 200));
    return `<div class="code-block" data-info="${info}"><div class="code-actions"><button type="button" class="code-act" data-act="copy">Copy</button><button type="button" class="code-act" data-act="insert">Insert</button><button type="button" class="code-act" data-act="apply" title="Show this code as a change of the file it names (or of the active file) to Accept or Reject">Apply to file</button></div>${inner}</div>`;
  };
  const defaultValidate = md.validateLink.bind(md);
  md.validateLink = (url: string) => defaultValidate(url) && !/^data:/i.test(url.trim());
  return md;
}

export function renderMarkdown(md: MarkdownIt, source: string): string {
  return md.render(source);
}

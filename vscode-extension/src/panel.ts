/**
 * The answer view: a webview panel that shows the transcript as rendered Markdown and updates while
 * a run streams. Strict CSP: no network, no images, only our own nonce'd script and style.
 */

import * as vscode from "vscode";
import type MarkdownIt from "markdown-it";
import { AnswerTranscript } from "./answer";
import { createRenderer, renderMarkdown } from "./markdown";

const UPDATE_INTERVAL_MS = 80;

function nonce(): string {
  const chars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  let out = "";
  for (let i = 0; i < 32; i++) {
    out += chars.charAt(Math.floor(Math.random() * chars.length));
  }
  return out;
}

export function panelHtml(n: string, body: string): string {
  const csp = [
    "default-src 'none'",
    `style-src 'nonce-${n}'`,
    `script-src 'nonce-${n}'`,
    "img-src 'none'",
    "media-src 'none'",
    "font-src 'none'",
    "connect-src 'none'",
    "frame-src 'none'",
    "form-action 'none'",
  ].join("; ");
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<style nonce="${n}">
  body { font-family: var(--vscode-font-family); font-size: var(--vscode-font-size); color: var(--vscode-foreground); padding: 0 12px; }
  pre { background: var(--vscode-textCodeBlock-background); padding: 6px; overflow-x: auto; }
  code { font-family: var(--vscode-editor-font-family); }
  a.image-link, span.image-link { opacity: 0.85; }
  hr { border: none; border-top: 1px solid var(--vscode-panel-border); }
</style>
</head>
<body>
<div id="root">${body}</div>
<script nonce="${n}">
  const root = document.getElementById("root");
  window.addEventListener("message", (event) => {
    const msg = event.data;
    if (msg && msg.type === "render" && typeof msg.html === "string") {
      const atBottom = window.innerHeight + window.scrollY >= document.body.scrollHeight - 40;
      root.innerHTML = msg.html;
      if (atBottom) { window.scrollTo(0, document.body.scrollHeight); }
    }
  });
</script>
</body>
</html>`;
}

export class AnswerPanel implements vscode.Disposable {
  readonly transcript = new AnswerTranscript();
  private panel: vscode.WebviewPanel | undefined;
  private readonly md: MarkdownIt = createRenderer();
  private timer: ReturnType<typeof setTimeout> | undefined;

  /** Show the panel beside the editor without taking focus. */
  reveal(): void {
    if (this.panel) {
      this.panel.reveal(vscode.ViewColumn.Beside, true);
      this.flush();
      return;
    }
    this.panel = vscode.window.createWebviewPanel(
      "cortex.answer",
      "Cortex",
      { viewColumn: vscode.ViewColumn.Beside, preserveFocus: true },
      { enableScripts: true, enableCommandUris: false, localResourceRoots: [], retainContextWhenHidden: true },
    );
    this.panel.webview.html = panelHtml(nonce(), this.html());
    this.panel.onDidDispose(() => {
      this.panel = undefined;
    });
  }

  /** Re-render soon (coalesces bursts of token events). */
  update(): void {
    if (this.timer !== undefined) {
      return;
    }
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.flush();
    }, UPDATE_INTERVAL_MS);
  }

  private html(): string {
    return renderMarkdown(this.md, this.transcript.render());
  }

  private flush(): void {
    if (this.panel) {
      void this.panel.webview.postMessage({ type: "render", html: this.html() });
    }
  }

  dispose(): void {
    if (this.timer !== undefined) {
      clearTimeout(this.timer);
    }
    this.panel?.dispose();
  }
}

/**
 * The chat view: a webview view in Cortex's own activity-bar container (it no longer splits the
 * editor) that shows the transcript of runs as rendered Markdown, updates while a run streams, and
 * has an input box for follow-ups in the same session with Stop (enabled only while a run works),
 * Regenerate, New Chat and History. Above the box: the context chip (the selection or file sent with
 * the question; × removes it) and, while a write waits, the review card with Accept / Reject. Code is
 * syntax-highlighted in theme colours, with Copy / Insert / Apply to file; tool calls are collapsible
 * lines. Strict CSP: no network, no images, only our own nonce'd script and style.
 */

import * as vscode from "vscode";
import type MarkdownIt from "markdown-it";
import { AnswerTranscript, TranscriptOptions } from "./answer";
import { ChatMessage, parseChatMessage } from "./chat";
import { HIGHLIGHT_CSS } from "./highlight";
import { createRenderer } from "./markdown";
import { renderPieces, ReviewCard, reviewCardHtml } from "./view";

/** The context chip: what the next question sends with it. */
export interface Chip {
  key: string;
  label: string;
  /** the full path, as the chip's tooltip */
  title: string;
}

/** The view's controls, besides the transcript. */
export interface ChatState {
  busy: boolean;
  chip: Chip | undefined;
  review: ReviewCard | undefined;
  canRegenerate: boolean;
}

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
  pre { background: var(--vscode-textCodeBlock-background); padding: 6px 8px; overflow-x: auto; border-radius: 4px; border: 1px solid var(--vscode-widget-border, transparent); }
  code { font-family: var(--vscode-editor-font-family); }
  pre code { background: transparent; padding: 0; color: var(--vscode-editor-foreground, inherit); }
  a.image-link, span.image-link { opacity: 0.85; }
  hr { border: none; border-top: 1px solid var(--vscode-panel-border); }
  #root { padding-bottom: 150px; }
  #chips { display: flex; gap: 4px; flex-wrap: wrap; margin-bottom: 4px; }
  .chip { display: inline-flex; align-items: center; gap: 4px; padding: 0 2px 0 6px; border-radius: 10px; border: 1px solid var(--vscode-widget-border, var(--vscode-panel-border)); background: var(--vscode-badge-background); color: var(--vscode-badge-foreground); font-size: 0.9em; }
  .chip button { background: transparent; color: inherit; padding: 0 4px; }
  .review-card { border: 1px solid var(--vscode-focusBorder); border-radius: 4px; padding: 6px 8px; margin-bottom: 6px; background: var(--vscode-editorWidget-background, transparent); }
  .review-card.unasked { border-color: var(--vscode-errorForeground); border-width: 2px; }
  .review-note { margin-top: 2px; }
  .review-unasked { color: var(--vscode-errorForeground); font-weight: 600; }
  button:disabled { opacity: 0.5; cursor: default; }
  p.empty { color: var(--vscode-descriptionForeground); }
  form { position: fixed; left: 0; right: 0; bottom: 0; padding: 6px 12px; background: var(--vscode-sideBar-background, var(--vscode-editor-background)); border-top: 1px solid var(--vscode-panel-border); }
  textarea { width: 100%; box-sizing: border-box; resize: vertical; min-height: 2.6em; font-family: inherit; font-size: inherit; color: var(--vscode-input-foreground); background: var(--vscode-input-background); border: 1px solid var(--vscode-input-border, transparent); }
  .buttons { display: flex; flex-wrap: wrap; gap: 4px 6px; margin-top: 4px; }
  .buttons button { white-space: nowrap; }
  button { color: var(--vscode-button-foreground); background: var(--vscode-button-background); border: none; padding: 3px 10px; cursor: pointer; }
  button.secondary { color: var(--vscode-button-secondaryForeground); background: var(--vscode-button-secondaryBackground); }
  strong.error, .error { color: var(--vscode-errorForeground); }
  .code-block { position: relative; }
  .code-block pre { padding-top: 26px; }
  .code-actions { position: absolute; top: 2px; right: 2px; display: flex; gap: 4px; }
  .code-actions button { padding: 1px 6px; font-size: 0.85em; }
  details.tool { margin: 2px 0; }
  details.tool > summary { cursor: pointer; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; padding: 1px 2px; border-radius: 3px; }
  details.tool > summary:hover { background: var(--vscode-list-hoverBackground); }
  details.tool > summary:focus-visible { outline: 1px solid var(--vscode-focusBorder); }
  .tool-name { font-weight: 600; }
  .tool-args { opacity: 0.9; }
  .tool-said { color: var(--vscode-descriptionForeground); }
  .tool-ok .tool-mark { color: var(--vscode-testing-iconPassed, inherit); }
  .tool-failed .tool-mark { color: var(--vscode-errorForeground); }
  .tool-body { margin: 2px 0 6px 18px; }
  .tool-body pre { margin: 2px 0 6px; max-height: 240px; overflow: auto; white-space: pre-wrap; word-break: break-word; }
  .tool-label { font-size: 0.85em; color: var(--vscode-descriptionForeground); }
${HIGHLIGHT_CSS}
</style>
</head>
<body>
<div id="root">${body}</div>
<form id="ask">
  <div id="review"></div>
  <div id="chips"></div>
  <textarea id="message" rows="2" placeholder="Ask Cortex (Enter sends, Shift+Enter: new line; #file:NAME, #selection)" aria-label="Ask Cortex"></textarea>
  <div class="buttons">
    <button type="submit" id="send">Ask</button>
    <button type="button" class="secondary" id="stop" disabled>Stop</button>
    <button type="button" class="secondary" id="again" disabled>Regenerate</button>
    <button type="button" class="secondary" id="new">New Chat</button>
    <button type="button" class="secondary" id="history">History</button>
  </div>
</form>
<script nonce="${n}">
  const vscode = typeof acquireVsCodeApi === "function" ? acquireVsCodeApi() : undefined;
  const root = document.getElementById("root");
  const form = document.getElementById("ask");
  const box = document.getElementById("message");
  const chips = document.getElementById("chips");
  const reviewBox = document.getElementById("review");
  let chipKey = "";
  const post = (msg) => { if (vscode) { vscode.postMessage(msg); } };
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    const text = box.value.trim();
    if (text) { post({ type: "ask", text, context: chipKey }); box.value = ""; }
  });
  reviewBox.addEventListener("click", (e) => {
    const act = e.target instanceof Element ? e.target.closest("button.review-act") : null;
    const card = act ? act.closest(".review-card") : null;
    if (act && card) {
      post({ type: "review", key: Number(card.getAttribute("data-review-key")), decision: act.getAttribute("data-decision") });
    }
  });
  const showChip = (chip) => {
    chipKey = chip ? chip.key : "";
    chips.textContent = "";
    if (!chip) { return; }
    const span = document.createElement("span");
    span.className = "chip";
    span.title = chip.title;
    span.textContent = chip.label;
    const x = document.createElement("button");
    x.type = "button";
    x.textContent = "×";
    x.title = "Do not send this with the question";
    x.setAttribute("aria-label", "Remove " + chip.label);
    x.addEventListener("click", () => post({ type: "removeContext", context: chip.key }));
    span.appendChild(x);
    chips.appendChild(span);
  };
  const showState = (state) => {
    document.getElementById("stop").disabled = !state.busy;
    document.getElementById("again").disabled = state.busy || !state.canRegenerate;
    showChip(state.chip);
    if (reviewBox.innerHTML !== state.reviewHtml) { reviewBox.innerHTML = state.reviewHtml; }
  };
  box.addEventListener("keydown", (e) => {
    if (e.key === "Enter" && !e.shiftKey) { e.preventDefault(); form.requestSubmit(); }
  });
  root.addEventListener("click", (e) => {
    const target = e.target;
    if (!(target instanceof Element)) { return; }
    const act = target.closest("button.code-act");
    if (act) {
      const block = act.closest(".code-block");
      const code = block?.querySelector("pre code, pre");
      post({ type: act.getAttribute("data-act"), text: code ? code.textContent : "", info: block?.getAttribute("data-info") || "" });
      return;
    }
    const link = target.closest("a[href^='#cortex-open:']");
    if (link) {
      e.preventDefault();
      const m = /^#cortex-open:(.+):(\\d+)$/.exec(link.getAttribute("href") || "");
      if (m) { post({ type: "open", file: m[1], line: Number(m[2]) }); }
    }
  });
  document.getElementById("stop").addEventListener("click", () => post({ type: "stop" }));
  document.getElementById("again").addEventListener("click", () => post({ type: "regenerate" }));
  document.getElementById("new").addEventListener("click", () => post({ type: "newSession" }));
  document.getElementById("history").addEventListener("click", () => post({ type: "history" }));
  window.addEventListener("message", (event) => {
    const msg = event.data;
    if (msg && msg.type === "render" && typeof msg.html === "string") {
      const atBottom = window.innerHeight + window.scrollY >= document.body.scrollHeight - 40;
      // tool lines the user opened stay open across re-renders
      const open = new Set(Array.from(root.querySelectorAll("details.tool[open]"), (d) => d.getAttribute("data-tool")));
      root.innerHTML = msg.html;
      for (const d of root.querySelectorAll("details.tool")) {
        if (open.has(d.getAttribute("data-tool"))) { d.open = true; }
      }
      if (msg.state) { showState(msg.state); }
      // what the user just sent is scrolled into view; else a reader at the bottom stays there
      const titles = root.querySelectorAll("h3");
      if (msg.scroll && titles.length) {
        titles[titles.length - 1].scrollIntoView({ block: "start" });
      } else if (atBottom) {
        window.scrollTo(0, document.body.scrollHeight);
      }
    }
  });
</script>
</body>
</html>`;
}

export const CHAT_VIEW_ID = "cortex.chat";

/** What an empty chat says (our own text). */
const EMPTY_CHAT = `<p class="empty">Ask about the code: the selection, or the file when nothing is selected, goes with the question (the chip below; × leaves it out). <code>#file:NAME</code> sends another file, <code>#selection</code> the selection. Code in answers has <em>Apply to file</em>; every write waits for your Accept. <em>History</em> reopens a past chat.</p>`;

export class AnswerPanel implements vscode.WebviewViewProvider, vscode.Disposable {
  readonly transcript: AnswerTranscript;
  private view: vscode.WebviewView | undefined;
  private readonly md: MarkdownIt = createRenderer();
  private timer: ReturnType<typeof setTimeout> | undefined;
  private revealing = false;
  private state: ChatState = { busy: false, chip: undefined, review: undefined, canRegenerate: false };
  private scrollPending = false;
  private readonly resolved = new vscode.EventEmitter<void>();
  /** the view was created (first shown, or again after a reload) */
  readonly onDidResolve = this.resolved.event;

  constructor(
    private readonly onMessage: (msg: ChatMessage) => void,
    options: TranscriptOptions = {},
  ) {
    this.transcript = new AnswerTranscript(options);
  }

  /** Update the controls (Stop, Regenerate, the chip, the review card). */
  setState(change: Partial<ChatState>): void {
    this.state = { ...this.state, ...change };
    this.update();
  }

  get chatState(): ChatState {
    return this.state;
  }

  /** The next render scrolls to the newest run (what the user just sent). */
  scrollToNewest(): void {
    this.scrollPending = true;
  }

  resolveWebviewView(view: vscode.WebviewView): void {
    this.view = view;
    view.webview.options = { enableScripts: true, enableCommandUris: false, localResourceRoots: [] };
    view.webview.html = panelHtml(nonce(), this.html());
    view.webview.onDidReceiveMessage((raw) => {
      const msg = parseChatMessage(raw);
      if (msg) {
        this.onMessage(msg);
      }
    });
    view.onDidDispose(() => {
      this.view = undefined;
    });
    this.flush();
    this.resolved.fire();
  }

  /** Show the chat view without taking focus from the editor. */
  reveal(): void {
    if (this.view) {
      this.view.show(true);
      this.flush();
      return;
    }
    if (this.revealing) {
      return;
    }
    this.revealing = true;
    void Promise.resolve(vscode.commands.executeCommand(`${CHAT_VIEW_ID}.focus`))
      .then(() => vscode.commands.executeCommand("workbench.action.focusActiveEditorGroup"))
      .then(
        () => {
          this.revealing = false;
          this.flush();
        },
        () => {
          this.revealing = false;
        },
      );
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
    if (this.transcript.size === 0) {
      return EMPTY_CHAT;
    }
    return renderPieces(this.md, this.transcript.pieces());
  }

  private flush(): void {
    if (this.view) {
      const { busy, chip, review, canRegenerate } = this.state;
      const state = { busy, chip: chip ?? null, canRegenerate, reviewHtml: reviewCardHtml(review) };
      void this.view.webview.postMessage({ type: "render", html: this.html(), state, scroll: this.scrollPending });
      this.scrollPending = false;
    }
  }

  dispose(): void {
    this.resolved.dispose();
    if (this.timer !== undefined) {
      clearTimeout(this.timer);
    }
  }
}

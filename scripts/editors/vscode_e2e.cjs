#!/usr/bin/env node
// VS Code, for real: code-server (VS Code in the browser) with the built Cortex .vsix, driven by
// Debian's Chromium through playwright-core. Opens calc.py, selects a function, picks
// "Cortex: Explain this" from the lightbulb/quick-fix menu, runs "Cortex: Ask…" from the command
// palette with a request that makes the agent write notes.txt, reviews the diff and accepts it after
// a pause longer than the tool time-out (the file is on disk, saved), then rejects a second write
// (nothing on disk, and the answer says so). The chat view: a follow-up typed into its box, an answer
// with a highlighted python block, a tool call as a collapsible line, a file:line citation that opens.
//
// Input: a JSON file named by $CORTEX_VSCODE_SCENARIO:
//   { codeServer, playwrightCore, chromium, vsix, serverPath, workspace, work, port, out,
//     explainAnswer, askMessage, writeFile, noteText, writeAnswer, reviewWaitMs, rejectMessage,
//     rejectFile, timeoutMs }
// The environment is passed to code-server, so CORTEX_* variables reach cortex-lsp.
// Output: JSON at scenario.out ({ failures: [], steps: {name: {ok, ms}}, ... }); exit 0 when all passed.
"use strict";

const fs = require("fs");
const path = require("path");
const http = require("http");
const { spawn, spawnSync } = require("child_process");

const scenario = JSON.parse(fs.readFileSync(process.env.CORTEX_VSCODE_SCENARIO, "utf8"));
const out = { failures: [], steps: {}, screenshots: [] };
let codeServer;
let browser;
let codeServerLog = "";

function writeOut() {
  fs.writeFileSync(scenario.out, JSON.stringify(out, null, 2));
}

async function finish(code) {
  try {
    if (browser) {
      await browser.close();
    }
  } catch (e) {
    out.failures.push(`closing the browser: ${e}`);
  }
  if (codeServer && codeServer.exitCode === null) {
    try {
      process.kill(-codeServer.pid, "SIGTERM");
    } catch {
      codeServer.kill("SIGTERM");
    }
  }
  out.code_server_log = codeServerLog.slice(-4000);
  writeOut();
  process.exit(code);
}

const hardTimeout = setTimeout(() => {
  out.failures.push(`hard timeout after ${scenario.timeoutMs} ms`);
  void finish(3);
}, scenario.timeoutMs);
hardTimeout.unref();

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function step(name, fn) {
  const t0 = Date.now();
  try {
    await fn();
    out.steps[name] = { ok: true, ms: Date.now() - t0 };
    return true;
  } catch (err) {
    out.steps[name] = { ok: false, ms: Date.now() - t0 };
    out.failures.push(`${name}: ${err && err.stack ? err.stack.split("\n").slice(0, 3).join(" | ") : err}`);
    return false;
  }
}

async function until(what, fn, timeoutMs, intervalMs = 250) {
  const deadline = Date.now() + timeoutMs;
  let last;
  while (Date.now() < deadline) {
    try {
      const value = await fn();
      if (value) {
        return value;
      }
    } catch (err) {
      last = err;
    }
    await sleep(intervalMs);
  }
  throw new Error(`timed out waiting for ${what}${last ? ` (last error: ${last.message})` : ""}`);
}

function healthy(port) {
  return new Promise((resolve) => {
    const req = http.get({ host: "127.0.0.1", port, path: "/healthz", timeout: 2000 }, (res) => {
      res.resume();
      resolve(res.statusCode === 200);
    });
    req.on("error", () => resolve(false));
    req.on("timeout", () => {
      req.destroy();
      resolve(false);
    });
  });
}

async function screenshot(page, name) {
  try {
    const file = path.join(scenario.work, `${name}.png`);
    await page.screenshot({ path: file });
    out.screenshots.push(file);
  } catch {
    // best effort
  }
}

// A screenshot of the status bar alone (the Cortex item's states).
async function statusBarShot(page, name) {
  try {
    const file = path.join(scenario.work, `${name}.png`);
    await page.locator(".part.statusbar").screenshot({ path: file });
    out.screenshots.push(file);
  } catch {
    // best effort
  }
}

// The Cortex status-bar item: its text and background colour.
async function cortexStatus(page) {
  const item = page.locator(".statusbar-item", { hasText: "Cortex" }).first();
  return {
    text: await item.innerText(),
    background: await item.evaluate((el) => getComputedStyle(el).backgroundColor),
    bar_background: await page.locator(".part.statusbar").evaluate((el) => getComputedStyle(el).backgroundColor),
  };
}

// Cortex progress notifications still on screen ("Cortex: Ask: …", "Cortex: Explain …") a moment after
// the answer showed: none may remain (VS Code keeps a progress notification ≥ 800 ms after it opened).
async function progressToastsAfter(page, label) {
  await sleep(3000);
  const texts = await page.locator(".notification-toast").allInnerTexts();
  const left = texts.filter((t) => /Cortex: (Ask|Explain)/.test(t));
  out.progress_toasts_after = out.progress_toasts_after || {};
  out.progress_toasts_after[label] = left;
  if (left.length) {
    await screenshot(page, `progress-left-${label}`);
  }
}

// Text of every frame (the answer view is a webview: nested iframes).
async function framesText(page) {
  const texts = [];
  for (const frame of page.frames()) {
    try {
      texts.push(await frame.evaluate(() => (document.body ? document.body.innerText : "")));
    } catch {
      // detached or not ready
    }
  }
  return texts.join("\n");
}

async function runPalette(page, label) {
  await page.keyboard.press("F1");
  const input = page.locator(".quick-input-widget input");
  await input.waitFor({ state: "visible", timeout: 15000 });
  await input.fill(`>${label}`);
  const item = page.locator(".quick-input-list .monaco-list-row", { hasText: label }).first();
  await item.waitFor({ state: "visible", timeout: 15000 });
  await item.click();
}

async function openFile(page, name) {
  // Quick Open lists the file once the folder is indexed (slow on a loaded machine): ask again until it does
  const item = page.locator(".quick-input-list .monaco-list-row", { hasText: name }).first();
  await until(`${name} in Quick Open`, async () => {
    await page.keyboard.press("Control+P");
    const input = page.locator(".quick-input-widget input");
    await input.waitFor({ state: "visible", timeout: 15000 });
    await input.fill(name);
    try {
      await item.waitFor({ state: "visible", timeout: 10000 });
      return true;
    } catch {
      await page.keyboard.press("Escape");
      return false;
    }
  }, 90000, 500);
  await item.click();
  await page.locator(`.tabs-container .tab[aria-label*="${name}"]`).first().waitFor({ timeout: 15000 });
}

// Pick an entry of the open code-action menu with the keyboard, as a user would (the rows re-render on
// hover, so pointer clicks are flaky there).
async function chooseAction(page, label) {
  const rows = page.locator(".action-widget .monaco-list-row");
  const count = await rows.count();
  for (let i = 0; i <= count; i++) {
    const focused = page.locator(".action-widget .monaco-list-row.focused");
    if ((await focused.count()) && (await focused.first().innerText()).includes(label)) {
      await page.keyboard.press("Enter");
      return;
    }
    await page.keyboard.press("ArrowDown");
  }
  throw new Error(`"${label}" could not be selected in the code-action menu`);
}

async function editorText(page) {
  return page.evaluate(() => {
    const lines = Array.from(document.querySelectorAll(".editor-group-container.active .monaco-editor .view-lines .view-line"));
    return lines
      .map((l) => ({ top: parseFloat(l.style.top || "0"), text: l.textContent || "" }))
      .sort((a, b) => a.top - b.top)
      .map((l) => l.text.replace(/\u00a0/g, " "))
      .join("\n");
  });
}

// How many lines match `line` in the log files under `dir` whose names match `name` (the Cortex output
// channel is logged to a file by VS Code).
function countInLogs(dir, name, line) {
  let count = 0;
  const walk = (d) => {
    for (const entry of fs.existsSync(d) ? fs.readdirSync(d, { withFileTypes: true }) : []) {
      const full = path.join(d, entry.name);
      if (entry.isDirectory()) {
        walk(full);
      } else if (name.test(entry.name)) {
        count += fs.readFileSync(full, "utf8").split("\n").filter((l) => line.test(l)).length;
      }
    }
  };
  walk(dir);
  return count;
}

// The chat view's frame (a webview: the inner iframe holding its input box).
async function chatFrame(page) {
  return until("the chat view's input box", async () => {
    for (const f of page.frames()) {
      try {
        if (await f.locator("#message").count()) {
          return f;
        }
      } catch {
        // detached
      }
    }
    return undefined;
  }, 30000, 300);
}

// Install the .vsix, start code-server on the scenario's workspace and open it in Chromium: the page
// and the user-data folder, or undefined (the failure is recorded and the driver is finishing).
async function launch() {
  const userData = path.join(scenario.work, "user-data");
  const extensions = path.join(scenario.work, "extensions");
  fs.mkdirSync(path.join(userData, "User"), { recursive: true });
  fs.mkdirSync(extensions, { recursive: true });
  fs.writeFileSync(
    path.join(userData, "User", "settings.json"),
    JSON.stringify(
      {
        "cortex.serverPath": scenario.serverPath,
        "security.workspace.trust.enabled": false,
        "workbench.startupEditor": "none",
        "workbench.tips.enabled": false,
        "workbench.enableExperiments": false,
        "telemetry.telemetryLevel": "off",
        "extensions.autoCheckUpdates": false,
        "extensions.autoUpdate": false,
        "update.mode": "none",
        "editor.lightbulb.enabled": "on",
        "chat.commandCenter.enabled": false,
        "files.autoSave": "off",
        "window.restoreWindows": "none",
      },
      null,
      2,
    ),
  );
  const baseArgs = ["--user-data-dir", userData, "--extensions-dir", extensions, "--disable-telemetry", "--disable-update-check"];

  const installed = await step("install_vsix", async () => {
    const r = spawnSync(scenario.codeServer, [...baseArgs, "--install-extension", scenario.vsix], {
      encoding: "utf8",
      timeout: 120000,
    });
    out.install_output = `${r.stdout}\n${r.stderr}`.trim().slice(-2000);
    if (r.status !== 0) {
      throw new Error(`--install-extension exited ${r.status}`);
    }
    const dirs = fs.readdirSync(extensions).filter((d) => d.startsWith("cortex-lsp."));
    if (!dirs.length) {
      throw new Error(`the extension is not in ${extensions}`);
    }
  });
  if (!installed) {
    await finish(1);
    return undefined;
  }

  const started = await step("start_code_server", async () => {
    codeServer = spawn(
      scenario.codeServer,
      [...baseArgs, "--auth", "none", "--bind-addr", `127.0.0.1:${scenario.port}`, "--disable-workspace-trust", "--disable-getting-started-override", scenario.workspace],
      { env: process.env, stdio: ["ignore", "pipe", "pipe"], detached: true },
    );
    codeServer.stdout.on("data", (d) => (codeServerLog += d));
    codeServer.stderr.on("data", (d) => (codeServerLog += d));
    await until("code-server /healthz", () => healthy(scenario.port), 60000, 300);
  });
  if (!started) {
    await finish(1);
    return undefined;
  }

  const { chromium } = require(scenario.playwrightCore);
  browser = await chromium.launch({
    executablePath: scenario.chromium,
    headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"],
  });
  const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
  const page = await context.newPage();
  page.setDefaultTimeout(20000);

  const ready = await step("open_workbench", async () => {
    await page.goto(`http://127.0.0.1:${scenario.port}/?folder=${encodeURIComponent(scenario.workspace)}`);
    await page.locator(".monaco-workbench").waitFor({ timeout: 90000 });
    await page.locator(".explorer-folders-view, .explorer-viewlet").first().waitFor({ timeout: 60000 }).catch(() => undefined);
    await sleep(1500);
  });
  if (!ready) {
    await screenshot(page, "workbench");
    await finish(1);
    return undefined;
  }

  return { page, userData };
}

async function main() {
  const launched = await launch();
  if (!launched) {
    return;
  }
  const { page, userData } = launched;
  await step("open_file", async () => {
    await openFile(page, "calc.py");
    await until("calc.py in the editor", async () => (await editorText(page)).includes("def add(a, b):"), 20000);
  });

  await step("lightbulb_explain", async () => {
    // select `def add` and its body (lines 4-5), then open the code-action menu (Ctrl+.)
    await page.locator(".editor-group-container.active .monaco-editor textarea").first().focus();
    await page.keyboard.press("Control+G");
    await page.keyboard.type("4");
    await page.keyboard.press("Enter");
    await page.keyboard.press("Home");
    await page.keyboard.press("Shift+ArrowDown");
    await page.keyboard.press("Shift+End");
    // the server starts with the extension: retry until its code actions are offered
    const t0 = Date.now();
    const row = await until(
      '"Cortex: Explain this" in the code-action menu',
      async () => {
        await page.keyboard.press("Control+.");
        const item = page.locator(".action-widget .monaco-list-row", { hasText: "Cortex: Explain this" }).first();
        try {
          await item.waitFor({ state: "visible", timeout: 2500 });
          return item;
        } catch {
          await page.keyboard.press("Escape");
          return undefined;
        }
      },
      60000,
      500,
    );
    out.code_action_menu_ms = Date.now() - t0;
    out.code_action_menu_items = await page.locator(".action-widget .monaco-list-row").allInnerTexts();
    await chooseAction(page, "Cortex: Explain this");
    void row;
    await until("the explain answer in the Cortex view", async () => (await framesText(page)).includes(scenario.explainAnswer), 60000, 500);
  });
  await screenshot(page, "after-explain");
  await progressToastsAfter(page, "explain");

  if (scenario.chatMessage) {
    await step("chat_view_followup", async () => {
      // the chat view (activity bar): type a follow-up into its box, Enter sends it in the same session
      const frame = await chatFrame(page);
      await frame.locator("#message").fill(scenario.chatMessage);
      await frame.locator("#message").press("Enter");
      await until("the chat answer", async () => (await framesText(page)).includes(scenario.chatAnswer), 60000, 500);
      out.chat_view_text = (await framesText(page)).slice(-3000);
      out.editor_groups = await page.locator(".editor-group-container").count();
      out.status_bar = await page.locator(".statusbar-item", { hasText: "Cortex" }).allInnerTexts();
    });
    await screenshot(page, "chat-view");
    await progressToastsAfter(page, "chat");
    await screenshot(page, "chat-view-later");
  }

  if (scenario.codeMessage) {
    await step("chat_code_view", async () => {
      // an answer with a python block, after a tool call: the block is highlighted (hljs spans in theme
      // colours), the tool call is one collapsible line (a click opens it), and calc.py:4 opens the file
      const frame = await chatFrame(page);
      await frame.locator("#message").fill(scenario.codeMessage);
      await frame.locator("#message").press("Enter");
      await until("the code answer", async () => (await framesText(page)).includes(scenario.codeLead), 60000, 500);
      await until("the run to finish with its tool line", async () =>
        (await frame.locator("details.tool.tool-ok").count()) > 0 && /answered · 1 tool call/.test(await framesText(page)), 60000, 300);
      const info = await frame.evaluate(() => {
        const blocks = document.querySelectorAll("code.language-python");
        const last = blocks[blocks.length - 1];
        const keywords = last ? last.querySelectorAll(".hljs-keyword") : [];
        return {
          python_blocks: blocks.length,
          keyword_spans: keywords.length,
          string_or_number_spans: last ? last.querySelectorAll(".hljs-string, .hljs-number, .hljs-comment").length : 0,
          keyword_colour: keywords.length ? getComputedStyle(keywords[0]).color : "",
          text_colour: getComputedStyle(document.body).color,
        };
      });
      const details = frame.locator("details.tool").last();
      info.tool_lines = await frame.locator("details.tool").count();
      info.tool_open_before = await details.evaluate((d) => d.open);
      info.tool_summary = await details.locator("summary").innerText();
      await details.scrollIntoViewIfNeeded();
      await screenshot(page, "chat-tool-collapsed");
      await details.locator("summary").click();
      info.tool_open_after = await details.evaluate((d) => d.open);
      info.tool_body = await details.locator(".tool-body").innerText();
      await details.scrollIntoViewIfNeeded();
      await screenshot(page, "chat-code-highlight");
      await progressToastsAfter(page, "code");
      // the citation opens calc.py at line 4
      await frame.locator('a[href="#cortex-open:calc.py:4"]').last().click();
      const cursor = page.locator('[id="status.editor.selection"]');
      await until("calc.py at line 4", async () => /^Ln 4,/.test(await cursor.innerText().catch(() => "")), 20000, 250);
      info.active_tab = await page.locator(".editor-group-container.active .tab.active").first().getAttribute("aria-label");
      info.cursor = await cursor.innerText();
      out.chat_code = info;
    });
    await screenshot(page, "citation-opened");
    await step("chat_code_dark_theme", async () => {
      // the same view in a dark theme: the token colours follow the theme's variables
      await runPalette(page, "Preferences: Color Theme");
      const input = page.locator(".quick-input-widget input");
      await input.waitFor({ state: "visible" });
      await input.fill("Dark Modern");
      await page.locator(".quick-input-list .monaco-list-row", { hasText: "Dark Modern" }).first().waitFor({ state: "visible" });
      await page.keyboard.press("Enter");
      const frame = await chatFrame(page);
      const keywordColour = () => frame.evaluate(() => {
        const k = document.querySelectorAll("code.language-python .hljs-keyword");
        return k.length ? getComputedStyle(k[k.length - 1]).color : "";
      });
      await until("the dark theme in the chat view", async () => (await keywordColour()) !== out.chat_code.keyword_colour, 20000, 300);
      out.chat_code.keyword_colour_dark = await keywordColour();
      out.chat_code.text_colour_dark = await frame.evaluate(() => getComputedStyle(document.body).color);
      await frame.locator("details.tool").last().locator("summary").click(); // closed again: the code fits
      await frame.locator("code.language-python").last().scrollIntoViewIfNeeded();
      await screenshot(page, "chat-code-dark");
    });
  }

  // The review: the write shows as a diff with Accept/Reject; nothing is on disk until Accept.
  async function askAndReview(message, file, choice, waitMs, shot) {
    await runPalette(page, "Cortex: Ask…");
    const input = page.locator(".quick-input-widget input");
    await input.waitFor({ state: "visible" });
    await input.fill(message);
    await page.keyboard.press("Enter");
    const toast = page.locator(".notification-toast", { hasText: "waiting for your review" }).first();
    await toast.waitFor({ state: "visible", timeout: 60000 });
    const card = (await chatFrame(page)).locator(".review-card");
    await card.waitFor({ state: "visible", timeout: 15000 });
    const tab = page.locator(".tabs-container .tab", { hasText: file }).first();
    await tab.waitFor({ state: "visible", timeout: 15000 });
    const target = path.join(scenario.workspace, file);
    const seen = {
      toast: await toast.innerText(),
      card: await card.innerText(),
      tab: await tab.getAttribute("aria-label"),
      diff_editor: (await page.locator(".monaco-diff-editor").count()) > 0,
      title_actions: await page.locator(".editor-actions .action-label").evaluateAll((els) =>
        els.map((e) => e.getAttribute("aria-label") || "")),
      on_disk_during_review: fs.existsSync(target),
    };
    await screenshot(page, shot);
    await sleep(waitMs); // a slow review: longer than the tool time-out
    // the chat's review card: the durable place to decide
    await card.locator("button.review-act", { hasText: choice }).click();
    await tab.waitFor({ state: "hidden", timeout: 15000 });
    return seen;
  }

  await step("review_accept", async () => {
    out.review_accept = await askAndReview(scenario.askMessage, scenario.writeFile, "Accept", scenario.reviewWaitMs, "review-diff");
    await until("the write answer in the Cortex view", async () => (await framesText(page)).includes(scenario.writeAnswer), 60000, 500);
    const target = path.join(scenario.workspace, scenario.writeFile);
    out.disk_after_accept = await until("the accepted file on disk", () => {
      const text = fs.existsSync(target) ? fs.readFileSync(target, "utf8") : "";
      return text === scenario.noteText ? text : undefined;
    }, 20000);
    out.dirty_tabs_after_accept = await page.locator(".tabs-container .tab.dirty").count();
  });
  await screenshot(page, "after-accept");

  if (scenario.rejectMessage) {
    await step("review_reject", async () => {
      out.review_reject = await askAndReview(scenario.rejectMessage, scenario.rejectFile, "Reject", 500, "review-reject");
      // the chat's edit line (the extension's, from the edit event), whatever the model claims
      await until("the honest answer in the Cortex view", async () => (await framesText(page)).includes(`${scenario.rejectFile} — not written`), 60000, 500);
      await until("the run to finish", async () => /answered|failed|stopped/.test((await framesText(page)).split(scenario.rejectMessage).pop()), 60000, 500);
      await sleep(1000);
      out.reject_on_disk = fs.existsSync(path.join(scenario.workspace, scenario.rejectFile));
      out.answer_after_reject = (await framesText(page)).slice(-3000);
    });
    await screenshot(page, "after-reject");
  }
  if (scenario.streamMessage) {
    await step("progress_cancel", async () => {
      // a long streaming run shows a progress notification with Cancel; Cancel stops the run
      await runPalette(page, "Cortex: Ask…");
      const input = page.locator(".quick-input-widget input");
      await input.waitFor({ state: "visible" });
      await input.fill(scenario.streamMessage);
      await page.keyboard.press("Enter");
      const toast = page.locator(".notification-toast", { hasText: scenario.streamMessage }).first();
      await toast.waitFor({ state: "visible", timeout: 30000 });
      out.progress_toast_text = await toast.innerText();
      await screenshot(page, "progress");
      const cancel = toast.locator(".monaco-button", { hasText: "Cancel" }).first();
      await cancel.click();
      await until("the run to stop as cancelled", async () => /cancelled/.test(await framesText(page)), 30000, 300);
      await toast.waitFor({ state: "hidden", timeout: 15000 });
    });
  }
  if (scenario.modelDownMessage) {
    await step("model_down", async () => {
      // the model server goes away (the test stops it when asked): one error notification naming
      // the setting, with Open Settings and Run Doctor; the answer view shows an error, not a raw code
      fs.writeFileSync(path.join(scenario.work, "stop-model"), "");
      await until("the model server to stop", async () => fs.existsSync(path.join(scenario.work, "model-stopped")), 20000, 200);
      const errorToasts = page.locator(".notification-toast", { hasText: "ollamaBaseUrl" });
      for (let i = 0; i < 2; i++) {
        await runPalette(page, "Cortex: Ask…");
        const input = page.locator(".quick-input-widget input");
        await input.waitFor({ state: "visible" });
        await input.fill(`${scenario.modelDownMessage} ${i}`);
        await page.keyboard.press("Enter");
        await until("the model-down error in the Cortex view", async () => {
          const text = await framesText(page);
          return (text.match(/model unavailable/g) || []).length > i;
        }, 60000, 500);
        if (i === 0) {
          await errorToasts.first().waitFor({ state: "visible", timeout: 15000 });
          out.model_down_toast = await errorToasts.first().innerText();
          await screenshot(page, "model-down");
          // the status bar shows the outage (error colours) while the model is down
          out.status_down = await until("the status bar in its model-down state", async () => {
            const seen = await cortexStatus(page);
            return /model down/.test(seen.text) ? seen : undefined;
          }, 15000, 250);
          await statusBarShot(page, "status-down");
        }
      }
      await sleep(1000);
      out.model_down_toasts = await errorToasts.count();
      out.model_down_view = (await framesText(page)).slice(-2000);
    });
  }
  if (scenario.spareModelUrl) {
    await step("model_url_change", async () => {
      // the user points cortex.ollamaBaseUrl at another model server in the Settings editor; the next
      // ask goes there, with no Restart Server
      await page.keyboard.press("F1");
      const input = page.locator(".quick-input-widget input");
      await input.waitFor({ state: "visible" });
      await input.fill(">Preferences: Open User Settings");
      const rows = page.locator(".quick-input-list .monaco-list-row", { hasText: "Preferences: Open User Settings" });
      await rows.first().waitFor({ state: "visible" });
      const labels = await rows.allInnerTexts();
      const index = labels.findIndex((t) => !t.includes("JSON"));
      await rows.nth(Math.max(0, index)).click();
      await page.locator(".settings-editor").waitFor({ state: "visible", timeout: 20000 });
      await sleep(500);
      await page.keyboard.type("cortex.ollamaBaseUrl");
      // a machine-scoped setting: in code-server it lives in the Remote tab (the machine the server runs on)
      const remote = page.locator(".settings-editor .settings-tabs-widget .action-label", { hasText: "Remote" }).first();
      if (await remote.count()) {
        await remote.click();
      }
      const field = page.locator(".settings-editor .setting-item-contents", { hasText: "Ollama Base Url" }).locator("input").first();
      await field.waitFor({ state: "visible", timeout: 20000 }).catch(async (err) => {
        await screenshot(page, "settings-url-missing");
        throw err;
      });
      await field.fill(scenario.spareModelUrl);
      await field.press("Tab");
      // the Settings editor writes after a debounce (slow on a loaded machine): wait for the file, then
      // give the extension's didChangeConfiguration and the server's configuration pull a moment
      await until("the new URL in the settings file", async () => {
        for (const file of [path.join(userData, "Machine", "settings.json"), path.join(userData, "User", "settings.json")]) {
          try {
            if (fs.readFileSync(file, "utf8").includes(scenario.spareModelUrl)) {
              return true;
            }
          } catch (err) {
            // not written yet
          }
        }
        return false;
      }, 30000, 250);
      await sleep(2000);
      await screenshot(page, "settings-url");
      // close the Settings editor so that nothing typed next can land in its URL field
      await page.keyboard.press("Escape");
      await page.keyboard.press("Control+W");
      await sleep(500);
      const frame = await chatFrame(page);
      await frame.locator("#message").click();
      await frame.locator("#message").fill(scenario.backMessage);
      await frame.locator("#message").press("Enter");
      await until("the answer from the new model server", async () => (await framesText(page)).includes(scenario.backAnswer), 60000, 500);
      out.after_url_change = (await framesText(page)).slice(-2000);
      out.server_starts = countInLogs(path.join(userData, "logs"), /Cortex\.log$/, /^Starting /m);
      // the answer cleared the outage from the status bar
      out.status_recovered = await until("the status bar back from its model-down state", async () => {
        const seen = await cortexStatus(page);
        return /model down/.test(seen.text) ? undefined : seen;
      }, 15000, 250);
      await statusBarShot(page, "status-recovered");
      await screenshot(page, "after-url-change");
    });
  }
  await screenshot(page, "final");
  out.answer_view_text = (await framesText(page)).slice(-4000);
  return finish(out.failures.length ? 1 : 0);
}

module.exports = { scenario, out, launch, finish, step, until, sleep, screenshot, framesText, runPalette, openFile, editorText, chatFrame, chooseAction };

if (require.main === module) {
  main().catch((err) => {
    out.failures.push(`driver: ${err && err.stack ? err.stack : err}`);
    void finish(1);
  });
}

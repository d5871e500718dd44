#!/usr/bin/env node
// First start without a server, in code-server through Chromium (vscode_e2e.cjs's launch): the error
// notification gives this repository's install step (never `pip install cortex-lsp`), the status bar
// shows the error state, and Reset Memory's dialog has the safe button as its default.
//
// Input: $CORTEX_VSCODE_SCENARIO as for vscode_e2e.cjs with serverPath "" (and a PATH without
// cortex-lsp in the environment).
"use strict";

const e2e = require("./vscode_e2e.cjs");

const { out, step, until, sleep, screenshot, framesText, runPalette, finish } = e2e;

async function main() {
  const launched = await e2e.launch();
  if (!launched) {
    return;
  }
  const { page } = launched;

  await step("missing_server", async () => {
    const toast = page.locator(".notification-toast", { hasText: "cortex-lsp was not found" }).first();
    await toast.waitFor({ state: "visible", timeout: 60000 });
    out.toast = await toast.innerText();
    out.status = await until("the status bar's error state", async () => {
      const item = page.locator(".statusbar-item", { hasText: "Cortex" }).first();
      const text = await item.innerText().catch(() => "");
      return /no server/.test(text)
        ? { text, background: await item.evaluate((el) => getComputedStyle(el).backgroundColor),
            bar_background: await page.locator(".part.statusbar").evaluate((el) => getComputedStyle(el).backgroundColor) }
        : undefined;
    }, 30000, 250);
    await screenshot(page, "first-start-no-server");
  });

  await step("reset_memory_default", async () => {
    await runPalette(page, "Cortex: Reset Memory");
    const dialog = page.locator(".monaco-dialog-box");
    await dialog.waitFor({ state: "visible", timeout: 15000 });
    out.dialog_buttons = await dialog.locator(".dialog-buttons .monaco-button").allInnerTexts();
    // the default button: the one with the focus (Enter presses it), drawn as the primary one
    out.dialog_focused = await page.evaluate(() => (document.activeElement ? document.activeElement.textContent : ""));
    await screenshot(page, "reset-memory-dialog");
    // Enter takes the default button
    await page.keyboard.press("Enter");
    await dialog.waitFor({ state: "hidden", timeout: 15000 });
    await sleep(1500);
    // had it deleted, the request would be reported "Not sent" (no server): nothing was asked of it
    out.after_enter = await framesText(page);
  });

  return finish(out.failures.length ? 1 : 0);
}

main().catch((err) => {
  out.failures.push(`driver: ${err && err.stack ? err.stack : err}`);
  void finish(1);
});

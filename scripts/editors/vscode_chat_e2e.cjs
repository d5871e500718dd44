#!/usr/bin/env node
// The chat view as a user works with it, in code-server through Chromium (shares vscode_e2e.cjs's
// launch and helpers): the context chip for the selection and what the model gets; Stop enabled only
// while a run streams; a write's review waiting a full minute (the chat's card and the notice stay),
// decided in the chat, leaving nothing in the notification centre, and the accepted file opened and
// linked; closing the diff tab rejects; *Apply to file* on an answer's code block changes the file only
// after Accept; a model that dies mid-answer keeps the streamed text; the chat survives a window
// reload; New Chat clears it; Regenerate replaces the answer.
//
// Input: $CORTEX_VSCODE_SCENARIO as for vscode_e2e.cjs, with contextMessage, contextAnswer,
// writeMessage, writeFile, noteText, reviewWaitMs, closeMessage, closeFile, applyMessage, applyMarker,
// killMessage, killPartial, regenMessage, regenAnswer.
"use strict";

const fs = require("fs");
const path = require("path");
const e2e = require("./vscode_e2e.cjs");

const { scenario, out, step, until, sleep, screenshot, framesText, runPalette, openFile, editorText, chatFrame, finish } = e2e;

async function chatText(frame) {
  return frame.evaluate(() => document.getElementById("root").innerText);
}

async function askInChat(frame, text) {
  await frame.locator("#message").click();
  await frame.locator("#message").fill(text);
  await frame.locator("#message").press("Enter");
}

async function main() {
  const launched = await e2e.launch();
  if (!launched) {
    return;
  }
  const { page } = launched;
  const reviewToasts = () => page.locator(".notification-toast", { hasText: "waiting for your review" });

  await step("select_in_calc", async () => {
    await openFile(page, "calc.py");
    await until("calc.py in the editor", async () => (await editorText(page)).includes("def add(a, b):"), 20000);
    await page.locator(".editor-group-container.active .monaco-editor textarea").first().focus();
    await page.keyboard.press("Control+G");
    await page.keyboard.type("4");
    await page.keyboard.press("Enter");
    await page.keyboard.press("Home");
    await page.keyboard.press("Shift+ArrowDown");
    await page.keyboard.press("Shift+End");
  });

  let frame;
  await step("context_chip", async () => {
    await runPalette(page, "Cortex: Show Answer");
    frame = await chatFrame(page);
    const chip = frame.locator("#chips .chip");
    await until("the selection's chip", async () => /calc\.py:4-5/.test(await chip.innerText().catch(() => "")), 30000, 250);
    out.chip = await chip.innerText();
    out.stop_disabled_idle = await frame.locator("#stop").isDisabled();
    await screenshot(page, "chat-chip");
    await askInChat(frame, scenario.contextMessage);
    // Stop is enabled while the answer streams, and disabled again when it is done
    out.stop_enabled_running = Boolean(await until("Stop enabled while the run goes", async () => !(await frame.locator("#stop").isDisabled()), 30000, 100));
    await until("the answer about the selection", async () => (await chatText(frame)).includes(scenario.contextAnswer), 60000, 250);
    await until("Stop disabled after the run", async () => frame.locator("#stop").isDisabled(), 15000, 100);
    // what was just sent is in view
    out.sent_in_view = await frame.evaluate(() => {
      const titles = document.querySelectorAll("h3");
      const last = titles[titles.length - 1];
      const r = last ? last.getBoundingClientRect() : undefined;
      return Boolean(r && r.top >= 0 && r.top < window.innerHeight);
    });
    await screenshot(page, "chat-context-answer");
  });

  await step("mention_file", async () => {
    // × removes the chip; #file:calc.py sends the whole file instead
    await frame.locator("#chips .chip button").click();
    await until("the chip to go", async () => (await frame.locator("#chips .chip").count()) === 0, 10000, 100);
    await askInChat(frame, scenario.mentionMessage);
    await until("the answer about the file", async () => (await chatText(frame)).includes(scenario.mentionAnswer), 60000, 250);
    await until("the run to finish", async () => frame.locator("#stop").isDisabled(), 30000, 200);
    out.chip_after_remove = await frame.locator("#chips .chip").count();
  });

  await step("review_waits", async () => {
    await askInChat(frame, scenario.writeMessage);
    const card = frame.locator(".review-card");
    await card.waitFor({ state: "visible", timeout: 60000 });
    await reviewToasts().first().waitFor({ state: "visible", timeout: 15000 });
    const tab = page.locator(".tabs-container .tab", { hasText: scenario.writeFile }).first();
    await tab.waitFor({ state: "visible", timeout: 15000 });
    const seen = {
      card: await card.innerText(),
      tab: await tab.getAttribute("aria-label"),
      toast: await reviewToasts().first().innerText(),
      on_disk_during_review: fs.existsSync(path.join(scenario.workspace, scenario.writeFile)),
    };
    await screenshot(page, "review-waiting");
    // a slow reviewer: a full minute; VS Code hides ordinary toasts long before that
    await sleep(scenario.reviewWaitMs);
    seen.card_after_wait = (await card.count()) ? await card.innerText() : "";
    seen.toasts_after_wait = await reviewToasts().count();
    seen.title_actions = await page.locator(".editor-actions .action-label").evaluateAll((els) => els.map((e) => e.getAttribute("aria-label") || ""));
    await screenshot(page, "review-after-wait");
    await card.locator("button.review-act", { hasText: "Accept" }).click();
    const target = path.join(scenario.workspace, scenario.writeFile);
    seen.disk_after_accept = await until("the accepted file on disk", () => {
      const text = fs.existsSync(target) ? fs.readFileSync(target, "utf8") : "";
      return text === scenario.noteText ? text : undefined;
    }, 30000);
    await card.waitFor({ state: "detached", timeout: 15000 });
    await until("the review notice to close", async () => (await reviewToasts().count()) === 0, 15000, 250);
    // the accepted file is open and linked from the answer
    seen.file_link = await until("the link to the file", async () =>
      (await frame.locator(`a[href="#cortex-open:${scenario.writeFile}:1"]`).count()) > 0, 30000, 250);
    // the link opens the accepted file
    await frame.locator(`a[href="#cortex-open:${scenario.writeFile}:1"]`).last().click();
    await until("the accepted file's tab", async () =>
      (await page.locator(".tabs-container .tab.active", { hasText: scenario.writeFile }).count()) > 0, 15000, 250);
    seen.file_tab = await page.locator(".tabs-container .tab.active").first().getAttribute("aria-label");
    // back to calc.py, the file the next steps work in
    await page.locator(".tabs-container .tab", { hasText: "calc.py" }).first().click();
    // nothing live-looking is left in the notification centre
    await runPalette(page, "Notifications: Show Notifications");
    await page.locator(".notifications-center").waitFor({ state: "visible", timeout: 10000 });
    await sleep(500);
    seen.centre = await page.locator(".notifications-center").innerText();
    await screenshot(page, "notification-centre");
    await runPalette(page, "Notifications: Hide Notifications");
    out.review = seen;
  });

  await step("close_tab_rejects", async () => {
    await askInChat(frame, scenario.closeMessage);
    const card = frame.locator(".review-card");
    await card.waitFor({ state: "visible", timeout: 60000 });
    const tab = page.locator(".tabs-container .tab", { hasText: scenario.closeFile }).first();
    await tab.waitFor({ state: "visible", timeout: 15000 });
    await tab.hover();
    await tab.locator(".tab-actions .action-label").first().click();
    // the chat's edit line for the write (the extension's, from the edit event): not written
    await until("the run to say it was not written", async () => (await chatText(frame)).includes(`${scenario.closeFile} — not written`), 60000, 250);
    // the review's notice closes with the review; the workbench removes a toast with an animation, so
    // give it a moment (a toast still there after 10 s is recorded and fails the test)
    try {
      await until("the review's notice to close", async () => (await reviewToasts().count()) === 0, 10000, 200);
    } catch (_err) { /* recorded below */ }
    out.close_tab = {
      card_left: await card.count(),
      on_disk: fs.existsSync(path.join(scenario.workspace, scenario.closeFile)),
      toasts_left: await reviewToasts().count(),
    };
    await screenshot(page, "close-tab-rejected");
  });

  await step("apply_to_file", async () => {
    const calc = path.join(scenario.workspace, "calc.py");
    const before = fs.readFileSync(calc, "utf8");
    await askInChat(frame, scenario.applyMessage);
    await until("the answer with a code block", async () => (await chatText(frame)).includes(scenario.applyMarker), 60000, 250);
    await until("the run to finish", async () => frame.locator("#stop").isDisabled(), 30000, 200);
    const apply = frame.locator("button.code-act[data-act='apply']").last();
    await apply.scrollIntoViewIfNeeded();
    await screenshot(page, "apply-button");
    await apply.click();
    const card = frame.locator(".review-card");
    await card.waitFor({ state: "visible", timeout: 60000 });
    const seen = { card: await card.innerText(), unchanged_during_review: fs.readFileSync(calc, "utf8") === before };
    seen.tab = await page.locator(".tabs-container .tab.active").first().getAttribute("aria-label");
    await screenshot(page, "apply-review");
    await card.locator("button.review-act", { hasText: "Accept" }).click();
    seen.after = await until("calc.py changed on disk", () => {
      const text = fs.readFileSync(calc, "utf8");
      return text.includes(scenario.applyMarker) ? text : undefined;
    }, 30000);
    out.apply = seen;
    await screenshot(page, "apply-accepted");
  });

  await step("model_dies_mid_answer", async () => {
    await askInChat(frame, scenario.killMessage);
    await until("the error line", async () => /Error:/.test((await chatText(frame)).split(scenario.killMessage).pop()), 60000, 250);
    const text = (await chatText(frame)).split(scenario.killMessage).pop();
    out.killed = {
      text,
      status: await until("the status bar's model-down state", async () => {
        const t = await page.locator(".statusbar-item", { hasText: "Cortex" }).first().innerText();
        return /model down/.test(t) ? t : undefined;
      }, 15000, 250),
    };
    await screenshot(page, "model-died");
  });

  await step("history_after_reload", async () => {
    await page.reload();
    await page.locator(".monaco-workbench").waitFor({ timeout: 90000 });
    // the chat view comes back where it was; else the user opens it (once the extension is up)
    frame = await chatFrame(page).catch(() => undefined);
    if (!frame) {
      await until("Cortex: Show Answer", async () => {
        await runPalette(page, "Cortex: Show Answer").catch(async () => page.keyboard.press("Escape"));
        return chatFrame(page).catch(() => undefined);
      }, 90000, 1000);
      frame = await chatFrame(page);
    }
    await until("the chat from before the reload", async () => (await chatText(frame)).includes(scenario.contextAnswer), 60000, 300);
    out.after_reload = await chatText(frame);
    await screenshot(page, "history-after-reload");
    await frame.locator("#history").click();
    const rows = page.locator(".quick-input-list .monaco-list-row");
    await rows.first().waitFor({ state: "visible", timeout: 20000 });
    out.history_items = await rows.allInnerTexts();
    await screenshot(page, "history-picker");
    await page.keyboard.press("Escape");
  });

  await step("new_chat_and_regenerate", async () => {
    await frame.locator("#new").click();
    await until("an empty chat", async () => !(await chatText(frame)).includes(scenario.contextAnswer), 15000, 200);
    out.after_new_chat = await chatText(frame);
    await askInChat(frame, scenario.regenMessage);
    await until("the answer", async () => (await chatText(frame)).includes(scenario.regenAnswer), 60000, 250);
    await until("the run to finish", async () => frame.locator("#stop").isDisabled(), 30000, 200);
    await frame.locator("#again").click();
    await until("the regenerated run to start", async () => !(await frame.locator("#stop").isDisabled()), 30000, 100).catch(() => undefined);
    await until("the regenerated run to finish", async () => frame.locator("#stop").isDisabled(), 60000, 200);
    await sleep(500);
    const text = await chatText(frame);
    out.regenerated = { answers: text.split(scenario.regenAnswer).length - 1, questions: text.split(scenario.regenMessage).length - 1 };
    await screenshot(page, "regenerated");
  });

  await screenshot(page, "final");
  return finish(out.failures.length ? 1 : 0);
}

main().catch((err) => {
  out.failures.push(`driver: ${err && err.stack ? err.stack : err}`);
  void finish(1);
});

import * as assert from "assert";
import * as fs from "fs";
import * as path from "path";
import {
  describeOutage,
  MODEL_DOWN_COMMAND,
  ModelHealth,
  openWhenSlow,
  outageMessage,
  STOP_COMMAND,
  statusLook,
} from "../src/runState";

const DOWN = {
  stop_reason: "model_unavailable",
  backend: "ollama",
  answer: "The model server at http://127.0.0.1:11434. is not answering.",
};

suite("model health", () => {
  test("one notice per outage; the next answered run clears it", () => {
    const health = new ModelHealth();
    assert.strictEqual(health.observe({ stop_reason: "answered" }), undefined, "no outage yet: nothing changes");
    assert.strictEqual(health.observe(DOWN), "down");
    assert.deepStrictEqual(health.current, { where: "http://127.0.0.1:11434", setting: "cortex.ollamaBaseUrl" });
    assert.strictEqual(health.observe(DOWN), undefined, "the same outage is not announced twice");
    assert.strictEqual(health.observe({ stop_reason: "cancelled" }), undefined, "a cancelled run proves nothing");
    assert.ok(health.current, "still down after a cancel");
    assert.strictEqual(health.observe({ stop_reason: "answered" }), "recovered");
    assert.strictEqual(health.current, undefined);
    assert.strictEqual(health.observe(DOWN), "down", "a new outage is announced again");
  });

  test("results without a stop reason change nothing", () => {
    const health = new ModelHealth();
    health.observe(DOWN);
    assert.strictEqual(health.observe(undefined), undefined);
    assert.strictEqual(health.observe({ stop_reason: 3 }), undefined);
    assert.ok(health.current);
  });

  test("the outage names the setting of the backend in use and where Cortex looked", () => {
    assert.strictEqual(describeOutage({ ...DOWN, backend: "openai" }).setting, "cortex.openaiBaseUrl");
    assert.deepStrictEqual(describeOutage({ stop_reason: "model_unavailable" }), { where: "", setting: "cortex.ollamaBaseUrl" });
    const text = outageMessage(describeOutage(DOWN));
    assert.ok(text.includes("at http://127.0.0.1:11434 is not answering"), text);
    // a notification is plain text: the setting's name, no Markdown backticks
    assert.ok(text.includes("cortex.ollamaBaseUrl") && !text.includes("`"), text);
    assert.ok(!text.includes("model_unavailable"), text);
  });
});

suite("status bar look", () => {
  const outage = { where: "http://127.0.0.1:9", setting: "cortex.ollamaBaseUrl" };

  test("idle: the model that answered, click opens the chat", () => {
    const look = statusLook({ busy: false, model: "qwen", outage: undefined }, "chat.focus");
    assert.deepStrictEqual(look, { text: "$(comment-discussion) Cortex qwen", tooltip: "Cortex: open the chat", command: "chat.focus", error: false });
  });

  test("model down: error colours, click shows Open Settings / Run Doctor", () => {
    const look = statusLook({ busy: false, model: "qwen", outage }, "chat.focus");
    assert.strictEqual(look.error, true);
    assert.strictEqual(look.command, MODEL_DOWN_COMMAND);
    assert.ok(look.text.includes("model down"), look.text);
    assert.ok(look.tooltip.includes("http://127.0.0.1:9") && look.tooltip.includes("cortex.ollamaBaseUrl"), look.tooltip);
  });

  test("busy wins over down: the spinner, click stops", () => {
    const look = statusLook({ busy: true, model: "", outage }, "chat.focus");
    assert.strictEqual(look.command, STOP_COMMAND);
    assert.strictEqual(look.error, false);
    assert.ok(look.text.startsWith("$(sync~spin)"), look.text);
  });
});

suite("progress notification for slow runs only", () => {
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

  test("a run that answers before the delay opens no notification", async () => {
    let opened = 0;
    const work = sleep(10);
    openWhenSlow(work, 80, () => opened++);
    await work;
    await sleep(150);
    assert.strictEqual(opened, 0);
  });

  test("a failed run opens none either", async () => {
    let opened = 0;
    const work = sleep(10).then(() => Promise.reject(new Error("boom")));
    openWhenSlow(work, 80, () => opened++);
    await work.catch(() => undefined);
    await sleep(150);
    assert.strictEqual(opened, 0);
  });

  test("a run still working after the delay opens one, once", async () => {
    let opened = 0;
    const work = sleep(200);
    openWhenSlow(work, 30, () => opened++);
    await work;
    await sleep(50);
    assert.strictEqual(opened, 1);
  });

  test("stopping the wait opens none", async () => {
    let opened = 0;
    const stop = openWhenSlow(sleep(200), 30, () => opened++);
    stop();
    await sleep(100);
    assert.strictEqual(opened, 0);
  });
});

suite("status bar command ids", () => {
  test("the status bar's commands are the ones the extension registers", () => {
    const source = fs.readFileSync(path.join(__dirname, "..", "..", "src", "extension.ts"), "utf8");
    for (const id of [MODEL_DOWN_COMMAND, STOP_COMMAND]) {
      assert.ok(source.includes(`register("${id}"`), id);
    }
  });
});

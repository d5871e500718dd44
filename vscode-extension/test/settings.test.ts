import * as assert from "assert";
import * as fs from "fs";
import * as path from "path";
import { declaredSettings, explicitSettings, InspectedValue } from "../src/settings";

const pkg = JSON.parse(fs.readFileSync(path.join(__dirname, "..", "..", "package.json"), "utf8"));

suite("explicitSettings", () => {
  const decls = declaredSettings(pkg);

  test("declarations come from package.json", () => {
    const keys = decls.map((d) => d.key);
    assert.ok(keys.includes("ollamaModel"));
    assert.ok(keys.includes("lats.enabled"));
    assert.ok(keys.includes("serverPath"));
  });

  test("only explicitly set values are sent, nested, defaults never", () => {
    const values: Record<string, InspectedValue> = {
      ollamaModel: { defaultValue: "qwen2.5:7b", globalValue: "llama3.2:3b" },
      maxAgentSteps: { defaultValue: 10 },
      "lats.enabled": { defaultValue: false, globalValue: true },
      dataDir: { defaultValue: null, globalValue: null },
      serverPath: { defaultValue: "", globalValue: "/opt/cortex-lsp" },
    };
    const out = explicitSettings(decls, (k) => values[k]);
    assert.deepStrictEqual(out, { ollamaModel: "llama3.2:3b", lats: { enabled: true } });
  });

  test("a workspace cannot set a machine-scoped (security) setting", () => {
    const values: Record<string, InspectedValue> = {
      allowedWriteExtensions: { workspaceValue: [".sh"] },
      ollamaBaseUrl: { workspaceValue: "http://attacker.example:11434", globalValue: "http://127.0.0.1:11434" },
      webFetchEnabled: { workspaceFolderValue: true, globalValue: false },
      maxAgentSteps: { workspaceValue: 3, globalValue: 20 },
    };
    const out = explicitSettings(decls, (k) => values[k]);
    assert.deepStrictEqual(out, { ollamaBaseUrl: "http://127.0.0.1:11434", webFetchEnabled: false, maxAgentSteps: 3 });
  });

  test("an untrusted workspace sets nothing at all", () => {
    const values: Record<string, InspectedValue> = {
      maxAgentSteps: { workspaceValue: 3, globalValue: 20 },
      ollamaModel: { workspaceValue: "evil" },
    };
    assert.deepStrictEqual(explicitSettings(decls, (k) => values[k], false), { maxAgentSteps: 20 });
  });

  test("every server security setting is machine-scoped in package.json", () => {
    const props = pkg.contributes.configuration.properties as Record<string, { scope?: string }>;
    for (const name of [
      "cortex.allowedWriteExtensions",
      "cortex.maxWriteBytes",
      "cortex.pluginsDir",
      "cortex.codeSandbox",
      "cortex.sandboxIsolation",
      "cortex.webFetchEnabled",
      "cortex.debug",
      "cortex.ollamaBaseUrl",
      "cortex.openaiBaseUrl",
      "cortex.dataDir",
      "cortex.serverPath",
    ]) {
      assert.strictEqual(props[name]?.scope, "machine", name);
    }
    assert.ok(!("cortex.openaiApiKey" in props), "the API key is not a settings.json setting");
  });
});

suite("package.json commands", () => {
  test("every contributed command is registered by the extension", () => {
    const source = fs.readFileSync(path.join(__dirname, "..", "..", "src", "extension.ts"), "utf8");
    for (const cmd of pkg.contributes.commands as { command: string }[]) {
      assert.ok(source.includes(`register("${cmd.command}"`), `${cmd.command} is not registered`);
    }
  });

  test("palette commands never reuse a server command id", () => {
    const serverIds = new Set(["cortex.ask", "cortex.explain", "cortex.run", "cortex.doctor"]);
    for (const cmd of pkg.contributes.commands as { command: string }[]) {
      assert.ok(!serverIds.has(cmd.command), cmd.command);
    }
  });
});

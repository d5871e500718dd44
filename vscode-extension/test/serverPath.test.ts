import * as assert from "assert";
import { resolveServerCommand, ServerLookup } from "../src/serverPath";

function lookup(over: Partial<ServerLookup>, existing: string[]): ServerLookup {
  const set = new Set(existing);
  return {
    configured: "",
    folders: ["/work/proj"],
    trusted: true,
    pathEnv: "/usr/local/bin:/usr/bin",
    platform: "linux",
    home: "/home/u",
    isExecutable: (f) => set.has(f),
    ...over,
  };
}

suite("resolveServerCommand", () => {
  test("the setting wins, with ~ expanded", () => {
    const r = resolveServerCommand(lookup({ configured: "~/bin/cortex-lsp" }, ["/home/u/bin/cortex-lsp", "/usr/bin/cortex-lsp"]));
    assert.deepStrictEqual(r, { ok: true, command: "/home/u/bin/cortex-lsp", args: [], source: "setting" });
  });

  test("a setting that points nowhere is an error, not a silent fallback", () => {
    const r = resolveServerCommand(lookup({ configured: "/nope/cortex-lsp" }, ["/usr/bin/cortex-lsp"]));
    assert.strictEqual(r.ok, false);
  });

  test("a trusted workspace's .venv comes before PATH", () => {
    const r = resolveServerCommand(lookup({}, ["/work/proj/.venv/bin/cortex-lsp", "/usr/bin/cortex-lsp"]));
    assert.ok(r.ok && r.command === "/work/proj/.venv/bin/cortex-lsp" && r.source === "workspace venv");
  });

  test("an untrusted workspace's .venv is never started", () => {
    const r = resolveServerCommand(lookup({ trusted: false }, ["/work/proj/.venv/bin/cortex-lsp", "/usr/bin/cortex-lsp"]));
    assert.ok(r.ok && r.command === "/usr/bin/cortex-lsp" && r.source === "PATH");
    const none = resolveServerCommand(lookup({ trusted: false }, ["/work/proj/.venv/bin/cortex-lsp"]));
    assert.strictEqual(none.ok, false);
    assert.ok(!none.ok && /trust/.test(none.message));
  });

  test("${workspaceFolder} in the setting needs a trusted folder", () => {
    const files = ["/work/proj/tools/cortex-lsp"];
    assert.strictEqual(resolveServerCommand(lookup({ configured: "${workspaceFolder}/tools/cortex-lsp", trusted: false }, files)).ok, false);
    const r = resolveServerCommand(lookup({ configured: "${workspaceFolder}/tools/cortex-lsp" }, files));
    assert.ok(r.ok && r.command === "/work/proj/tools/cortex-lsp");
  });

  test("PATH is searched in order and empty entries are skipped", () => {
    const r = resolveServerCommand(lookup({ folders: [], pathEnv: "::/a:/b" }, ["/b/cortex-lsp", "/a/cortex-lsp"]));
    assert.ok(r.ok && r.command === "/a/cortex-lsp");
  });

  test("nothing found lists what was tried", () => {
    const r = resolveServerCommand(lookup({}, []));
    assert.ok(!r.ok && r.tried.includes("/work/proj/.venv/bin/cortex-lsp") && r.tried.includes("/usr/bin/cortex-lsp"));
  });
});

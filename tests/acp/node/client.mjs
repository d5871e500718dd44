// The official ACP TypeScript SDK's client driving `cortex-lsp acp` over stdio (tests/acp/test_acp_node.py).
// Usage: node client.mjs PYTHON ROOT PERMISSION(allow|reject) ASK WRITE
// Prints one JSON object: the initialize result, both prompt responses, every session/update,
// the permission requests it answered and the fs/write_text_file requests it carried out.
import { spawn } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk";

const [python, root, permission, ask, write] = process.argv.slice(2);
const agent = spawn(python, ["-m", "cortex_lsp", "acp"], { stdio: ["pipe", "pipe", "ignore"] });
const stream = acp.ndJsonStream(Writable.toWeb(agent.stdin), Readable.toWeb(agent.stdout));
const seen = { updates: [], permissions: [], writes: [], reads: [] };

const app = acp
  .client({ name: "cortex-acp-node-test" })
  .onNotification(acp.methods.client.session.update, ({ params }) => {
    seen.updates.push(params.update);
  })
  .onRequest(acp.methods.client.session.requestPermission, ({ params }) => {
    seen.permissions.push(params);
    const kind = permission === "allow" ? "allow_once" : "reject_once";
    const option = params.options.find((o) => o.kind === kind);
    return { outcome: { outcome: "selected", optionId: option.optionId } };
  })
  .onRequest(acp.methods.client.fs.writeTextFile, ({ params }) => {
    seen.writes.push({ path: params.path, content: params.content });
    writeFileSync(params.path, params.content);
    return {};
  })
  .onRequest(acp.methods.client.fs.readTextFile, ({ params }) => {
    seen.reads.push(params.path);
    return { content: readFileSync(params.path, "utf8") };
  });

const result = await app.connectWith(stream, async (ctx) => {
  const init = await ctx.request(acp.methods.agent.initialize, {
    protocolVersion: acp.PROTOCOL_VERSION,
    clientCapabilities: { fs: { readTextFile: true, writeTextFile: true } },
  });
  const session = await ctx.request(acp.methods.agent.session.new, { cwd: root, mcpServers: [] });
  const asked = await ctx.request(acp.methods.agent.session.prompt, {
    sessionId: session.sessionId,
    prompt: [{ type: "text", text: ask }],
  });
  const wrote = await ctx.request(acp.methods.agent.session.prompt, {
    sessionId: session.sessionId,
    prompt: [{ type: "text", text: write }],
  });
  return { init, sessionId: session.sessionId, asked, wrote };
});
agent.stdin.end();
await new Promise((done) => agent.on("exit", done));
process.stdout.write(JSON.stringify({ ...result, ...seen }) + "\n");

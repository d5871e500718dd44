// The official ACP TypeScript SDK's client driving `cortex-lsp acp` over stdio (tests/acp/test_acp_node.py).
// Usage: node client.mjs MODE PYTHON ROOT OPTIONS_JSON
//   MODE prompts: session/new, then each of OPTIONS.prompts in that session (a fresh session for each
//                 one with OPTIONS.fresh)
//   MODE cancel:  session/new, the first prompt, session/cancel on its first agent_message_chunk (once
//                 session/new's own updates are in); then the other prompts in the same session
//   MODE load:    session/list for ROOT, session/load OPTIONS.sessionId, then the prompts in that session
// OPTIONS: {prompts: [text or content blocks], permission: "allow" | "reject", write: false (no
//           fs.writeTextFile), fresh: true, sessionId}
// Prints one JSON object: the initialize result, the sessions used, the session/list result, every prompt
// response, every session/update (with the index of the first update of each prompt and of the load),
// the permission requests it answered and the fs requests it carried out.
import { spawn } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk";

const [mode, python, root, optionsJson] = process.argv.slice(2);
const options = JSON.parse(optionsJson ?? "{}");
const permission = options.permission ?? "allow";
const prompts = (options.prompts ?? []).map((p) => (typeof p === "string" ? [{ type: "text", text: p }] : p));
const agent = spawn(python, ["-m", "cortex_lsp", "acp"], { stdio: ["pipe", "pipe", "ignore"] });
const stream = acp.ndJsonStream(Writable.toWeb(agent.stdin), Readable.toWeb(agent.stdout));
const seen = { updates: [], permissions: [], writes: [], reads: [], cancels: [] };
// set while a prompt waits for its first answer chunk to cancel (MODE cancel)
let cancelOnChunk = null;
// resolved by available_commands_update, the last thing session/new sends (after its notes, which are
// agent_message_chunks too)
let commandsSeen;
const commands = new Promise((done) => { commandsSeen = done; });

const app = acp
  .client({ name: "cortex-acp-node-test" })
  .onNotification(acp.methods.client.session.update, ({ params }) => {
    seen.updates.push(params.update);
    if (params.update.sessionUpdate === "available_commands_update") commandsSeen();
    if (cancelOnChunk && params.update.sessionUpdate === "agent_message_chunk") {
      const cancel = cancelOnChunk;
      cancelOnChunk = null;
      cancel(params.update);
    }
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
    clientCapabilities: { fs: { readTextFile: true, writeTextFile: options.write !== false } },
  });
  const out = { init, sessions: [], responses: [], marks: [] };
  const newSession = async () => {
    const session = await ctx.request(acp.methods.agent.session.new, { cwd: root, mcpServers: [] });
    out.sessions.push(session.sessionId);
    return session.sessionId;
  };
  const prompt = async (sessionId, blocks) => {
    out.marks.push(seen.updates.length);
    out.responses.push(await ctx.request(acp.methods.agent.session.prompt, { sessionId, prompt: blocks }));
  };

  let sessionId;
  let rest = prompts;
  if (mode === "load") {
    out.listed = await ctx.request(acp.methods.agent.session.list, { cwd: root });
    out.loadMark = seen.updates.length;
    out.loaded = await ctx.request(acp.methods.agent.session.load,
                                   { sessionId: options.sessionId, cwd: root, mcpServers: [] });
    sessionId = options.sessionId;
    out.sessions.push(sessionId);
  } else if (mode === "cancel") {
    sessionId = await newSession();
    await commands;
    cancelOnChunk = (update) => {
      seen.cancels.push({ afterUpdates: seen.updates.length, chunk: update.content });
      ctx.notify(acp.methods.agent.session.cancel, { sessionId });
    };
    await prompt(sessionId, prompts[0]);
    rest = prompts.slice(1);
  } else if (mode === "prompts") {
    sessionId = await newSession();
  } else {
    throw new Error(`unknown mode ${mode}`);
  }
  for (const [i, blocks] of rest.entries()) {
    if (options.fresh && (i > 0 || out.responses.length > 0)) sessionId = await newSession();
    await prompt(sessionId, blocks);
  }
  return out;
});
agent.stdin.end();
await new Promise((done) => agent.on("exit", done));
process.stdout.write(JSON.stringify({ ...result, ...seen }) + "\n");

// Generates (or checks) package.json `contributes.configuration` from the server's settings schema
// (`cortex_lsp.config.settings_json_schema()`), so the editor's settings can't drift from the server's.
//   node scripts/settings.mjs --write   regenerate package.json's configuration
//   node scripts/settings.mjs --check   exit 1 if package.json differs from what the schema gives
// Python: $CORTEX_PYTHON, else ../.venv/bin/python, else python3.
//
// Every server setting outside the server's WORKSPACE_SAFE_KEYS (models and budgets) is a security
// setting and gets `"scope": "machine"`: VS Code then reads it from user settings only, so a cloned
// repository's .vscode/settings.json can't widen what the agent may do.
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const extDir = join(here, "..");
const repo = join(extDir, "..");

/** Settings left out of the editor UI, with the reason. */
export const EXCLUDED = {
  openai_api_key: "a secret: settings.json is plain text and may be synced; use CORTEX_OPENAI_API_KEY or the user config file",
};

/** Human descriptions; a server setting without one fails the check (write one when adding a setting). */
export const DESCRIPTIONS = {
  model_backend: "Which model server to use: `auto` (Ollama when it answers, else the embedded llama.cpp default where installed), `ollama`, or `openai` (any OpenAI-compatible local server).",
  ollama_base_url: "Address of the Ollama server.",
  openai_base_url: "Address of the OpenAI-compatible server (with `/v1`).",
  ollama_model: "Chat model used for answers.",
  reasoning_model: "Model used for planning and reflection.",
  code_model: "Model used for code tasks.",
  embed_model: "Embedding model used by long-term memory.",
  ollama_timeout_seconds: "Seconds to wait for the model server before giving up on a request.",
  ollama_num_ctx: "Context window (tokens) requested from the model.",
  ollama_keep_alive: "How long Ollama keeps the model loaded after a request (e.g. `30m`).",
  model_profile: "How much the model is trusted with: `small` (the router in code plans and calls tools; the model writes prose only), `full` (the model plans, calls tools and reflects), or `auto` (small for the embedded default and for models that fail a quick JSON probe, cached per model).",
  local_model_path: "Path of a GGUF model file for the embedded llama.cpp backend (empty: the packaged default).",
  data_dir: "Folder for Cortex's memory and logs (empty: your user data folder; never inside the project).",
  chroma_host: "Host of a Chroma server to use instead of the embedded store (empty: embedded).",
  chroma_port: "Port of the Chroma server.",
  history_turns: "How many earlier turns of the session are given to the model.",
  memory_consolidation: "Learn facts and tool sequences from finished runs (in the background).",
  semantic_min_relevance: "Minimum relevance (0–1) for a remembered fact to be used as context.",
  procedural_memory_enabled: "Use learned tool sequences as planning hints.",
  procedural_min_relevance: "Minimum relevance (0–1) for a learned tool sequence to be used.",
  max_agent_steps: "Most steps one run may take before it stops with a best-effort answer.",
  max_run_seconds: "Most seconds one run may take before it stops with a best-effort answer.",
  tool_timeout_seconds: "Time limit for one tool call, in seconds.",
  code_exec_timeout_seconds: "Time limit for running code in the sandbox, in seconds.",
  stream_tokens: "Stream the answer as it is generated.",
  max_answer_bytes: "Largest answer a model may send, in bytes: the stream is cut there and the answer says so.",
  max_tool_args_bytes: "Largest tool call a model may send (its arguments, in bytes): a larger call is not run.",
  max_tool_calls: "Most tool calls one run may make (and one model reply may ask for).",
  "lats.enabled": "Use tree search (LATS) for requests that need several attempts.",
  "lats.max_depth": "Deepest LATS search path.",
  "lats.n_branches": "Candidate actions LATS expands at each node.",
  "lats.budget": "Most LATS node expansions per run.",
  "lats.evaluator": "How LATS scores a branch: with the `model` or a cheap `heuristic`.",
  "lats.escalate_on_stall": "Switch a stalled single-agent run to LATS.",
  "lats.escalation_timeout_seconds": "Time limit for a LATS escalation, in seconds.",
  "supervisor.max_workers": "Most worker agents the supervisor runs for one request.",
  allowed_write_extensions: "File extensions the agent may write (through an edit you can undo).",
  max_write_bytes: "Largest file the agent may write, in bytes.",
  plugins_dir: "Folder of tool plugins to load (empty: none).",
  code_sandbox: "Where `Run this` executes Python: the `restricted` in-process sandbox or a `container`.",
  sandbox_isolation: "Process isolation for the sandbox: `auto` (bubblewrap when available), `bwrap`, or `none`.",
  web_fetch_enabled: "Allow the web_fetch tool (it only opens URLs you typed, never local or private addresses).",
  confirm_edits: "Mark each write as needing confirmation (LSP `needsConfirmation`) for editors without Cortex's own review. This extension always shows its review (see `cortex.reviewEdits`).",
  debug: "Log prompts and model replies (stays on this machine).",
  log_level: "Server log level.",
  log_format: "Server log lines on stderr: console (readable lines) or json (JSON lines, a run id on each).",
  telemetry_enabled: "Export OpenTelemetry traces and metrics of each run to otelEndpoint (off by default).",
  telemetry_include_content: "Put your text, prompts, replies and tool arguments on telemetry spans too.",
  otel_endpoint: "OTLP/HTTP endpoint that receives Cortex's telemetry (Jaeger, an OpenTelemetry Collector).",
};

/** Settings of the extension itself. */
const EXTENSION_SETTINGS = {
  "cortex.serverPath": {
    type: "string",
    default: "",
    scope: "machine",
    markdownDescription:
      "Path of the `cortex-lsp` executable. Empty: the workspace's `.venv/bin/cortex-lsp` (trusted folders only), else `cortex-lsp` on `PATH`. `~` and `${workspaceFolder}` are expanded.",
  },
  "cortex.reviewEdits": {
    type: "boolean",
    default: true,
    scope: "machine",
    markdownDescription:
      "Show every write Cortex proposes as a diff to **Accept** or **Reject** before anything touches the disk (accepted files are written and saved). Off: accepted without asking, still written and saved in one step.",
  },
  "cortex.trace.server": {
    type: "string",
    enum: ["off", "messages", "verbose"],
    default: "off",
    scope: "window",
    description: "Log the LSP messages between VS Code and cortex-lsp in the Cortex output.",
  },
};

function python() {
  if (process.env.CORTEX_PYTHON) {
    return process.env.CORTEX_PYTHON;
  }
  const venv = join(repo, ".venv", "bin", "python");
  return existsSync(venv) ? venv : "python3";
}

function serverSchema() {
  const code = [
    "import json",
    "from cortex_lsp.config import Settings, WORKSPACE_SAFE_KEYS, settings_json_schema",
    "defaults = Settings(data_dir='/unused').model_dump(mode='json')",
    "print(json.dumps({'schema': settings_json_schema(), 'defaults': defaults, 'safe': sorted(WORKSPACE_SAFE_KEYS)}))",
  ].join("\n");
  return JSON.parse(execFileSync(python(), ["-c", code], { cwd: repo, encoding: "utf8" }));
}

export function camel(snake) {
  return snake.replace(/_([a-z0-9])/g, (_, c) => c.toUpperCase());
}

function convert(prop, fallbackDefault) {
  const out = {};
  let nullable = false;
  let base = prop;
  if (Array.isArray(prop.anyOf)) {
    const nonNull = prop.anyOf.filter((p) => p.type !== "null");
    nullable = nonNull.length < prop.anyOf.length;
    base = { ...nonNull[0] };
  }
  out.type = nullable ? [base.type, "null"] : base.type;
  if (base.items) {
    out.items = base.items;
  }
  if (base.enum) {
    out.enum = base.enum;
  }
  for (const key of ["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"]) {
    if (key in prop) {
      out[key] = prop[key];
    } else if (key in base) {
      out[key] = base[key];
    }
  }
  if ("default" in prop) {
    out.default = prop.default;
  } else if (base.format === "path" || prop.format === "path") {
    // a machine-specific default (the user's data folder): empty means "the server's default"
    out.type = nullable ? out.type : [base.type, "null"];
    out.default = null;
  } else {
    out.default = fallbackDefault;
  }
  return out;
}

export function generate({ schema, defaults, safe }) {
  const safeKeys = new Set(safe);
  const properties = { ...EXTENSION_SETTINGS };
  const missing = [];
  const add = (dotted, topKey, prop, fallback) => {
    const description = DESCRIPTIONS[dotted];
    if (!description) {
      missing.push(dotted);
    }
    const name = `cortex.${dotted.split(".").map(camel).join(".")}`;
    properties[name] = {
      ...convert(prop, fallback),
      scope: safeKeys.has(topKey) ? "window" : "machine",
      markdownDescription: description ?? "",
    };
  };
  for (const [key, prop] of Object.entries(schema.properties)) {
    if (key in EXCLUDED) {
      continue;
    }
    if (prop.$ref) {
      const def = schema.$defs[prop.$ref.split("/").pop()];
      for (const [sub, subProp] of Object.entries(def.properties)) {
        add(`${key}.${sub}`, key, subProp, defaults[key]?.[sub]);
      }
    } else {
      add(key, key, prop, defaults[key]);
    }
  }
  return { configuration: { title: "Cortex", properties }, missing };
}

function main() {
  const mode = process.argv[2] ?? "--check";
  const pkgPath = join(extDir, "package.json");
  const pkg = JSON.parse(readFileSync(pkgPath, "utf8"));
  const { configuration, missing } = generate(serverSchema());
  if (missing.length) {
    console.error(`settings.mjs: no description for server setting(s): ${missing.join(", ")} (add them to DESCRIPTIONS)`);
    process.exit(1);
  }
  if (mode === "--write") {
    pkg.contributes.configuration = configuration;
    writeFileSync(pkgPath, `${JSON.stringify(pkg, null, 2)}\n`);
    console.log(`wrote ${Object.keys(configuration.properties).length} settings to package.json`);
    return;
  }
  const current = pkg.contributes?.configuration ?? {};
  const want = configuration.properties;
  const have = current.properties ?? {};
  const problems = [];
  for (const name of Object.keys(want)) {
    if (!(name in have)) {
      problems.push(`missing ${name}`);
    } else if (JSON.stringify(have[name]) !== JSON.stringify(want[name])) {
      problems.push(`differs ${name}: package.json ${JSON.stringify(have[name])} vs schema ${JSON.stringify(want[name])}`);
    }
  }
  for (const name of Object.keys(have)) {
    if (!(name in want)) {
      problems.push(`unknown to the server: ${name}`);
    }
  }
  if (problems.length) {
    console.error(`contributes.configuration is out of date with the server's settings (run npm run settings:write):\n  ${problems.join("\n  ")}`);
    process.exit(1);
  }
  console.log(`contributes.configuration matches the server's settings schema (${Object.keys(want).length} settings)`);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  main();
}

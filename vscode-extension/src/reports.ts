/**
 * Markdown for the non-agent command results: the doctor's checks and memory search hits.
 * Defensive about shapes: anything unexpected is shown as JSON rather than dropped.
 */

import { escapeMarkdown, fence } from "./answer";
import { MemoryHit, RunCodeResult } from "./protocol";

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function text(value: unknown): string {
  return typeof value === "string" ? value : value === undefined || value === null ? "" : JSON.stringify(value);
}

function checkOk(check: Record<string, unknown>): boolean | undefined {
  if (typeof check.ok === "boolean") {
    return check.ok;
  }
  if (typeof check.passed === "boolean") {
    return check.passed;
  }
  const status = typeof check.status === "string" ? check.status.toLowerCase() : "";
  if (["ok", "pass", "passed", "good"].includes(status)) {
    return true;
  }
  if (["fail", "failed", "error", "bad"].includes(status)) {
    return false;
  }
  return undefined;
}

/**
 * The `cortex.doctor` result as a checklist: failed checks first, each with its fix on the first line
 * (the server's Markdown, in the editor's words: `words` turns `ollama_base_url` into
 * `cortex.ollamaBaseUrl`), then what was found; passed checks after, one line each.
 */
export function renderDoctor(result: unknown, words: (text: string) => string = (t) => t): string {
  const checks = Array.isArray(result) ? result : isObject(result) && Array.isArray(result.checks) ? result.checks : undefined;
  if (!checks) {
    return fence(JSON.stringify(result, null, 2), "json");
  }
  const failed: string[] = [];
  const rest: string[] = [];
  for (const raw of checks) {
    if (!isObject(raw)) {
      continue;
    }
    const ok = checkOk(raw);
    const mark = ok === true ? "✔" : ok === false ? (raw.warning === true ? "⚠" : "✘") : "•";
    const name = text(raw.name ?? raw.check ?? raw.title);
    const detail = text(raw.detail ?? raw.message ?? raw.details ?? raw.value);
    const fix = text(raw.fix ?? raw.hint ?? raw.fix_hint);
    if (ok === false && fix) {
      failed.push(`- ${mark} **${escapeMarkdown(name)}** — **Fix:** ${words(fix).replace(/\s*\n\s*/g, " ")}${detail ? `\n  - Found: ${escapeMarkdown(detail)}` : ""}`);
      continue;
    }
    const line = `- ${mark} **${escapeMarkdown(name)}**${detail ? `: ${escapeMarkdown(detail)}` : ""}`;
    (ok === false ? failed : rest).push(line);
  }
  const lines = [...failed, ...rest];
  return lines.length ? lines.join("\n") : "*No checks were reported.*";
}

/** One line per memory hit, for the answer view. */
export function renderMemoryHits(query: string, hits: readonly MemoryHit[]): string {
  if (!hits.length) {
    return `No memories match “${escapeMarkdown(query)}”.`;
  }
  return hits
    .map((h) => {
      const score = typeof h.score === "number" ? ` (${h.score.toFixed(2)})` : "";
      // one list item per hit, whatever its text holds: line breaks become ↵, long text is clipped
      const oneLine = (h.text ?? h.content ?? "").replace(/\s*\n\s*/g, " ↵ ").trim();
      const clipped = oneLine.length > 300 ? `${oneLine.slice(0, 300)}…` : oneLine;
      return `- **${escapeMarkdown(h.type ?? "memory")}**${score} ${escapeMarkdown(clipped)} — id \`${h.id.replace(/`/g, "")}\``;
    })
    .join("\n");
}

/** The `cortex.run` result: output, value and error, or why the code was not run. */
export function renderRunResult(result: unknown): string {
  if (!isObject(result)) {
    return fence(JSON.stringify(result, null, 2), "json");
  }
  const r = result as RunCodeResult;
  if (r.ran === false) {
    return `Not run: ${escapeMarkdown(text(r.reason) || "the sandbox refused it")}`;
  }
  const parts: string[] = [];
  const summary = text(r.summary).trim();
  if (summary) {
    parts.push(summaryLine(summary));
  }
  if (r.stdout) {
    parts.push(`**Output**\n\n${fence(r.stdout)}`);
  }
  if (r.stderr) {
    parts.push(`**Errors**\n\n${fence(r.stderr)}`);
  }
  if (r.value !== undefined && r.value !== null) {
    parts.push(`**Value:** \`${text(r.value).replace(/`/g, "'")}\``);
  }
  if (r.error) {
    parts.push(`**Error:** ${escapeMarkdown(text(r.error))}`);
  }
  if (!summary && typeof r.duration_ms === "number") {
    parts.push(`*ran in ${(r.duration_ms / 1000).toFixed(2)} s*`);
  }
  return parts.length ? parts.join("\n\n") : "*Ran with no output.*";
}

/** The server's one-line summary, capitalised: its `name` spans stay code, the rest is escaped text. */
function summaryLine(summary: string): string {
  const line = summary.charAt(0).toUpperCase() + summary.slice(1);
  return line
    .split("`")
    .map((piece, i) => (i % 2 === 1 && piece ? `\`${piece}\`` : escapeMarkdown(piece)))
    .join("");
}

/**
 * The state behind what runs.ts shows, free of the VS Code API (unit-tested): whether the model server
 * is down (one notice per outage, cleared by the next answered run), the status-bar item's look for
 * that state, and a progress notification that opens only for a run still working after a moment (VS
 * Code keeps a progress notification on screen at least 800 ms after it opened, so one opened for a
 * 0.3 s answer outlived the answer).
 */

/** Open the progress notification only when a run is still working after this long. */
export const PROGRESS_NOTICE_DELAY_MS = 1000;

export const MODEL_DOWN_COMMAND = "cortex.ui.modelDown";
export const STOP_COMMAND = "cortex.ui.stop";

/** An outage as the user is told about it: where Cortex looked and which setting to check. */
export interface ModelOutage {
  where: string;
  setting: string;
}

/** A run's result as far as the model's health goes. */
export interface RunOutcome {
  stop_reason?: unknown;
  backend?: unknown;
  answer?: unknown;
}

export type HealthChange = "down" | "recovered" | undefined;

/** The model server's state from the runs' results: down from a `model_unavailable` run until one answers. */
export class ModelHealth {
  private outage: ModelOutage | undefined;

  get current(): ModelOutage | undefined {
    return this.outage;
  }

  /** "down" when an outage starts (notify once), "recovered" when a run answers after one, else undefined. */
  observe(result: RunOutcome | undefined): HealthChange {
    if (!result || typeof result.stop_reason !== "string") {
      return undefined;
    }
    if (result.stop_reason === "model_unavailable" || (result.stop_reason === "error" && lostConnection(result.answer))) {
      const first = this.outage === undefined;
      this.outage = describeOutage(result);
      return first ? "down" : undefined;
    }
    if (result.stop_reason === "answered" && this.outage) {
      this.outage = undefined;
      return "recovered";
    }
    return undefined;
  }
}

/** A model error that says the model server went away (mid-stream too), not one it answered with. */
const CONNECTION_LOST = /closed the connection|connection to .{1,80} failed|not answering|RemoteProtocolError|ConnectError|ReadError/i;

export function lostConnection(answer: unknown): boolean {
  return typeof answer === "string" && CONNECTION_LOST.test(answer);
}

export function describeOutage(result: RunOutcome): ModelOutage {
  const setting = String(result.backend ?? "").includes("openai") ? "cortex.openaiBaseUrl" : "cortex.ollamaBaseUrl";
  const url = typeof result.answer === "string" ? /https?:\/\/[^\s)`'"]+/.exec(result.answer)?.[0] : undefined;
  return { where: url ? url.replace(/[.,;]+$/, "") : "", setting };
}

/** The error notification's text for an outage. */
export function outageMessage(outage: ModelOutage): string {
  const where = outage.where ? ` at ${outage.where}` : "";
  // a notification is plain text: the setting's name without Markdown backticks
  return `Cortex: the model server${where} is not answering. Start it, or check the setting ${outage.setting}.`;
}

export interface StatusState {
  busy: boolean;
  model: string;
  outage: ModelOutage | undefined;
  /** no language server could be started: why (shown until one starts) */
  serverProblem?: string;
}

export const SERVER_SETTINGS_COMMAND = "cortex.ui.serverMissing";

export interface StatusLook {
  text: string;
  tooltip: string;
  command: string;
  /** shown in the theme's error colours */
  error: boolean;
}

/** The status-bar item: busy (spinner, click stops), model down (error, click shows the fixes), or idle. */
export function statusLook(state: StatusState, chatCommand: string): StatusLook {
  const model = state.model ? ` ${state.model}` : "";
  if (state.serverProblem) {
    return { text: "$(error) Cortex: no server", tooltip: `${state.serverProblem} Click for the fix.`, command: SERVER_SETTINGS_COMMAND, error: true };
  }
  if (state.busy) {
    return { text: `$(sync~spin) Cortex${model}`, tooltip: "Cortex is working: click to stop", command: STOP_COMMAND, error: false };
  }
  if (state.outage) {
    const where = state.outage.where ? ` at ${state.outage.where}` : "";
    return {
      text: "$(error) Cortex: model down",
      tooltip: `The model server${where} is not answering (check the setting ${state.outage.setting}): click for Open Settings / Run Doctor. Cleared by the next answer.`,
      command: MODEL_DOWN_COMMAND,
      error: true,
    };
  }
  return { text: `$(comment-discussion) Cortex${model}`, tooltip: "Cortex: open the chat", command: chatCommand, error: false };
}

/**
 * Call `open` once `work` has been running for `delayMs` (never if it settles sooner). Returns a function
 * that stops the wait (also called when `work` settles).
 */
export function openWhenSlow(work: Promise<unknown>, delayMs: number, open: () => void): () => void {
  let timer: ReturnType<typeof setTimeout> | undefined = setTimeout(() => {
    timer = undefined;
    open();
  }, delayMs);
  const stop = (): void => {
    if (timer !== undefined) {
      clearTimeout(timer);
      timer = undefined;
    }
  };
  work.then(stop, stop);
  return stop;
}

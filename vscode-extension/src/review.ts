/**
 * The review of every write: Cortex's `workspace/applyEdit` requests land here instead of going
 * straight into the workspace. The user sees a diff (the file before → after; a new file against
 * empty) titled with what it does and whether they asked for it, and decides in one action: the chat
 * view's review card (Accept / Reject: the durable place, it stays until the decision), the ✓/✗ in the
 * diff's title bar, the keybindings, or closing the diff (= Reject). A progress notification says a
 * review is waiting: it does not hide itself and it closes when the review is decided (its Cancel
 * rejects). Accepted files are written and saved at once, so nothing is left unsaved and no empty file
 * appears before the user agrees (the chat links each one; opening it here would change the file the
 * user works in, which the chat's context follows); rejected ones leave nothing on disk. The
 * wait has no time-out: it ends with the user's choice or when the run is cancelled. With
 * `cortex.reviewEdits` off the same writer runs without asking.
 */

import * as path from "path";
import * as vscode from "vscode";
import { applyTextEdits, describePlan, planEdit, PlannedFile } from "./editPlan";
import { reviewWords, writeAnnotation } from "./reviewText";

export const REVIEW_SCHEME = "cortex-review";
export const REVIEW_CONTEXT = "cortex.reviewing";

export interface ApplyEditParams {
  label?: string;
  edit: unknown;
}

export interface ApplyEditResult {
  applied: boolean;
  failureReason?: string;
}

export type Decision = "accept" | "reject" | "cancelled";

/** A write waiting for the user's decision (the chat view shows it as a card with Accept / Reject). */
export interface PendingReview {
  key: number;
  /** "create notes.txt", "replace calc.py" */
  action: string;
  /** the annotation's description ("You did not ask for this change: …"), or "" */
  description: string;
  asked: boolean | undefined;
}

interface Prepared {
  uri: vscode.Uri;
  file: PlannedFile;
  before: string;
  after: string;
  open: vscode.TextDocument | undefined;
}

const base = (uri: vscode.Uri): string => path.posix.basename(uri.path);

async function existsOnDisk(uri: vscode.Uri): Promise<boolean> {
  try {
    await vscode.workspace.fs.stat(uri);
    return true;
  } catch {
    return false;
  }
}

/** Is `tab` a diff of review `key`? */
function isReviewTab(tab: vscode.Tab, key: number): boolean {
  const input = tab.input;
  return input instanceof vscode.TabInputTextDiff && input.modified.scheme === REVIEW_SCHEME && input.modified.path.startsWith(`/${key}/`);
}

export class EditReviewer implements vscode.TextDocumentContentProvider, vscode.Disposable {
  private readonly contents = new Map<string, string>();
  private readonly disposables: vscode.Disposable[] = [];
  private decide: ((d: Decision) => void) | undefined;
  private pendingReview: PendingReview | undefined;
  private queue: Promise<unknown> = Promise.resolve();
  private counter = 0;
  private readonly changed = new vscode.EventEmitter<PendingReview | undefined>();
  /** a review starts (its card) or ends (undefined) */
  readonly onDidChangeReview = this.changed.event;

  constructor(
    private readonly log: (line: string) => void,
    private readonly reviewEnabled: () => boolean,
  ) {
    this.disposables.push(vscode.workspace.registerTextDocumentContentProvider(REVIEW_SCHEME, this));
  }

  dispose(): void {
    this.decide?.("reject");
    for (const d of this.disposables) {
      d.dispose();
    }
    this.changed.dispose();
  }

  get pending(): PendingReview | undefined {
    return this.pendingReview;
  }

  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.contents.get(uri.toString()) ?? "";
  }

  /** The ✓ in the diff's title bar (command `cortex.ui.acceptEdit`). */
  accept(): void {
    this.decide?.("accept");
  }

  /** The ✗ in the diff's title bar (command `cortex.ui.rejectEdit`). */
  reject(): void {
    this.decide?.("reject");
  }

  /** The chat card's buttons: they decide only the review they were shown for. */
  decideFor(key: number, decision: "accept" | "reject"): void {
    if (this.pendingReview?.key === key) {
      this.decide?.(decision);
    }
  }

  /** One `workspace/applyEdit` from the server; reviews run one at a time. */
  handle(params: ApplyEditParams, token: vscode.CancellationToken): Promise<ApplyEditResult> {
    const run = this.queue.then(() => this.handleOne(params, token));
    this.queue = run.catch(() => undefined);
    return run;
  }

  private async handleOne(params: ApplyEditParams, token: vscode.CancellationToken): Promise<ApplyEditResult> {
    const plan = planEdit(params.edit);
    if (!plan.ok) {
      return { applied: false, failureReason: `Cortex could not read the edit: ${plan.reason}` };
    }
    const prepared: Prepared[] = [];
    for (const file of plan.files) {
      const uri = vscode.Uri.parse(file.uri);
      const open = vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri.toString());
      const exists = (open !== undefined && !open.isUntitled) || (await existsOnDisk(uri));
      if (file.create && exists && !file.overwrite) {
        return { applied: false, failureReason: `${base(uri)} already exists` };
      }
      if (open && file.version !== null && open.version !== file.version) {
        return { applied: false, failureReason: `${base(uri)} changed in the editor since Cortex read it` };
      }
      const before = open ? open.getText() : exists ? new TextDecoder().decode(await vscode.workspace.fs.readFile(uri)) : "";
      prepared.push({ uri, file, before, after: applyTextEdits(before, file.edits), open });
    }
    const what = params.label || `Cortex: ${describePlan(plan.files, (u) => base(vscode.Uri.parse(u)))}`;
    const description = writeAnnotation(params.edit)?.description ?? "";
    if (this.reviewEnabled()) {
      const decision = await this.review(prepared, description, token);
      this.log(`review of "${what}": ${decision}`);
      if (decision === "reject") {
        return { applied: false, failureReason: "you rejected it in the review" };
      }
      if (decision === "cancelled") {
        return { applied: false, failureReason: "the run was cancelled during the review" };
      }
    }
    const written: string[] = [];
    try {
      for (const p of prepared) {
        await this.write(p);
        written.push(base(p.uri));
      }
    } catch (err) {
      const partly = written.length ? ` (written before the failure: ${written.join(", ")})` : "";
      return { applied: false, failureReason: `writing failed: ${String(err)}${partly}` };
    }
    return { applied: true };
  }

  private async review(prepared: Prepared[], description: string, token: vscode.CancellationToken): Promise<Decision> {
    if (token.isCancellationRequested) {
      return "cancelled";
    }
    const key = ++this.counter;
    const shown: string[] = [];
    const actions: string[] = [];
    let asked: boolean | undefined;
    for (const p of prepared) {
      const name = base(p.uri);
      const left = vscode.Uri.from({ scheme: REVIEW_SCHEME, path: `/${key}/before/${name}` });
      const right = vscode.Uri.from({ scheme: REVIEW_SCHEME, path: `/${key}/after/${name}` });
      this.contents.set(left.toString(), p.before);
      this.contents.set(right.toString(), p.after);
      shown.push(left.toString(), right.toString());
      const words = reviewWords(p.file.create, name, description);
      actions.push(words.action);
      asked = words.asked;
      await vscode.commands.executeCommand("vscode.diff", left, right, words.tabTitle, { preview: false });
    }
    const review: PendingReview = { key, action: actions.join("; "), description, asked };
    this.pendingReview = review;
    this.changed.fire(review);
    await vscode.commands.executeCommand("setContext", REVIEW_CONTEXT, true);
    const listeners: vscode.Disposable[] = [];
    let settle: () => void = () => undefined;
    const settled = new Promise<void>((r) => (settle = r));
    const decision = await new Promise<Decision>((resolve) => {
      this.decide = resolve;
      listeners.push(token.onCancellationRequested(() => resolve("cancelled")));
      // closing the diff is a decision: the write is rejected, the run goes on
      listeners.push(vscode.window.tabGroups.onDidChangeTabs((e) => {
        if (e.closed.some((tab) => isReviewTab(tab, key))) {
          resolve("reject");
        }
      }));
      // a notification that stays while the review waits and closes when it is decided
      const warning = asked === false ? `⚠ ${description} ` : "";
      void vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title: `Cortex wants to ${review.action}, waiting for your review`, cancellable: true },
        (progress, cancel) => {
          progress.report({ message: `${warning}Accept or Reject in the chat or in the diff's title bar (Cancel rejects).` });
          listeners.push(cancel.onCancellationRequested(() => resolve("reject")));
          return settled;
        },
      );
    });
    settle();
    for (const l of listeners) {
      l.dispose();
    }
    this.decide = undefined;
    this.pendingReview = undefined;
    this.changed.fire(undefined);
    await vscode.commands.executeCommand("setContext", REVIEW_CONTEXT, false);
    await this.closeDiffs(key);
    for (const k of shown) {
      this.contents.delete(k);
    }
    return decision;
  }

  private async closeDiffs(key: number): Promise<void> {
    const tabs: vscode.Tab[] = [];
    for (const group of vscode.window.tabGroups.all) {
      for (const tab of group.tabs) {
        if (isReviewTab(tab, key)) {
          tabs.push(tab);
        }
      }
    }
    if (tabs.length) {
      await vscode.window.tabGroups.close(tabs).then(undefined, () => undefined);
    }
  }

  /** Write one accepted file and save it: an open document is edited (undo works) and saved. */
  private async write(p: Prepared): Promise<void> {
    if (p.open && !p.open.isClosed) {
      const whole = new vscode.Range(p.open.positionAt(0), p.open.positionAt(p.open.getText().length));
      const edit = new vscode.WorkspaceEdit();
      edit.replace(p.uri, whole, p.after);
      if (!(await vscode.workspace.applyEdit(edit))) {
        throw new Error(`the editor did not apply the change to ${base(p.uri)}`);
      }
      if (!(await p.open.save())) {
        throw new Error(`${base(p.uri)} could not be saved`);
      }
      return;
    }
    if (p.file.create && !p.file.overwrite && (await existsOnDisk(p.uri))) {
      throw new Error(`${base(p.uri)} appeared while you reviewed it`);
    }
    await vscode.workspace.fs.createDirectory(vscode.Uri.joinPath(p.uri, ".."));
    await vscode.workspace.fs.writeFile(p.uri, new TextEncoder().encode(p.after));
  }
}

/**
 * The review of every write: Cortex's `workspace/applyEdit` requests land here instead of going
 * straight into the workspace. The user sees a diff (the file before → after; a new file against
 * empty) and accepts or rejects it in one action (the notification's buttons, or the ✓/✗ in the diff's
 * title bar). Accepted files are written and saved at once, so nothing is left unsaved and no empty
 * file appears before the user agrees; rejected ones leave nothing on disk. The wait has no time-out:
 * it ends with the user's choice or when the run is cancelled. With `cortex.reviewEdits` off the same
 * writer runs without asking.
 */

import * as path from "path";
import * as vscode from "vscode";
import { applyTextEdits, describePlan, planEdit, PlannedFile } from "./editPlan";

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

type Decision = "accept" | "reject" | "cancelled";

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

export class EditReviewer implements vscode.TextDocumentContentProvider, vscode.Disposable {
  private readonly contents = new Map<string, string>();
  private readonly disposables: vscode.Disposable[] = [];
  private decide: ((d: Decision) => void) | undefined;
  private queue: Promise<unknown> = Promise.resolve();
  private counter = 0;

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
    if (this.reviewEnabled()) {
      const decision = await this.review(prepared, what, token);
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

  private async review(prepared: Prepared[], what: string, token: vscode.CancellationToken): Promise<Decision> {
    if (token.isCancellationRequested) {
      return "cancelled";
    }
    const key = ++this.counter;
    const shown: string[] = [];
    for (const p of prepared) {
      const name = base(p.uri);
      const left = vscode.Uri.from({ scheme: REVIEW_SCHEME, path: `/${key}/before/${name}` });
      const right = vscode.Uri.from({ scheme: REVIEW_SCHEME, path: `/${key}/after/${name}` });
      this.contents.set(left.toString(), p.before);
      this.contents.set(right.toString(), p.after);
      shown.push(left.toString(), right.toString());
      const title = `${p.file.create ? "New file" : "Change"} ${name} — review (Cortex)`;
      await vscode.commands.executeCommand("vscode.diff", left, right, title, { preview: false });
    }
    await vscode.commands.executeCommand("setContext", REVIEW_CONTEXT, true);
    let cancelled: vscode.Disposable | undefined;
    const decision = await new Promise<Decision>((resolve) => {
      this.decide = resolve;
      cancelled = token.onCancellationRequested(() => resolve("cancelled"));
      void vscode.window
        .showInformationMessage(`${what}: review the diff, then Accept or Reject.`, "Accept", "Reject")
        .then((choice) => resolve(choice === "Accept" ? "accept" : "reject"));
    });
    cancelled?.dispose();
    this.decide = undefined;
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
        const input = tab.input;
        if (input instanceof vscode.TabInputTextDiff && input.modified.scheme === REVIEW_SCHEME
            && input.modified.path.startsWith(`/${key}/`)) {
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

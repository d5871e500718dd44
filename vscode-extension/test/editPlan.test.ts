import * as assert from "assert";
import { applyTextEdits, describePlan, offsetAt, planEdit } from "../src/editPlan";

const create = (uri: string, text: string) => ({
  documentChanges: [
    { kind: "create", uri, options: { overwrite: false, ignoreIfExists: false }, annotationId: "cortex-write" },
    {
      textDocument: { uri, version: null },
      edits: [{ range: { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } }, newText: text, annotationId: "cortex-write" }],
    },
  ],
  changeAnnotations: { "cortex-write": { label: "Cortex: create notes.txt", needsConfirmation: true } },
});

suite("edit plan (the review's reading of workspace/applyEdit)", () => {
  test("a create with its text is one new file", () => {
    const plan = planEdit(create("file:///ws/notes.txt", "hello\n"));
    assert.ok(plan.ok);
    if (!plan.ok) {return;}
    assert.strictEqual(plan.files.length, 1);
    const [file] = plan.files;
    assert.strictEqual(file.create, true);
    assert.strictEqual(file.overwrite, false);
    assert.strictEqual(applyTextEdits("", file.edits), "hello\n");
    assert.strictEqual(describePlan(plan.files, (u) => u.split("/").pop() ?? u), "create notes.txt");
  });

  test("a whole-document replace applies to the current text", () => {
    const before = "a\nbb\nccc";
    const plan = planEdit({
      documentChanges: [{
        textDocument: { uri: "file:///ws/a.py", version: 4 },
        edits: [{ range: { start: { line: 0, character: 0 }, end: { line: 2, character: 3 } }, newText: "new\n" }],
      }],
    });
    assert.ok(plan.ok);
    if (!plan.ok) {return;}
    assert.strictEqual(plan.files[0].version, 4);
    assert.strictEqual(applyTextEdits(before, plan.files[0].edits), "new\n");
  });

  test("plain `changes` and several edits apply back to front", () => {
    const plan = planEdit({
      changes: {
        "file:///ws/b.txt": [
          { range: { start: { line: 0, character: 0 }, end: { line: 0, character: 1 } }, newText: "X" },
          { range: { start: { line: 1, character: 2 }, end: { line: 1, character: 2 } }, newText: "!" },
        ],
      },
    });
    assert.ok(plan.ok);
    if (!plan.ok) {return;}
    assert.strictEqual(applyTextEdits("ab\ncd", plan.files[0].edits), "Xb\ncd!");
  });

  test("renames, deletes and garbage are refused, not half-read", () => {
    assert.deepStrictEqual(planEdit({ documentChanges: [{ kind: "delete", uri: "file:///x" }] }), {
      ok: false,
      reason: "a delete operation (Cortex only creates and edits files)",
    });
    assert.strictEqual(planEdit(null).ok, false);
    assert.strictEqual(planEdit({}).ok, false);
    assert.strictEqual(planEdit({ documentChanges: [{ textDocument: { uri: "file:///x" }, edits: [{}] }] }).ok, false);
  });

  test("positions clamp to the line and the text", () => {
    assert.strictEqual(offsetAt("ab\ncd", { line: 0, character: 99 }), 2);
    assert.strictEqual(offsetAt("ab\ncd", { line: 9, character: 0 }), 5);
    assert.strictEqual(offsetAt("ab\ncd", { line: 1, character: 1 }), 4);
  });
});

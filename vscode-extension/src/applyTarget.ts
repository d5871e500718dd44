/**
 * *Apply to file* for a code block in an answer: which file the block names (the fence's info string,
 * `python calc.py` / `py:calc.py` / `title="calc.py"`, or a first-line comment `# file: calc.py`), and
 * which part of the file it replaces (a Python `def`/`class` block that the file already has, by name).
 * Plain TypeScript (no vscode), unit-tested.
 */

import { Range } from "./protocol";

const FILE_LIKE = /^[\w.\-/]*[\w-]\.[A-Za-z][A-Za-z0-9]{0,7}$/;

function fileLike(word: string | undefined): string | undefined {
  const w = (word ?? "").replace(/^["'`]|["'`]$/g, "").replace(/^\.\//, "");
  return w && FILE_LIKE.test(w) && !w.startsWith("/") && !w.split("/").includes("..") ? w : undefined;
}

/** The file a code block names, relative to the folder, or undefined. */
export function namedFile(info: string, code: string): string | undefined {
  const words = info.trim().split(/\s+/).filter(Boolean);
  const title = /(?:title|file|filename|path)=("[^"]+"|'[^']+'|\S+)/.exec(info)?.[1];
  const fromInfo = fileLike(title) ?? fileLike(/^[\w+-]+:(.+)$/.exec(words[0] ?? "")?.[1]) ?? fileLike(words[1]);
  if (fromInfo) {
    return fromInfo;
  }
  const first = code.split("\n", 1)[0].trim();
  const comment = /^(?:#|\/\/|--|<!--)\s*(?:(?:file(?:path|name)?|path)\s*:\s*)?(\S+)\s*(?:-->)?$/i.exec(first);
  return comment ? fileLike(comment[1]) : undefined;
}

/** The code without a leading `# filepath: x` label line (the label names the file; it is not code). */
export function withoutFileLabel(code: string): string {
  return code.replace(/^(?:#|\/\/)\s*file(?:path|name)?\s*:\s*\S+[ \t]*\n/i, "");
}

const DEFINITION = /^(?:async\s+def|def|class)\s+([A-Za-z_]\w*)/;

/**
 * The range of the top-level Python definition (`def`/`class`, with its decorators) in `fileText` that
 * the block redefines, or undefined (the block then replaces the whole file or the selection).
 */
export function definitionRange(fileText: string, code: string): Range | undefined {
  const codeLines = code.split("\n");
  const head = codeLines.find((l) => l.trim() && !l.trim().startsWith("@") && !l.trim().startsWith("#"));
  const name = head ? DEFINITION.exec(head)?.[1] : undefined;
  if (!name) {
    return undefined;
  }
  const lines = fileText.split("\n");
  const at = lines.findIndex((l) => DEFINITION.exec(l)?.[1] === name);
  if (at < 0) {
    return undefined;
  }
  let start = at;
  while (start > 0 && lines[start - 1].startsWith("@")) {
    start--;
  }
  let last = at;
  for (let i = at + 1; i < lines.length; i++) {
    const line = lines[i];
    if (!line.trim()) {
      continue;
    }
    if (!/^\s/.test(line)) {
      break;
    }
    last = i;
  }
  return { start: { line: start, character: 0 }, end: { line: last, character: lines[last].length } };
}

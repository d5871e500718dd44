/**
 * The words of a review: what the write does ("create notes.txt" / "replace calc.py") and whether the
 * user asked for it, from the edit's change annotation (label "Cortex: create NAME", description
 * "You asked for this change." or "You did not ask for this change: <why>."). Plain TypeScript.
 */

export const WRITE_ANNOTATION = "cortex-write";

export interface ReviewWords {
  /** "create notes.txt", "replace calc.py" */
  action: string;
  /** the annotation's description, or "" */
  description: string;
  /** true/false from the description; undefined when the server did not say */
  asked: boolean | undefined;
  /** the diff's tab title */
  tabTitle: string;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** The annotation's label and description, if the edit carries Cortex's write annotation. */
export function writeAnnotation(edit: unknown): { label: string; description: string } | undefined {
  const annotations = isRecord(edit) && isRecord(edit.changeAnnotations) ? edit.changeAnnotations : undefined;
  const a = annotations ? annotations[WRITE_ANNOTATION] ?? Object.values(annotations)[0] : undefined;
  if (!isRecord(a)) {
    return undefined;
  }
  return { label: typeof a.label === "string" ? a.label : "", description: typeof a.description === "string" ? a.description : "" };
}

/** Whether the description says the user asked (undefined: it does not say). */
export function askedFrom(description: string): boolean | undefined {
  if (/^\s*You did not ask/i.test(description)) {
    return false;
  }
  if (/^\s*You asked/i.test(description)) {
    return true;
  }
  return undefined;
}

/** The review's words for one file (`create`: a new file) with the edit's annotation description. */
export function reviewWords(create: boolean, name: string, description: string): ReviewWords {
  const action = `${create ? "create" : "replace"} ${name}`;
  const asked = askedFrom(description);
  const whose = asked === false ? "⚠ NOT ASKED — " : asked === true ? "asked — " : "";
  return { action, description, asked, tabTitle: `${whose}Cortex: ${action} (review)` };
}

import { digest, validate, type KeelError } from "@keel/core";
import { err, ok, type Result } from "neverthrow";
import { z } from "zod";
import { EvidenceSnapshotSchema, type EvidenceSnapshot } from "./evidence.js";

/**
 * What evidence brought to a `step` does to the run's evidence:
 * - `same`: nothing changes;
 * - `added`: it only fills what the run was missing (an empty diff, test output, context,
 *   revision or file selection, or a validation status that was `not_run`): the stages already
 *   done stay done, their packets stay valid;
 * - `refreshed`: the same file selections read again after the files changed on disk (the text
 *   fields as they were): the current segment restarts on the fresh excerpts;
 * - `changed`: anything else, which only a checkpoint takes (the implementation checkpoint's
 *   `accept`, or a `revise`). `fields` names what changed.
 */
export type EvidenceChange = { kind: "same" } | { kind: "added"; fields: string[] } | { kind: "refreshed"; files: string[] } | { kind: "changed"; fields: string[] };

const TEXT_FIELDS = ["context", "diff", "testOutput", "revision"] as const;

const InputSchema = z.strictObject({ previous: EvidenceSnapshotSchema, next: EvidenceSnapshotSchema });

/**
 * Classifies, purely, how `next` (the run's evidence after a step's intake) differs from
 * `previous`; see {@link EvidenceChange}. Rules, in order: equal snapshots are `same`; a changed
 * non-empty text field or validation status other than `not_run` makes it `changed`, and so do
 * different file selections (paths or ranges) over a non-empty selection; the same selections
 * with other excerpts are `refreshed` when nothing else changed; what remains filled empty fields
 * (`added`). `invalid_input` for a snapshot of the wrong shape.
 *
 * @example
 * ```ts
 * classifyEvidenceChange(previous, { ...previous, diff: "+fix" }); // { kind: "added", fields: ["diff"] } when previous.diff was ""
 * ```
 */
export function classifyEvidenceChange(previous: EvidenceSnapshot, next: EvidenceSnapshot): Result<EvidenceChange, KeelError> {
  const checked = validate(InputSchema, { previous, next }, "evidence change");
  if (checked.isErr()) return err(checked.error);
  if (digest(previous) === digest(next)) return ok({ kind: "same" });
  const added: string[] = [];
  const changed: string[] = [];
  for (const field of TEXT_FIELDS) {
    if (previous[field] === next[field]) continue;
    (previous[field] === "" ? added : changed).push(field);
  }
  if (previous.validationStatus !== next.validationStatus) (previous.validationStatus === "not_run" ? added : changed).push("validationStatus");
  const selection = (snapshot: EvidenceSnapshot) => snapshot.files.map((file) => `${file.path}:${file.firstLine}-${file.lastLine}`);
  const sameSelection = digest(selection(previous)) === digest(selection(next));
  const refreshed = sameSelection ? next.files.filter((file, index) => file.hash !== previous.files[index]!.hash || file.text !== previous.files[index]!.text).map((file) => file.path) : [];
  if (!sameSelection) (previous.files.length === 0 ? added : changed).push("files");
  if (changed.length > 0) return ok({ kind: "changed", fields: changed });
  if (refreshed.length > 0) return added.length > 0 ? ok({ kind: "changed", fields: [...added, "files"] }) : ok({ kind: "refreshed", files: refreshed });
  return ok({ kind: "added", fields: added });
}

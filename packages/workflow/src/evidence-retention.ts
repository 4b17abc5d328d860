import { digest } from "@keel/core";
import type { Evidence, EvidenceSnapshot } from "./evidence.js";
import type { JournalResult } from "./run-journal.js";

/**
 * What the store keeps of a run's evidence and of its calls' results:
 * - `full` (the default): the evidence (text and file excerpts) and every call's answer, so a
 *   caller keeps nothing; a step rebuilds packets from the journal, a crashed step's journaled
 *   calls replay for free;
 * - `digests`: their digests only, never raw text or source excerpts. The caller keeps the
 *   evidence and the packets and passes them back (`step.evidence`, `step.packets`); each is
 *   checked against its digest. File excerpts are read again from the source root.
 */
export type Retention = "full" | "digests";

/** The retention modes. */
export const RETENTIONS = ["full", "digests"] as const;

/** The text fields of evidence a `digests` run keeps as digests. */
export const HELD_TEXT_FIELDS = ["context", "diff", "testOutput"] as const;

/** A text as a `digests` run keeps it: `""` stays `""`, anything else becomes its digest. */
export function holdText(text: string): string {
  return text === "" ? "" : digest(text);
}

/**
 * Evidence as a `digests` run keeps it, purely: the free text fields and every excerpt's text as
 * their digests (an empty field stays empty); the validation status, the revision, the file
 * selections and the files' hashes as they are.
 */
export function holdEvidence(snapshot: EvidenceSnapshot): EvidenceSnapshot {
  return {
    ...snapshot,
    context: holdText(snapshot.context),
    diff: holdText(snapshot.diff),
    testOutput: holdText(snapshot.testOutput),
    files: snapshot.files.map((file) => ({ ...file, text: holdText(file.text) })),
  };
}

/**
 * Merges what a caller brought onto held evidence, purely: the fields it gives are held anew
 * (from `read`, the intake of those fields), the others keep their held digests. Files given are
 * held from `read`; files not given keep the held excerpts.
 */
export function mergeHeld(held: EvidenceSnapshot, given: Evidence, read: EvidenceSnapshot): EvidenceSnapshot {
  const fresh = holdEvidence(read);
  return {
    context: given.context !== undefined ? fresh.context : held.context,
    diff: given.diff !== undefined ? fresh.diff : held.diff,
    testOutput: given.testOutput !== undefined ? fresh.testOutput : held.testOutput,
    validationStatus: given.validationStatus ?? held.validationStatus,
    revision: given.revision ?? held.revision,
    files: given.files !== undefined ? fresh.files : held.files,
  };
}

/** The held text fields a caller must pass back for a step to have the whole evidence: held, not empty, not given. */
export function missingHeld(held: EvidenceSnapshot, given: Evidence): string[] {
  return HELD_TEXT_FIELDS.filter((field) => held[field] !== "" && given[field] === undefined);
}

/** Held fields the caller passed back with other text than the run holds (a digest that does not match). */
export function mismatchedHeld(held: EvidenceSnapshot, given: Evidence): string[] {
  return HELD_TEXT_FIELDS.filter((field) => held[field] !== "" && given[field] !== undefined && holdText(given[field]!) !== held[field]);
}

/** A call's result as a `digests` run journals it: the answer's text as its digest in `textDigest`, the text empty. */
export function holdResult(result: JournalResult): JournalResult {
  if (!result.ok) return result;
  return { ...result, text: "", textDigest: digest(result.text) };
}

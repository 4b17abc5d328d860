import { z } from "zod";

/** The format version of a transcript's head document this version writes and reads. */
export const TRANSCRIPT_FORMAT_VERSION = 1;

/** Where a fork came from: a stable session id and the entry it branched from. */
export const TranscriptParentSchema = z.strictObject({
  sessionId: z.string().min(1),
  entryId: z.string().min(1).nullable(),
});

/** Where a fork came from. */
export type TranscriptParent = z.output<typeof TranscriptParentSchema>;

/**
 * The head document of a transcript (`["transcripts", sessionId, "head"]`): the active leaf and
 * the format version. The leaf is the head's `leafId` unless entries were appended after
 * `atSeq`: then it is the last entry appended (an append moves the leaf without a second write,
 * so a crash between the two cannot leave them disagreeing).
 */
export const TranscriptHeadSchema = z.looseObject({
  format: z.literal("keel.transcript"),
  formatVersion: z.number().int().positive(),
  sessionId: z.string().min(1),
  leafId: z.string().min(1).nullable(),
  atSeq: z.number().int().nonnegative(),
  parent: TranscriptParentSchema.optional(),
  createdAt: z.string(),
});

/** The head document of a transcript. */
export type TranscriptHead = z.output<typeof TranscriptHeadSchema>;

/** The log key of a session's entries. */
export function entriesKey(sessionId: string): string[] {
  return ["transcripts", sessionId];
}

/** The document key of a session's head. */
export function headKey(sessionId: string): string[] {
  return ["transcripts", sessionId, "head"];
}

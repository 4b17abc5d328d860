import { type Clock, type EventBus, KeelError, isSafeName } from "@keel/core";
import type { KeelStore } from "@keel/store";
import { keelStoreSchema } from "@keel/store/kit";
import { err, ok, type Result } from "neverthrow";
import { z } from "zod";
import { EntryIdSchema, isIsoTimestamp } from "./entry-schema.js";
import { type TranscriptParent, TranscriptParentSchema } from "./transcript-head.js";

/**
 * The options of `openTranscript` and of a transcript's `fork`, and their zod schemas (strict:
 * an unknown option is refused). `importPiSessionToStore` picks its store, clock and events
 * options from here, so every entry point means the same by them.
 */

/** Options of `openTranscript`. */
export interface OpenTranscriptOptions {
  /** Any Keel store: entries go to its log store, the head to its document store. */
  store: KeelStore;
  /** The session id (a safe name). */
  sessionId: string;
  /** Create the session when it does not exist (default `true`); `false` answers `not_found`. */
  create?: boolean;
  /** Only when creating: the session this one was forked from. */
  parent?: TranscriptParent;
  /** The clock of entry timestamps (default the system clock). */
  clock?: Clock;
  /** Where `transcript.compacted` and `transcript.navigated` events go. */
  events?: EventBus;
  /** Makes entry ids (default `newId()`, a ULID). */
  newEntryId?: () => string;
  /**
   * Only for a new session: keep entries in memory until the first assistant message, then write
   * them all in one append (pi's behaviour: an aborted first call leaves no session behind).
   * Default `false`: every append is durable at once, so a crash never loses the prompt.
   */
  deferUntilAssistant?: boolean;
}

/** The `store` option of every transcript entry point: the log and document ports it reads and writes. */
export const TranscriptStoreSchema = keelStoreSchema(["docs", "logs"]) as z.ZodType<KeelStore>;
/** A session id: a safe name. */
export const SessionIdSchema = z.string().refine(isSafeName, "sessionId must be a safe name: letters, digits, '.', '_' or '-', at most 128");

/** The options of `openTranscript`, strict: an unknown option is refused. */
export const OpenTranscriptOptionsSchema = z.strictObject({
  store: TranscriptStoreSchema,
  sessionId: SessionIdSchema,
  create: z.boolean().optional(),
  parent: TranscriptParentSchema.optional(),
  clock: z.custom<Clock>((value) => typeof (value as Clock | undefined)?.now === "function", "clock must have now()").optional(),
  events: z.custom<EventBus>((value) => typeof (value as EventBus | undefined)?.emit === "function", "events must be an EventBus").optional(),
  newEntryId: z.custom<() => string>((value) => typeof value === "function", "newEntryId must be a function").optional(),
  deferUntilAssistant: z.boolean().optional(),
});

/** The options of a transcript's `fork`, strict. */
export const ForkOptionsSchema = z.strictObject({
  sessionId: SessionIdSchema,
  fromId: EntryIdSchema.nullable().optional(),
  store: TranscriptStoreSchema.optional(),
});

/** A leaf argument: an entry id, or `null` (before the first entry). */
export const LeafArgumentSchema = EntryIdSchema.nullable();

/** Options of `Transcript.fork`. */
export interface ForkOptions {
  /** The new session's id. */
  sessionId: string;
  /** The entry to branch from (default the leaf); the new session holds the path to it. */
  fromId?: string | null;
  /** Where to write the fork (default the same store). */
  store?: KeelStore;
}


/** The clock's time as an entry timestamp; `invalid_input` when the host's clock throws or answers no time up to year 9999. */
export function isoNow(clock: Clock): Result<string, KeelError> {
  let time: unknown;
  try {
    time = clock.now();
  } catch (error) {
    return err(new KeelError("invalid_input", `the transcript's clock threw: ${error instanceof Error ? error.message : String(error)}`, { cause: error }));
  }
  const date = new Date(typeof time === "number" ? time : Number.NaN);
  const iso = Number.isNaN(date.getTime()) ? undefined : date.toISOString();
  if (!isIsoTimestamp(iso)) return err(new KeelError("invalid_input", `the transcript's clock answered ${String(time)}: now() must answer milliseconds since 1970, up to the year 9999`));
  return ok(iso);
}

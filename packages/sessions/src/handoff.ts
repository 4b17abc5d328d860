import { KeelError, SafeNameSchema, canonicalJson, utf8Bytes, validate, type Clock, type JsonValue } from "@keel/core";
import { type DocStore } from "@keel/store";
import { updateDoc } from "@keel/store/kit";
import { errAsync, okAsync, type ResultAsync } from "neverthrow";
import { z } from "zod";
import { handoffKey, keyText } from "./session-keys.js";

/** The handoff format version. */
export const HANDOFF_SCHEMA_VERSION = 1;

/** The bounds of a handoff: at most 100 entries a list, 4 KiB an entry, 64 KiB in all. */
export const HANDOFF_LIMITS = Object.freeze({
  /** Entries of each list. */
  maxEntries: 100,
  /** UTF-8 bytes of one entry (and of a task or its state). */
  maxEntryBytes: 4 * 1024,
  /** Canonical JSON bytes of the whole handoff. */
  maxBytes: 64 * 1024,
});

/** A task in flight at handoff time. */
export interface InFlightTask {
  /** What the task is. */
  task: string;
  /** Where it stands (free text: `editing src/x.ts`, `waiting for review`). */
  state: string;
}

/**
 * Continuity for whoever picks the work up next: what is done, what is in flight, what comes
 * next, and what to watch out for. Writing one is always allowed and resets no counter.
 */
export interface Handoff {
  /** What is done. */
  done: string[];
  /** What is in flight, and where each task stands. */
  inFlight: InFlightTask[];
  /** What comes next. */
  nextSteps: string[];
  /** What to watch out for. */
  warnings: string[];
}

/** A stored handoff. */
export interface HandoffRecord extends Handoff {
  /** Always {@link HANDOFF_SCHEMA_VERSION}. */
  schemaVersion: typeof HANDOFF_SCHEMA_VERSION;
  /** The mission. */
  missionId: string;
  /** The role that wrote it. */
  role: string;
  /** 1 for the role's first handoff in the mission, then one more per write. */
  revision: number;
  /** When it was written, epoch ms. */
  writtenAt: number;
}

const entry = z.string().refine((value) => utf8Bytes(value) <= HANDOFF_LIMITS.maxEntryBytes, {
  message: `must be at most ${HANDOFF_LIMITS.maxEntryBytes} bytes`,
});
const list = z.array(entry).max(HANDOFF_LIMITS.maxEntries);
const handoffFields = {
  done: list,
  inFlight: z.array(z.strictObject({ task: entry, state: entry })).max(HANDOFF_LIMITS.maxEntries),
  nextSteps: list,
  warnings: list,
};

/** zod schema of a {@link Handoff} (strict, bounded by {@link HANDOFF_LIMITS}). */
export const HandoffSchema: z.ZodType<Handoff> = z.strictObject(handoffFields);

const count = z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER);

/** zod schema of a {@link HandoffRecord}. */
export const HandoffRecordSchema: z.ZodType<HandoffRecord> = z.strictObject({
  ...handoffFields,
  schemaVersion: z.literal(HANDOFF_SCHEMA_VERSION),
  missionId: SafeNameSchema.transform(String),
  role: SafeNameSchema.transform(String),
  revision: count,
  writtenAt: count,
});

/** Validates and writes a role's handoff (CAS, replacing the previous one). */
export function writeHandoffRecord(
  docs: DocStore,
  clock: Clock,
  missionId: string,
  role: string,
  handoff: unknown,
): ResultAsync<HandoffRecord, KeelError> {
  const parsed = validate(HandoffSchema, handoff, "handoff");
  if (parsed.isErr()) return errAsync(parsed.error);
  const bytes = utf8Bytes(canonicalJson(parsed.value));
  if (bytes > HANDOFF_LIMITS.maxBytes) {
    return errAsync(
      new KeelError("too_large", `the handoff is ${bytes} bytes of JSON; at most ${HANDOFF_LIMITS.maxBytes} are allowed: shorten it`, {
        details: { bytes, maxBytes: HANDOFF_LIMITS.maxBytes },
      }),
    );
  }
  const writtenAt = clock.now();
  return updateDoc<JsonValue>(docs, handoffKey(missionId, role), (current) => {
    const previous = current ? HandoffRecordSchema.safeParse(current.value) : undefined;
    const revision = (previous?.success ? previous.data.revision : (current?.version ?? 0)) + 1;
    const record: HandoffRecord = { schemaVersion: HANDOFF_SCHEMA_VERSION, missionId, role, revision, writtenAt, ...parsed.value };
    return record as unknown as JsonValue;
  }).map((doc) => doc!.value as unknown as HandoffRecord);
}

/** Reads a role's handoff: `undefined` when none was written, `corrupt` when unreadable. */
export function readHandoffRecord(docs: DocStore, missionId: string, role: string): ResultAsync<HandoffRecord | undefined, KeelError> {
  return docs.get(handoffKey(missionId, role)).andThen((doc) => {
    if (!doc) return okAsync(undefined);
    const parsed = HandoffRecordSchema.safeParse(doc.value);
    if (!parsed.success || parsed.data.missionId !== missionId || parsed.data.role !== role) {
      return errAsync(
        new KeelError("corrupt", `the handoff at ${keyText(doc.key)} is not a valid handoff of role "${role}"`, {
          details: { location: keyText(doc.key) },
        }),
      );
    }
    return okAsync(parsed.data);
  });
}

import { SafeNameSchema, canonicalJson, utf8Bytes } from "@keel/core";
import { z } from "zod";

/** The capsule format version this package writes and reads. */
export const CAPSULE_SCHEMA_VERSION = 1;

/**
 * The bounds of a capsule. Content over a bound is truncated with an explicit marker when a turn
 * writes the capsule (never rejected mid-turn); a stored capsule over a bound fails
 * {@link CapsuleSchema}.
 */
export const CAPSULE_LIMITS = Object.freeze({
  /** Serialized size of the whole capsule (canonical JSON, UTF-8 bytes): 64 KiB. */
  maxBytes: 64 * 1024,
  /** Bytes of the repository map and of the latest decisive output, each. */
  maxTextBytes: 16 * 1024,
  /** Entries of the referenced and of the inspected path lists, each. */
  maxPaths: 64,
  /** Bytes of one path. */
  maxPathBytes: 512,
  /** Entries of the open checkpoint items. */
  maxItems: 32,
  /** Bytes of one open checkpoint item. */
  maxItemBytes: 1024,
  /** Bytes of the model, branch and provider thread id, each. */
  maxBindingBytes: 512,
  /** Bytes of the last failure's message. */
  maxMessageBytes: 1024,
});

/** The objective revision a turn works on: a number or an opaque string (a hash, a tag). */
export type ObjectiveRevision = number | string;

/** Which provider thread a role's capsule is bound to, and under which conditions it was opened. */
export interface ThreadBinding {
  /** The backend id that owns the thread. */
  backend: string;
  /** The model, or `null` when the backend chose. */
  model: string | null;
  /** The repository branch the thread worked on, or `null` when none. */
  branch: string | null;
  /** The provider's thread (session) id, or `null` when there is none to resume. */
  threadId: string | null;
}

/** The counters of a capsule. "Thread" below means the provider thread since the last rotation. */
export interface CapsuleCounters {
  /** Turns run on the current thread (reset to 1 when a new thread starts). */
  turnsSinceRotation: number;
  /** Input tokens observed on the current thread, summed over its turns (reset when a new thread starts). */
  observedInputTokens: number;
  /** How many times the role's thread was rotated. */
  rotations: number;
  /** How many times resuming the role's thread failed. */
  resumeFailures: number;
  /** The role's turns in the mission, over all its threads. */
  totalTurns: number;
}

/** Points at the version of the mission checkpoint the capsule was last reconciled with. */
export interface CheckpointPointer {
  /** The mission checkpoint document's store version. */
  version: number;
}

/** The last failed turn of the role, as far as it is known. */
export interface CapsuleFailure {
  /** The `KeelError` code. */
  code: string;
  /** Its message (bounded). */
  message: string;
  /** When it happened, epoch ms. */
  at: number;
}

/**
 * A role's durable working state in one mission: what a fresh provider session needs to pick up
 * the work, and the binding of the provider thread a resumed turn continues. A capsule never
 * holds a transcript or another role's context: {@link CapsuleSchema} rejects unknown keys.
 * Runtime-owned and replaced atomically; under the `fresh` policy it is neither read nor written.
 */
export interface Capsule {
  /** Always {@link CAPSULE_SCHEMA_VERSION}. */
  schemaVersion: typeof CAPSULE_SCHEMA_VERSION;
  /** The mission it belongs to. */
  missionId: string;
  /** The role it belongs to; a capsule read under another role's key is rejected. */
  role: string;
  /** The objective revision of the last turn. */
  objectiveRevision: ObjectiveRevision;
  /** A map of the repository as the role last described it, or `null`. */
  repositoryMap: string | null;
  /** Paths the role referenced, oldest first. */
  referencedPaths: string[];
  /** Paths the role inspected, oldest first. */
  inspectedPaths: string[];
  /** The latest decisive output of the role (a plan, a patch summary, a verdict), or `null`. */
  decisiveOutput: string | null;
  /** The role's open items for the mission checkpoint. */
  openCheckpointItems: string[];
  /** The mission checkpoint version last seen or written, or `null`. */
  checkpoint: CheckpointPointer | null;
  /** The provider thread binding. */
  thread: ThreadBinding;
  /** Turn and token counters. */
  counters: CapsuleCounters;
  /** The last failed turn, or `null`. */
  lastFailure: CapsuleFailure | null;
  /** When the capsule was last written, epoch ms. */
  updatedAt: number;
}

const bytesAtMost = (max: number) => (value: string) => utf8Bytes(value) <= max;
const boundedText = (max: number) => z.string().refine(bytesAtMost(max), { message: `must be at most ${max} bytes of UTF-8` });
const count = z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER);

/** The longest objective revision given as text, in UTF-8 bytes. */
const OBJECTIVE_REVISION_MAX_BYTES = 128;

/** zod schema of an {@link ObjectiveRevision}: a non-negative integer or a string of at most 128 bytes. */
export const ObjectiveRevisionSchema = z.union([count, boundedText(OBJECTIVE_REVISION_MAX_BYTES).pipe(z.string().min(1))]);

const ThreadBindingSchema = z.strictObject({
  backend: SafeNameSchema.transform(String),
  model: boundedText(CAPSULE_LIMITS.maxBindingBytes).nullable(),
  branch: boundedText(CAPSULE_LIMITS.maxBindingBytes).nullable(),
  threadId: boundedText(CAPSULE_LIMITS.maxBindingBytes).pipe(z.string().min(1)).nullable(),
});

const CountersSchema = z.strictObject({
  turnsSinceRotation: count,
  observedInputTokens: count,
  rotations: count,
  resumeFailures: count,
  totalTurns: count,
});

const pathList = z.array(boundedText(CAPSULE_LIMITS.maxPathBytes)).max(CAPSULE_LIMITS.maxPaths + 1);

/**
 * zod schema of a {@link Capsule}: strict (unknown keys, such as a transcript, are rejected) and
 * bounded by {@link CAPSULE_LIMITS}, including 64 KiB of canonical JSON in all. A list may hold
 * one entry over its bound: the truncation marker.
 */
export const CapsuleSchema: z.ZodType<Capsule> = z
  .strictObject({
    schemaVersion: z.literal(CAPSULE_SCHEMA_VERSION),
    missionId: SafeNameSchema.transform(String),
    role: SafeNameSchema.transform(String),
    objectiveRevision: ObjectiveRevisionSchema,
    repositoryMap: boundedText(CAPSULE_LIMITS.maxTextBytes).nullable(),
    referencedPaths: pathList,
    inspectedPaths: pathList,
    decisiveOutput: boundedText(CAPSULE_LIMITS.maxTextBytes).nullable(),
    openCheckpointItems: z.array(boundedText(CAPSULE_LIMITS.maxItemBytes)).max(CAPSULE_LIMITS.maxItems + 1),
    checkpoint: z.strictObject({ version: count }).nullable(),
    thread: ThreadBindingSchema,
    counters: CountersSchema,
    lastFailure: z
      .strictObject({ code: boundedText(64), message: boundedText(CAPSULE_LIMITS.maxMessageBytes), at: count })
      .nullable(),
    updatedAt: count,
  })
  .superRefine((capsule, context) => {
    const bytes = utf8Bytes(canonicalJson(capsule));
    if (bytes > CAPSULE_LIMITS.maxBytes) {
      context.addIssue({ code: "custom", message: `capsule is ${bytes} bytes of JSON; at most ${CAPSULE_LIMITS.maxBytes} are allowed` });
    }
  });

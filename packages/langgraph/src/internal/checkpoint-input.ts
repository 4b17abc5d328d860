/**
 * What LangGraph (or a caller standing in for it) hands the saver, checked at the boundary: the
 * config, the checkpoint, its metadata and new versions, pending writes, list options. A refusal
 * is a thrown `KeelError` `invalid_input` (the saver's methods are LangGraph's Promise API, so it
 * becomes a rejected promise), before anything is read or written.
 *
 * The schemas check the fields the saver and LangGraph read back, and let every other field of
 * LangGraph's objects through: a config carries callbacks and LangGraph's own keys, metadata
 * carries the caller's, and a newer LangGraph may add fields that refusing would break. The saver
 * keeps using the caller's objects (not zod's copies, which would cost a copy per `put` and drop
 * a `"__proto__"` key silently); the few values it reads from the config come from the parse.
 */
import { KeelError, isSafeName, validate, validateFast } from "@keel/core";
import { z } from "zod";

/** A checkpoint id: a key segment, so a SafeName (LangGraph's uuid6 ids are). */
const CheckpointIdSchema = z.string().refine(isSafeName, "a checkpoint id must be a safe name (LangGraph's uuid6 ids are): letters, digits, '.', '_' or '-'");

/** A channel version: LangGraph's are integers; a saver of its own may use strings. */
const ChannelVersionSchema = z.union([z.number(), z.string()]);

/** True for an object literal or `Object.create(null)`: what JSON text and LangGraph's own objects are. */
function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== "object" || value === null) return false;
  const prototype = Object.getPrototypeOf(value) as unknown;
  return prototype === Object.prototype || prototype === null;
}

/**
 * An object the saver stores or keys by: a plain object (a Map or a Date would be stored as
 * something else and read back as it) without an own `"__proto__"` key (assigned into the
 * saver's maps it would set their prototype, LangGraph's serializer revives it as one, and zod's
 * objects and records skip it without a word), then checked by `schema`.
 */
function plainObject<T extends z.ZodType<unknown, Record<string, unknown>>>(schema: T, what: string) {
  return z
    .custom<Record<string, unknown>>((value) => isPlainObject(value) && !Object.hasOwn(value, "__proto__"), `${what} must be a plain object without a "__proto__" key`)
    .pipe(schema);
}

/** A map keyed by channel (or node) name. */
function channelMap<T extends z.ZodType>(value: T) {
  return plainObject(z.record(z.string(), value), "a map of channels");
}

/** A channel name, as a pending write names it. */
const ChannelNameSchema = z.string().refine((name) => name !== "__proto__", 'a channel may not be named "__proto__"');

/** The part of LangGraph's `config.configurable` the saver reads; null and "" mean absent, as LangGraph's savers read them. */
const ConfigurableSchema = z.object({
  thread_id: z.string().nullish(),
  checkpoint_ns: z.string().nullish(),
  checkpoint_id: z.union([z.literal(""), CheckpointIdSchema]).nullish(),
  /** The checkpoint id's older name, still read by LangGraph's `getCheckpointId`. */
  thread_ts: z.union([z.literal(""), CheckpointIdSchema]).nullish(),
});

/** A LangGraph `RunnableConfig`, as far as the saver reads it. */
export const RunnableConfigInputSchema = z.object({ configurable: ConfigurableSchema.nullish() });

/** A LangGraph `Checkpoint` (format 1 to 4). */
export const CheckpointInputSchema = plainObject(
  z.object({
    v: z.number().int(),
    id: CheckpointIdSchema,
    ts: z.string(),
    channel_values: channelMap(z.unknown()),
    channel_versions: channelMap(ChannelVersionSchema),
    versions_seen: channelMap(channelMap(ChannelVersionSchema)),
  }),
  "a checkpoint",
);

/**
 * LangGraph's `CheckpointMetadata`: a plain object (it is stored with the checkpoint and read
 * back as one, `list`'s `filter` matches its fields), its known fields typed when present.
 */
export const CheckpointMetadataInputSchema = plainObject(
  z.object({
    source: z.string().optional(),
    step: z.number().int().optional(),
    parents: plainObject(z.record(z.string(), z.string()), "metadata.parents").optional(),
  }),
  "metadata ({ source, step, parents, ... })",
);

/** The `newVersions` of a `put`: the channels that changed, each with its new version. */
export const NewVersionsInputSchema = channelMap(ChannelVersionSchema);

/** The pending writes of one task: `[channel, value]` pairs. */
export const PendingWritesInputSchema = z.array(z.tuple([ChannelNameSchema, z.unknown()]));

/** A task's id (pending writes are keyed by it). */
export const TaskIdInputSchema = z.string().min(1, "taskId must be a non-empty string");

/** The optional task path of `putWrites`. */
export const TaskPathInputSchema = z.string().optional();

/** A thread id, as `deleteThread` takes it. */
export const ThreadIdInputSchema = z.string().min(1, "threadId must be a non-empty string");

/** LangGraph's `CheckpointListOptions`. */
export const ListOptionsInputSchema = z
  .object({
    limit: z.number().int().nonnegative().optional(),
    before: RunnableConfigInputSchema.optional(),
    filter: plainObject(z.record(z.string(), z.unknown()), "filter (metadata fields to match)").optional(),
  })
  .optional();

/**
 * Parses one argument, or throws `invalid_input` naming `what` (a getter or proxy that throws
 * while it is read included: core's validation is total). With `accept`, a plainly well-formed
 * input is answered without zod (core's `validateFast`; see the `accept…` functions).
 */
export function parseInput<S extends z.ZodType>(schema: S, input: unknown, what: string, accept?: (input: unknown) => z.output<S> | undefined): z.output<S> {
  const result = accept === undefined ? validate(schema, input, what) : validateFast(schema, input, what, accept);
  if (result.isErr()) throw result.error;
  return result.value;
}

// The fast paths of the schemas every `put` meets. zod's walk over a checkpoint's nested maps
// cost about 10 µs a put (measured beside a put + getTuple of 130-200 µs on SQLite): these
// answer for the plainly well-formed input LangGraph passes, and leave everything else to zod.
// Each answers only what its schema accepts (property-tested in checkpoint-input.test.ts).
// Kept for speed: they serve the checkpointer at ≥ 1× SqliteSaver (bench/langgraph.bench.ts; issue 31).

/** True when `value` is a plain object without a "__proto__" key whose own values all pass `each`. */
function isPlainMapOf(value: unknown, each: (item: unknown) => boolean): boolean {
  if (!isPlainObject(value) || Object.hasOwn(value, "__proto__")) return false;
  for (const key of Object.keys(value)) if (!each(value[key])) return false;
  return true;
}

const isVersion = (value: unknown): boolean => (typeof value === "number" && Number.isFinite(value)) || typeof value === "string";
const isVersionMap = (value: unknown): boolean => isPlainMapOf(value, isVersion);
const isAnything = (): boolean => true;

/** The fast `accept` of {@link CheckpointInputSchema}: the checkpoint itself (the saver uses the caller's object). */
export function acceptCheckpoint(value: unknown): z.output<typeof CheckpointInputSchema> | undefined {
  if (!isPlainObject(value) || Object.hasOwn(value, "__proto__")) return undefined;
  const { v, id, ts, channel_values: values, channel_versions: versions, versions_seen: seen } = value;
  const valid =
    Number.isSafeInteger(v) &&
    typeof id === "string" &&
    isSafeName(id) &&
    typeof ts === "string" &&
    isPlainMapOf(values, isAnything) &&
    isVersionMap(versions) &&
    isPlainMapOf(seen, isVersionMap);
  return valid ? (value as z.output<typeof CheckpointInputSchema>) : undefined;
}

/** The fast `accept` of {@link NewVersionsInputSchema}. */
export function acceptNewVersions(value: unknown): Record<string, string | number> | undefined {
  return isVersionMap(value) ? (value as Record<string, string | number>) : undefined;
}

const isOptionalString = (value: unknown): boolean => value === undefined || value === null || typeof value === "string";
const isOptionalId = (value: unknown): boolean => value === undefined || value === null || value === "" || (typeof value === "string" && isSafeName(value));

/** The fast `accept` of {@link RunnableConfigInputSchema}: a plain config with a plain `configurable`, or none. */
export function acceptConfig(value: unknown): z.output<typeof RunnableConfigInputSchema> | undefined {
  if (!isPlainObject(value)) return undefined;
  const configurable = value.configurable;
  if (configurable === undefined || configurable === null) return { configurable };
  if (!isPlainObject(configurable)) return undefined;
  const { thread_id, checkpoint_ns, checkpoint_id, thread_ts } = configurable;
  if (!isOptionalString(thread_id) || !isOptionalString(checkpoint_ns) || !isOptionalId(checkpoint_id) || !isOptionalId(thread_ts)) return undefined;
  return { configurable: { thread_id, checkpoint_ns, checkpoint_id, thread_ts } as z.output<typeof ConfigurableSchema> };
}

/** What the saver reads from a config; `undefined` for an absent field. */
export interface ConfigFields {
  threadId: string | undefined;
  /** `undefined`: not given (every namespace, for `list`); `""` is the default namespace. */
  namespace: string | undefined;
  checkpointId: string | undefined;
}

/** The thread, namespace and checkpoint a config names, or `invalid_input` (`what` names the argument). */
export function readConfig(config: unknown, what: string): ConfigFields {
  const configurable = parseInput(RunnableConfigInputSchema, config, what, acceptConfig).configurable;
  if (configurable === undefined || configurable === null) return { threadId: undefined, namespace: undefined, checkpointId: undefined };
  return {
    threadId: configurable.thread_id || undefined,
    namespace: configurable.checkpoint_ns ?? undefined,
    checkpointId: configurable.checkpoint_id || configurable.thread_ts || undefined,
  };
}

/** The thread a write names, or `invalid_input` naming `operation`. */
export function requireThreadId({ threadId }: ConfigFields, operation: string): string {
  if (threadId === undefined) {
    throw new KeelError(
      "invalid_input",
      `${operation}: config.configurable.thread_id is missing: pass { configurable: { thread_id: "..." } } so the checkpointer knows which thread to persist`,
      { details: { operation } },
    );
  }
  return threadId;
}

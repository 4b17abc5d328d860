/**
 * The write path of a checkpoint: its channels split into inline values and content-addressed
 * blobs, its state serialized once, then stored and made the head of its thread and namespace.
 * Two ways to store it: one batch when continuing from the head this saver saw (the measured
 * step), else one write at a time (a store without batches, or a refused batch).
 */
import type { RunnableConfig } from "@langchain/core/runnables";
import type { ChannelVersions, Checkpoint, CheckpointMetadata } from "@langchain/langgraph-checkpoint";
import { KeelError, digest, type JsonValue } from "@keel/core";
import type { BatchPut } from "@keel/store";
import { MAX_BATCH_WRITES } from "@keel/store/kit";
import {
  CheckpointInputSchema,
  CheckpointMetadataInputSchema,
  NewVersionsInputSchema,
  acceptCheckpoint,
  acceptNewVersions,
  parseInput,
  readConfig,
  requireThreadId,
} from "./checkpoint-input.js";
import { HeadDocumentSchema, parseStored, type CheckpointDocument, type Serialized } from "./checkpoint-records.js";
import { inlineOf, readCheckpoint } from "./checkpoint-read.js";
import { dumpValue } from "./checkpoint-serde.js";
import { blobCacheKey, configOf, rememberBlob, rememberCheckpoint, unwrap, type ObservedHead, type SaverContext } from "./saver-context.js";

/**
 * The longest serialized channel value (characters of its stored text) a checkpoint document
 * carries over from its parent inline. A larger one that a step did not change is a blob of its
 * own, written once (at the first step that keeps it) and shared by every later checkpoint whose
 * channel did not change (a long history under a changing counter); a small one inline spares a
 * row per changed channel in each `put` (a counter, a flag, the last step's output).
 */
const INLINE_MAX_CHARS = 1024;

/**
 * The most characters of serialized text the values a step changed may take inline in its
 * checkpoint document (a quarter of the store's `maxValueBytes` at most). A chat step changes
 * its growing `messages` at every step: kept inline, the step is one checkpoint row, not a blob
 * row besides it, and no digest of the history is taken. It serves the chat shape of
 * bench/langgraph.bench.ts at ≥ 1× SqliteSaver (issue 31 §4, bench/README.md).
 */
const CHANGED_INLINE_MAX_CHARS = 256 * 1024;

/** A channel blob to store: content-addressed, so an existing one is the same bytes. */
interface BlobWrite {
  key: string[];
  /** Its key in the saver's blob cache: `<scope>/<digest>`. */
  cacheKey: string;
  value: Serialized;
}

/** The channels of a new checkpoint, as {@link channelsOf} makes them. */
interface ChannelsToStore {
  channels: CheckpointDocument["channels"];
  blobs: BlobWrite[];
  inline: Record<string, unknown>;
}

/** `put`: stores a checkpoint and makes it the head of its thread and namespace (see `KeelCheckpointSaver.put`). */
export async function putCheckpoint(
  context: SaverContext,
  config: RunnableConfig,
  checkpoint: Checkpoint,
  metadata: CheckpointMetadata,
  newVersions: ChannelVersions,
): Promise<RunnableConfig> {
  const fields = readConfig(config, "put config");
  const threadId = requireThreadId(fields, "put");
  const { namespace = "", checkpointId: parentCheckpointId } = fields;
  parseInput(CheckpointInputSchema, checkpoint, "put checkpoint", acceptCheckpoint);
  parseInput(CheckpointMetadataInputSchema, metadata, "put metadata");
  parseInput(NewVersionsInputSchema, newVersions, "put newVersions", acceptNewVersions);
  const { channels, blobs, inline } = await channelsOf(context, threadId, namespace, parentCheckpointId, checkpoint.channel_values, newVersions);
  // The checkpoint (its small primitive channel values in it) and its metadata: one serializer call.
  const state = await dumpValue(context, { checkpoint: { ...checkpoint, channel_values: inline }, metadata }, `put: checkpoint ${checkpoint.id} or its metadata`);
  const document: CheckpointDocument = {
    threadId,
    namespace,
    checkpointId: checkpoint.id,
    ...(parentCheckpointId === undefined ? {} : { parentCheckpointId }),
    state,
    channels,
  };
  context.inlineValues.set(document, inline);
  if (parentCheckpointId !== undefined && (context.writesInFlight.size > 0 || context.lostWrites.size > 0)) await checkParentWrites(context, threadId, namespace, parentCheckpointId);
  const observed = context.observed.get(context.keys.scope(threadId, namespace));
  // Continuing from the head this saver saw: one atomic batch, its head write checked by CAS.
  if (observed !== undefined && observed.checkpointId === parentCheckpointId && (await putBatched(context, document, blobs, observed))) {
    return configOf(threadId, namespace, checkpoint.id);
  }
  return putOneByOne(context, document, blobs);
}

/**
 * The channel map of a new checkpoint (the parent's, with the channels in `newVersions`
 * replaced), its values kept in the checkpoint itself (`inline`: small primitives, which need
 * no serializer call of their own), and the blobs of the changed larger values, to be written
 * (by content-address: an existing blob is the same bytes by construction). A changed value
 * that is not a small primitive is serialized alone: inline in the map when small, else a blob.
 */
async function channelsOf(
  context: SaverContext,
  threadId: string,
  namespace: string,
  parentCheckpointId: string | undefined,
  values: Record<string, unknown> | undefined,
  newVersions: ChannelVersions,
): Promise<ChannelsToStore> {
  const channels: CheckpointDocument["channels"] = {};
  const inline: Record<string, unknown> = {};
  const blobs: BlobWrite[] = [];
  if (parentCheckpointId !== undefined) {
    // The parent's entries of the unchanged channels, with its inline values: at once (no
    // promise) when the parent and its inline values are cached, as after this saver's own put.
    const key = context.keys.checkpoint(threadId, namespace, parentCheckpointId);
    const parent = context.documents.get(key.join("/")) ?? (await readCheckpoint(context, key));
    if (parent) {
      let parentInline: Record<string, unknown> | undefined;
      for (const [channel, entry] of Object.entries(parent.channels)) {
        if (Object.hasOwn(newVersions, channel)) continue;
        if (entry !== null && typeof entry === "object" && entry.data.length > INLINE_MAX_CHARS) {
          // A large value the parent's step changed, kept inline there: it outlived a step, so
          // it becomes a blob now, shared from here on (content-addressed, written once).
          channels[channel] = blobOf(context, threadId, namespace, entry, blobs);
          continue;
        }
        channels[channel] = entry;
        if (entry !== true) continue;
        parentInline ??= context.inlineValues.get(parent) ?? (await inlineOf(context, parent));
        inline[channel] = parentInline[channel];
      }
    }
  }
  // Small primitives need no serializer call: only the other changed values are awaited.
  const serialized: Promise<void>[] = [];
  const inlineLimit = Math.min(CHANGED_INLINE_MAX_CHARS, Math.floor(context.store.capabilities.maxValueBytes / 4));
  let inlineChars = 0;
  for (const channel of Object.keys(newVersions)) {
    const value = values !== undefined && Object.hasOwn(values, channel) ? values[channel] : undefined;
    if (value === undefined) {
      channels[channel] = null;
    } else if (isSmallPrimitive(value)) {
      channels[channel] = true;
      inline[channel] = value;
    } else {
      serialized.push(
        dumpValue(context, value, `put: the value of channel "${channel}"`).then((blob) => {
          if (blob.data.length <= INLINE_MAX_CHARS || inlineChars + blob.data.length <= inlineLimit) {
            if (blob.data.length > INLINE_MAX_CHARS) inlineChars += blob.data.length;
            channels[channel] = blob;
            return;
          }
          channels[channel] = blobOf(context, threadId, namespace, blob, blobs);
        }),
      );
    }
  }
  if (serialized.length > 0) await Promise.all(serialized);
  return { channels, blobs, inline };
}

/** A channel value as a content-addressed blob to write (added to `blobs`); its digest, for the channel map. */
function blobOf(context: SaverContext, threadId: string, namespace: string, value: Serialized, blobs: BlobWrite[]): string {
  const blobDigest = digest(value).slice("sha256:".length);
  blobs.push({ key: context.keys.blob(threadId, namespace, blobDigest), cacheKey: blobCacheKey(context, threadId, namespace, blobDigest), value });
  return blobDigest;
}

/**
 * A channel value kept in the checkpoint's own serialized state: a JSON primitive (a string of at
 * most {@link INLINE_MAX_CHARS} characters), serialized with the checkpoint at no call of its own.
 */
function isSmallPrimitive(value: unknown): boolean {
  return value === null || typeof value === "boolean" || (typeof value === "number" && Number.isFinite(value)) || (typeof value === "string" && value.length <= INLINE_MAX_CHARS);
}

/**
 * The batched `put`: blobs, checkpoint and head in one `docs.batch`, the head's version the one
 * observed; it serves the put + getTuple step (bench/README.md, langgraph issue 22, rows B to E).
 * A blob already stored (content-addressed: the same bytes) is dropped from the batch, which
 * runs again. Resolves false when the store has no batch or the checkpoint or head write was
 * refused: {@link putOneByOne} then decides (a retried put that landed, or `conflict`), reading
 * the head afresh.
 */
async function putBatched(context: SaverContext, document: CheckpointDocument, blobs: readonly BlobWrite[], observed: ObservedHead): Promise<boolean> {
  const { threadId, namespace, checkpointId } = document;
  const { store, keys } = context;
  const batch = store.capabilities.batchWrites === true ? store.docs.batch?.bind(store.docs) : undefined;
  if (batch === undefined || blobs.length + 2 > MAX_BATCH_WRITES) return false;
  const key = keys.checkpoint(threadId, namespace, checkpointId);
  const tail: BatchPut[] = [
    { key, value: document as unknown as JsonValue, condition: { create: true } },
    { key: keys.head(threadId, namespace), value: { checkpointId }, condition: observed.version === 0 ? { create: true } : { expectedVersion: observed.version } },
  ];
  let pending = [...blobs];
  for (;;) {
    const outcome = await batch([...pending.map((blob): BatchPut => ({ key: blob.key, value: blob.value, condition: { create: true } })), ...tail]);
    if (outcome.isOk()) {
      context.observed.set(keys.scope(threadId, namespace), { checkpointId, version: outcome.value.at(-1)!.version });
      rememberWritten(context, key, document, blobs);
      return true;
    }
    const { code, details } = outcome.error;
    if (code !== "conflict" && code !== "deleted") throw outcome.error;
    const index = details.index;
    if (typeof index !== "number" || index >= pending.length) return false;
    pending = pending.filter((_, at) => at !== index);
  }
}

/**
 * The `put` of a store without batches (the fs store), or after a refused batch: blobs, then the
 * checkpoint (create-only; an identical one already there is a retried put), then the head by
 * CAS (from the version observed when continuing from the observed head, else the one read now).
 * A refused head move deletes the checkpoint it wrote and is `conflict`.
 */
async function putOneByOne(context: SaverContext, document: CheckpointDocument, blobs: readonly BlobWrite[]): Promise<RunnableConfig> {
  const { threadId, namespace, checkpointId, parentCheckpointId } = document;
  const { store, keys } = context;
  const headKey = keys.head(threadId, namespace);
  const [head] = await Promise.all([
    unwrap(store.docs.get(headKey)),
    ...blobs.map(async (blob) => {
      const written = await store.docs.put(blob.key, blob.value, { create: true });
      if (written.isErr() && written.error.code !== "conflict") throw written.error;
    }),
  ]);
  const key = keys.checkpoint(threadId, namespace, checkpointId);
  const observedKey = keys.scope(threadId, namespace);
  const observed = context.observed.get(observedKey);
  // Continuing from what this saver saw as the head: the head must not have moved since.
  const expectedHeadVersion = observed !== undefined && observed.checkpointId === parentCheckpointId ? observed.version : (head?.version ?? 0);
  if (head && expectedHeadVersion === head.version && parseStored(HeadDocumentSchema, head.value, `head ${headKey.join("/")}`).checkpointId === checkpointId) {
    return configOf(threadId, namespace, checkpointId); // a retried put that already landed
  }
  const written = await store.docs.put(key, document as unknown as JsonValue, { create: true });
  if (written.isErr()) {
    const existing = await unwrap(store.docs.get(key));
    if (!existing || digest(existing.value) !== digest(document as unknown as JsonValue)) throw written.error;
  }
  const moved = await store.docs.put(headKey, { checkpointId }, expectedHeadVersion === 0 ? { create: true } : { expectedVersion: expectedHeadVersion });
  if (moved.isErr()) {
    if (written.isOk()) await store.docs.delete(key, { expectedVersion: written.value.version });
    if (moved.error.code !== "conflict" && moved.error.code !== "deleted") throw moved.error;
    context.observed.delete(observedKey);
    throw new KeelError(
      "conflict",
      `thread "${threadId}" (namespace "${namespace}") was advanced by another writer since checkpoint ${parentCheckpointId ?? "(none)"} was read: re-read the thread and run again`,
      { details: { threadId, namespace, parentCheckpointId: parentCheckpointId ?? null, checkpointId }, cause: moved.error },
    );
  }
  context.observed.set(observedKey, { checkpointId, version: moved.value.version });
  rememberWritten(context, key, document, blobs);
  return configOf(threadId, namespace, checkpointId);
}

/** Keeps a checkpoint this saver stored, and its blobs (both immutable once written). */
function rememberWritten(context: SaverContext, key: string[], document: CheckpointDocument, blobs: readonly BlobWrite[]): void {
  rememberCheckpoint(context, key, document);
  for (const blob of blobs) rememberBlob(context, blob.cacheKey, blob.value);
}

/**
 * A `put` from a checkpoint whose pending writes this saver failed to store (another writer
 * stored different ones: it ran the same task of the same checkpoint, as two processes
 * resuming one thread do) must not advance the thread with results that lost: it waits for
 * the writes in flight and fails with `conflict` when one lost.
 */
async function checkParentWrites(context: SaverContext, threadId: string, namespace: string, parentCheckpointId: string): Promise<void> {
  const log = context.keys.writes(threadId, namespace, parentCheckpointId).join("/");
  const inFlight = context.writesInFlight.get(log);
  if (inFlight) await Promise.allSettled([...inFlight]);
  if (!context.lostWrites.delete(log)) return;
  context.observed.delete(context.keys.scope(threadId, namespace));
  throw new KeelError(
    "conflict",
    `thread "${threadId}" (namespace "${namespace}"): another writer stored different pending writes for checkpoint ${parentCheckpointId} (it ran the same step): re-read the thread and run again`,
    { details: { threadId, namespace, parentCheckpointId } },
  );
}

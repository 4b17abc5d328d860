/**
 * The load path: a checkpoint document read (or taken from the saver's cache), its state and
 * channel values deserialized, its pending writes read, as LangGraph's `CheckpointTuple`.
 * Answers at once (no promise) where a value is cached or plain JSON: a step went through about
 * thirty promises before (bench/README.md, langgraph fourth pass).
 */
import type { RunnableConfig } from "@langchain/core/runnables";
import { TASKS, compareWritesSortKeys, maxChannelVersion, writesSortKey, type Checkpoint, type CheckpointPendingWrite, type CheckpointTuple } from "@langchain/langgraph-checkpoint";
import { KeelError } from "@keel/core";
import { readConfig } from "./checkpoint-input.js";
import { CheckpointDocumentSchema, HeadDocumentSchema, SerializedSchema, WriteRecordSchema, parseStored, type CheckpointDocument, type Serialized, type WriteRecord } from "./checkpoint-records.js";
import { loadNow, loadValue, reviveValue } from "./checkpoint-serde.js";
import { blobCacheKey, configOf, rememberBlob, rememberCheckpoint, unwrap, type LoadedState, type SaverContext } from "./saver-context.js";

/** `getTuple`: one checkpoint (by `checkpoint_id`) or the thread's latest, with its pending writes. */
export async function readTuple(context: SaverContext, config: RunnableConfig): Promise<CheckpointTuple | undefined> {
  const { threadId, namespace = "", checkpointId: configCheckpointId } = readConfig(config, "getTuple config");
  if (threadId === undefined) return undefined;
  let checkpointId = configCheckpointId;
  const fromHead = checkpointId === undefined;
  let writes: Promise<WriteRecord[]> | undefined;
  if (checkpointId === undefined) {
    const headKey = context.keys.head(threadId, namespace);
    const observedKey = context.keys.scope(threadId, namespace);
    // The head most likely still names the checkpoint this saver saw last: its pending writes
    // are read alongside the head (one round trip instead of two), and used only if it does.
    // Serves the PostgreSQL step (bench/README.md, langgraph issue 22, rows D and E).
    const expected = context.observed.get(observedKey)?.checkpointId;
    const speculative = expected === undefined ? undefined : readWrites(context, threadId, namespace, expected);
    speculative?.catch(() => undefined); // awaited below only when the head names it
    const head = await unwrap(context.store.docs.get(headKey));
    if (!head) {
      context.observed.set(observedKey, { checkpointId: undefined, version: 0 });
      return undefined;
    }
    checkpointId = parseStored(HeadDocumentSchema, head.value, `head ${headKey.join("/")}`).checkpointId;
    context.observed.set(observedKey, { checkpointId, version: head.version });
    if (checkpointId === expected) writes = speculative;
  }
  // The head, just read, names a checkpoint that never changes: a cached copy is current.
  // The cache serves the put + getTuple step (bench/README.md, langgraph issue 22, rows B to E).
  const key = context.keys.checkpoint(threadId, namespace, checkpointId);
  const document = (fromHead ? context.documents.get(key.join("/")) : undefined) ?? (await readCheckpoint(context, key));
  return document === undefined ? undefined : toTuple(context, document, undefined, writes);
}

/**
 * A checkpoint document read from the store (and cached: it never changes once written; a
 * caller that may use a cached copy looks in `context.documents` first, without a promise).
 */
export async function readCheckpoint(context: SaverContext, key: string[]): Promise<CheckpointDocument | undefined> {
  const text = key.join("/");
  const stored = await unwrap(context.store.docs.get(key));
  if (!stored) {
    context.documents.delete(text);
    return undefined;
  }
  const document = parseStored(CheckpointDocumentSchema, stored.value, `checkpoint ${text}`);
  rememberCheckpoint(context, key, document);
  return document;
}

/**
 * A checkpoint document's state, deserialized: its checkpoint (with only its inline channel
 * values) and metadata; the inline values are remembered for a `put` continuing from it. At
 * once (no promise) when {@link loadNow} reads it; throws `corrupt`.
 */
export function loadState(context: SaverContext, document: CheckpointDocument): LoadedState | Promise<LoadedState> {
  const now = loadNow(context, document.state);
  return now === undefined ? reviveValue(context, document.state).then((loaded) => checkState(context, document, loaded)) : checkState(context, document, now.value);
}

/** A deserialized checkpoint state, checked for its shape (else `corrupt`); its inline values remembered. */
function checkState(context: SaverContext, document: CheckpointDocument, loaded: unknown): LoadedState {
  const state = loaded as { checkpoint?: Checkpoint; metadata?: LoadedState["metadata"] } | null;
  if (typeof state !== "object" || state === null || typeof state.checkpoint !== "object" || state.checkpoint === null || typeof state.metadata !== "object" || state.metadata === null) {
    throw new KeelError("corrupt", `stored LangGraph checkpoint ${document.checkpointId} does not deserialize to { checkpoint, metadata }`, {
      details: { checkpointId: document.checkpointId },
    });
  }
  state.checkpoint.channel_values ??= {};
  if (!context.inlineValues.has(document)) context.inlineValues.set(document, { ...state.checkpoint.channel_values });
  return state as LoadedState;
}

/** The channel values kept in a checkpoint's own serialized state (remembered, else deserialized). */
export async function inlineOf(context: SaverContext, document: CheckpointDocument): Promise<Record<string, unknown>> {
  const known = context.inlineValues.get(document);
  if (known) return known;
  await loadState(context, document);
  return context.inlineValues.get(document) ?? {};
}

/**
 * The channel values of a checkpoint outside its own state: at once (no promise) when each is
 * inline or a cached blob that {@link loadNow} reads, else a promise.
 */
function readChannels(context: SaverContext, document: CheckpointDocument): Record<string, unknown> | Promise<Record<string, unknown>> {
  const values: Record<string, unknown> = {};
  let pending: Promise<void>[] | undefined;
  for (const [channel, entry] of Object.entries(document.channels)) {
    if (entry === null || entry === true) continue; // empty; in the checkpoint's own state
    const blob = typeof entry === "string" ? context.blobs.get(blobCacheKey(context, document.threadId, document.namespace, entry)) : entry;
    const now = blob === undefined ? undefined : loadNow(context, blob);
    if (now !== undefined) {
      values[channel] = now.value;
      continue;
    }
    (pending ??= []).push(
      readChannel(context, document, channel, blob ?? entry).then((value) => {
        values[channel] = value;
      }),
    );
  }
  return pending === undefined ? values : Promise.all(pending).then(() => values);
}

/** One channel value of a checkpoint: deserialized by the serializer, or its blob read from the store first. */
async function readChannel(context: SaverContext, document: CheckpointDocument, channel: string, entry: Serialized | string): Promise<unknown> {
  if (typeof entry !== "string") return reviveValue(context, entry); // readChannels tried loadNow
  const key = context.keys.blob(document.threadId, document.namespace, entry);
  const stored = await unwrap(context.store.docs.get(key));
  if (!stored) {
    throw new KeelError("corrupt", `checkpoint ${document.checkpointId} refers to channel "${channel}" blob ${key.join("/")}, which is missing`, {
      details: { checkpointId: document.checkpointId, channel, key: key.join("/") },
    });
  }
  const blob = parseStored(SerializedSchema, stored.value, `blob ${key.join("/")}`);
  rememberBlob(context, blobCacheKey(context, document.threadId, document.namespace, entry), blob);
  return loadValue(context, blob);
}

/** The pending writes of one checkpoint, the latest of each task and index, in LangGraph's order. */
export async function readWrites(context: SaverContext, threadId: string, namespace: string, checkpointId: string): Promise<WriteRecord[]> {
  const log = context.keys.writes(threadId, namespace, checkpointId);
  const records = await unwrap(context.store.logs.read(log));
  const latest = new Map<string, WriteRecord>();
  for (const record of records) {
    const write = parseStored(WriteRecordSchema, record.value, `write ${log.join("/")}#${record.seq}`);
    latest.set(JSON.stringify([write.taskId, write.index]), write); // later special writes replace earlier ones
  }
  return [...latest.values()].sort((left, right) =>
    compareWritesSortKeys(writesSortKey(left.taskPath, left.taskId, left.index), writesSortKey(right.taskPath, right.taskId, right.index)),
  );
}

/**
 * A stored checkpoint as LangGraph's tuple; `writeLogs`, when given, are the checkpoint ids of
 * its namespace known to have pending writes; `readingWrites`, its pending writes already being
 * read; `loaded`, its state already deserialized.
 */
export async function toTuple(
  context: SaverContext,
  document: CheckpointDocument,
  writeLogs?: ReadonlySet<string>,
  readingWrites?: Promise<WriteRecord[]>,
  loaded?: LoadedState,
): Promise<CheckpointTuple> {
  const { threadId, namespace, checkpointId, parentCheckpointId } = document;
  const state = loaded ?? loadState(context, document);
  const { checkpoint, metadata } = state instanceof Promise ? await state : state;
  const hasWrites = writeLogs === undefined || writeLogs.has(checkpointId);
  // Both under way at once; each awaited only when it is a promise.
  const reading = readingWrites ?? (hasWrites ? readWrites(context, threadId, namespace, checkpointId) : undefined);
  const channels = readChannels(context, document);
  reading?.catch(() => undefined); // awaited below, after the channels
  Object.assign(checkpoint.channel_values, channels instanceof Promise ? await channels : channels);
  const writes = reading === undefined ? [] : await reading;
  if (checkpoint.v < 4 && parentCheckpointId !== undefined) await migratePendingSends(context, checkpoint, threadId, namespace, parentCheckpointId);
  const pendingWrites = writes.length === 0 ? [] : await Promise.all(writes.map((write) => loadPendingWrite(context, write)));
  const tuple: CheckpointTuple = { config: configOf(threadId, namespace, checkpointId), checkpoint, metadata, pendingWrites };
  if (parentCheckpointId !== undefined) tuple.parentConfig = configOf(threadId, namespace, parentCheckpointId);
  return tuple;
}

/** A stored pending write as LangGraph's `[taskId, channel, value]`: at once when {@link loadNow} reads its value. */
function loadPendingWrite(context: SaverContext, write: WriteRecord): CheckpointPendingWrite | Promise<CheckpointPendingWrite> {
  const now = loadNow(context, write.value);
  return now === undefined ? reviveValue(context, write.value).then((value) => [write.taskId, write.channel, value]) : [write.taskId, write.channel, now.value];
}

/** Checkpoints before format 4 kept pending sends as the parent's TASKS writes (as LangGraph's savers migrate them). */
async function migratePendingSends(context: SaverContext, checkpoint: Checkpoint, threadId: string, namespace: string, parentCheckpointId: string): Promise<void> {
  const sends = await Promise.all(
    (await readWrites(context, threadId, namespace, parentCheckpointId))
      .filter((write) => write.channel === TASKS)
      .map(async (write) => loadValue(context, write.value)),
  );
  checkpoint.channel_values ??= {};
  checkpoint.channel_values[TASKS] = sends;
  checkpoint.channel_versions ??= {};
  const versions = Object.values(checkpoint.channel_versions);
  checkpoint.channel_versions[TASKS] = versions.length > 0 ? maxChannelVersion(...versions) : context.nextVersion();
}

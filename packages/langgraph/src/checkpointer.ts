import type { RunnableConfig } from "@langchain/core/runnables";
import {
  BaseCheckpointSaver,
  JsonPlusSerializer,
  TASKS,
  WRITES_IDX_MAP,
  compareWritesSortKeys,
  getCheckpointId,
  maxChannelVersion,
  writesSortKey,
  type ChannelVersions,
  type Checkpoint,
  type CheckpointListOptions,
  type CheckpointMetadata,
  type CheckpointPendingWrite,
  type CheckpointTuple,
  type PendingWrite,
} from "@langchain/langgraph-checkpoint";
import { KeelError, digest, type JsonValue } from "@keel/core";
import type { BatchPut, DocMeta, KeelStore } from "@keel/store";
import { MAX_BATCH_WRITES, keyCursor } from "@keel/store/kit";
import type { ResultAsync } from "neverthrow";
import { KeelCheckpointerOptionsSchema, type KeelCheckpointerOptions } from "./checkpointer-options.js";
import { BoundedCache } from "./internal/bounded-cache.js";
import { createCheckpointKeys, encodeSegment, type CheckpointKeys } from "./internal/checkpoint-keys.js";
import { reviveParsedJson } from "./internal/json-plus-revival.js";
import {
  CheckpointDocumentSchema,
  HeadDocumentSchema,
  SerializedSchema,
  WriteRecordSchema,
  fromSerialized,
  isPlainJsonText,
  parseStored,
  toSerialized,
  type CheckpointDocument,
  type Serialized,
  type WriteRecord,
} from "./internal/checkpoint-records.js";

/** A checkpoint document's state, deserialized. */
interface LoadedState {
  checkpoint: Checkpoint;
  metadata: CheckpointMetadata;
}

/** What this saver last saw as the head of a thread and namespace (`version` 0: no head yet). */
interface ObservedHead {
  checkpointId: string | undefined;
  version: number;
}

/** How many listed checkpoints are read ahead at once, one by one (a store without `readPage`). */
const LIST_BATCH = 16;

/** How many listed checkpoints are made into tuples at once (see `list`). */
const LIST_AHEAD = 4;

/** How many listed checkpoints one `readPage` reads. */
const LIST_PAGE = 100;

/** Characters of JSON text each cache of one saver keeps (checkpoint documents; channel blobs). */
const CACHE_CHARS = 4 * 1024 * 1024;

/**
 * The longest serialized channel value (characters of its stored text) kept inline in the
 * checkpoint document. A larger one is a blob of its own, written once and shared by every
 * checkpoint whose channel did not change (a long message history); a small one inline spares
 * a row per changed channel in each `put` (a counter, a flag, the last step's output).
 */
const INLINE_MAX_CHARS = 1024;

/**
 * A channel value kept in the checkpoint's own serialized state: a JSON primitive (a string of
 * at most {@link INLINE_MAX_CHARS} characters), serialized with the checkpoint at no call of its own.
 */
function isSmallPrimitive(value: unknown): boolean {
  return value === null || typeof value === "boolean" || (typeof value === "number" && Number.isFinite(value)) || (typeof value === "string" && value.length <= INLINE_MAX_CHARS);
}

/** A channel blob to store: content-addressed, so an existing one is the same bytes. */
interface BlobWrite {
  key: string[];
  /** Its key in the saver's blob cache: `<scope>/<digest>`. */
  cacheKey: string;
  value: Serialized;
}

/** A store call's value, or its error thrown (one promise: `ResultAsync.then` is its own promise's `then`). */
function unwrap<T>(result: ResultAsync<T, KeelError>): Promise<T> {
  return result.then((settled) => {
    if (settled.isErr()) throw settled.error;
    return settled.value;
  }) as Promise<T>;
}

function configurableString(config: RunnableConfig, field: string): string | undefined {
  const value: unknown = config.configurable?.[field];
  if (value === undefined || value === null || value === "") return field === "checkpoint_ns" && value === "" ? "" : undefined;
  if (typeof value !== "string") {
    throw new KeelError("invalid_input", `config.configurable.${field} must be a string (got ${typeof value})`, { details: { field } });
  }
  return value;
}

function requireThreadId(config: RunnableConfig, operation: string): string {
  const threadId = configurableString(config, "thread_id");
  if (threadId === undefined) {
    throw new KeelError(
      "invalid_input",
      `${operation}: config.configurable.thread_id is missing: pass { configurable: { thread_id: "..." } } so the checkpointer knows which thread to persist`,
      { details: { operation } },
    );
  }
  return threadId;
}

/**
 * A LangGraph.js checkpointer over a Keel store. Checkpoints are documents, each thread and
 * namespace has a head document naming its latest checkpoint, and pending writes are log
 * records keyed by task and index.
 *
 * Differences from LangGraph's own savers, on purpose:
 * - A `put` continuing from the checkpoint this saver last saw as the head must still find it
 *   the head: when another process advanced the thread meanwhile, the `put` fails with
 *   `conflict` instead of silently forking the thread. A `put` from an older checkpoint (time
 *   travel, `updateState` on history) forks as usual.
 * - Repeating a pending write of the same task and index with the same value is a no-op; with a
 *   different value it is `conflict` (LangGraph's savers keep the first silently). The special
 *   channels (error, interrupt, resume, scheduled) are replaced, as LangGraph expects.
 * - A stored value that does not parse is `corrupt`, never a missing checkpoint.
 *
 * Over a store with `docs.batch` (capability `batchWrites`: memory, SQLite, PostgreSQL) a `put`
 * continuing from the head this saver last saw is one transaction (blobs, checkpoint, head);
 * otherwise (the fs store) its writes are made one by one, the head last. Checkpoint documents
 * and blobs never change once written, so the saver keeps the ones it wrote or read in a
 * bounded cache; heads are always read from the store.
 *
 * Errors are thrown as {@link KeelError} (the saver's methods are LangGraph's Promise API).
 */
export class KeelCheckpointSaver extends BaseCheckpointSaver {
  readonly #store: KeelStore;
  readonly #keys: CheckpointKeys;
  readonly #observed = new Map<string, ObservedHead>();
  readonly #documents = new BoundedCache<CheckpointDocument>(CACHE_CHARS);
  /** `putWrites` in flight, by writes log (LangGraph does not await them before the next `put`). */
  readonly #writesInFlight = new Map<string, Set<Promise<void>>>();
  /** Writes logs where this saver's `putWrites` lost to another writer's (a `conflict`), not yet reported by a `put`. */
  readonly #lostWrites = new Set<string>();
  readonly #blobs = new BoundedCache<Serialized>(CACHE_CHARS);
  /** The inline channel values of checkpoint documents this saver wrote or deserialized (primitives: safe to share). */
  readonly #inlineValues = new WeakMap<CheckpointDocument, Record<string, unknown>>();
  /** The serializer is LangGraph's own `JsonPlusSerializer`, not a subclass or another one (see {@link KeelCheckpointSaver.#load}). */
  readonly #defaultSerde: boolean;

  /** Use {@link createKeelCheckpointer}. */
  constructor(options: KeelCheckpointerOptions) {
    const parsed = KeelCheckpointerOptionsSchema.safeParse(options);
    if (!parsed.success) {
      throw new KeelError("invalid_input", `createKeelCheckpointer: ${parsed.error.issues.map((issue) => `${issue.path.join(".")}: ${issue.message}`).join("; ")}`);
    }
    super(options.serde);
    this.#store = options.store;
    this.#keys = createCheckpointKeys(options.prefix ?? ["langgraph"]);
    this.#defaultSerde = Object.getPrototypeOf(this.serde) === JsonPlusSerializer.prototype;
  }

  /**
   * A stored value, deserialized at once when it can be: under LangGraph's own serializer, JSON
   * text in which nothing can be revived (see {@link isPlainJsonText}) is what `JSON.parse`
   * gives, so the serializer's walk over every node (a promise each) is skipped. Undefined when
   * the serializer must decide ({@link KeelCheckpointSaver.#load}); any other serializer always does.
   */
  #loadNow(serialized: Serialized): { value: unknown } | undefined {
    if (this.#defaultSerde && serialized.type === "json" && serialized.encoding === "utf8" && isPlainJsonText(serialized.data)) return { value: JSON.parse(serialized.data) };
    return undefined;
  }

  /** A stored value, deserialized: at once when {@link KeelCheckpointSaver.#loadNow} can, else by the serializer. */
  async #load(serialized: Serialized): Promise<unknown> {
    const now = this.#loadNow(serialized);
    return now === undefined ? this.#revive(serialized) : now.value;
  }

  /**
   * A stored value, deserialized (for a caller that already tried {@link KeelCheckpointSaver.#loadNow}):
   * under LangGraph's own serializer, LangChain objects in plain JSON are loaded as it would load
   * them, without its walk (see {@link reviveParsedJson}); anything else by the serializer.
   */
  async #revive(serialized: Serialized): Promise<unknown> {
    if (this.#defaultSerde && serialized.type === "json" && serialized.encoding === "utf8") {
      const revived = reviveParsedJson(JSON.parse(serialized.data));
      if (revived !== undefined) return revived.value;
    }
    return this.serde.loadsTyped(serialized.type, fromSerialized(serialized));
  }

  /** Reads one checkpoint (by `checkpoint_id`) or the thread's latest, with its pending writes. */
  async getTuple(config: RunnableConfig): Promise<CheckpointTuple | undefined> {
    const threadId = configurableString(config, "thread_id");
    if (threadId === undefined) return undefined;
    const namespace = configurableString(config, "checkpoint_ns") ?? "";
    let checkpointId = getCheckpointId(config) || undefined;
    const fromHead = checkpointId === undefined;
    let writes: Promise<WriteRecord[]> | undefined;
    if (checkpointId === undefined) {
      const headKey = this.#keys.head(threadId, namespace);
      const observedKey = this.#observedKey(threadId, namespace);
      // The head most likely still names the checkpoint this saver saw last: its pending writes
      // are read alongside the head (one round trip instead of two), and used only if it does.
      const expected = this.#observed.get(observedKey)?.checkpointId;
      const speculative = expected === undefined ? undefined : this.#readWrites(threadId, namespace, expected);
      speculative?.catch(() => undefined); // awaited below only when the head names it
      const head = await unwrap(this.#store.docs.get(headKey));
      if (!head) {
        this.#observed.set(observedKey, { checkpointId: undefined, version: 0 });
        return undefined;
      }
      checkpointId = parseStored(HeadDocumentSchema, head.value, `head ${headKey.join("/")}`).checkpointId;
      this.#observed.set(observedKey, { checkpointId, version: head.version });
      if (checkpointId === expected) writes = speculative;
    }
    // The head, just read, names a checkpoint that never changes: a cached copy is current.
    const key = this.#keys.checkpoint(threadId, namespace, checkpointId);
    const document = (fromHead ? this.#documents.get(key.join("/")) : undefined) ?? (await this.#readCheckpoint(key));
    return document === undefined ? undefined : this.#toTuple(document, undefined, writes);
  }

  /** Lists checkpoints, newest first, filtered by thread, namespace, `before`, metadata `filter`, at most `limit`. */
  async *list(config: RunnableConfig, options?: CheckpointListOptions): AsyncGenerator<CheckpointTuple> {
    const threadId = configurableString(config, "thread_id");
    const namespace = configurableString(config, "checkpoint_ns");
    const onlyId = getCheckpointId(config) || undefined;
    const beforeId = options?.before ? getCheckpointId(options.before) || undefined : undefined;
    const filter = options?.filter;
    let remaining = options?.limit;
    if (remaining !== undefined && (!Number.isInteger(remaining) || remaining < 0)) {
      throw new KeelError("invalid_input", `list: limit must be a non-negative integer (got ${String(remaining)})`);
    }
    const prefix = threadId === undefined ? this.#keys.threads() : namespace === undefined ? this.#keys.thread(threadId) : this.#keys.checkpoints(threadId, namespace);
    const wantedNamespace = namespace === undefined ? undefined : encodeSegment(namespace);
    const groups = new Map<string, DocMeta[]>();
    for (const meta of await this.#listAll(prefix)) {
      // [...prefix, "threads", thread, "ns", namespace, "checkpoints", id]
      if (meta.key.at(-2) !== "checkpoints") continue;
      if (wantedNamespace !== undefined && meta.key.at(-3) !== wantedNamespace) continue;
      const id = meta.key.at(-1) ?? "";
      if (onlyId !== undefined && id !== onlyId) continue;
      if (beforeId !== undefined && id >= beforeId) continue;
      const group = meta.key.slice(0, -1).join("/");
      let metas = groups.get(group);
      if (!metas) groups.set(group, (metas = []));
      metas.push(meta);
    }
    for (const metas of groups.values()) {
      metas.sort((left, right) => ((left.key.at(-1) ?? "") < (right.key.at(-1) ?? "") ? -1 : 1));
      // Which checkpoints of the namespace have pending writes: one listing, not a read each.
      const writesPrefix = [...metas[0]!.key.slice(0, -2), "writes"];
      const logs = await unwrap(this.#store.logs.list(writesPrefix));
      const writeLogs = new Set(logs.filter((key) => key.length === writesPrefix.length + 1).map((key) => key.at(-1)!));
      // Newest first: read chunks from the end, each at once, and yield each newest first.
      let end = metas.length;
      while (end > 0) {
        if (remaining !== undefined && remaining <= 0) return;
        const start = Math.max(0, end - (remaining === undefined ? LIST_PAGE : Math.min(LIST_PAGE, remaining)));
        const documents = await this.#readListed(metas, start, end);
        end = start;
        // Newest first, at most LIST_AHEAD tuples being made at once: the serializer's walk over
        // a value (LangChain messages) is a promise per node, and a whole page of them at once
        // only piles up garbage; a few ahead still overlap the reads of pending writes.
        const pending = documents.reverse();
        const ahead: Promise<CheckpointTuple | undefined>[] = [];
        let next = 0;
        while (next < pending.length || ahead.length > 0) {
          while (next < pending.length && ahead.length < LIST_AHEAD) {
            const document = pending[next++];
            const making = document === undefined ? Promise.resolve(undefined) : this.#listed(document, filter, writeLogs);
            making.catch(() => undefined); // awaited in its turn
            ahead.push(making);
          }
          const tuple = await ahead.shift();
          if (tuple === undefined) continue;
          if (remaining !== undefined && remaining <= 0) return;
          if (remaining !== undefined) remaining -= 1;
          yield tuple;
        }
      }
    }
  }

  /**
   * The checkpoint documents of `metas[start..end)` (one namespace, ascending), in that order;
   * undefined for one deleted since listed. With `readPage`, one read of the page after
   * `metas[start - 1]`; a key it did not return (deleted, or pushed out by a checkpoint written
   * since) is read alone.
   */
  async #readListed(metas: DocMeta[], start: number, end: number): Promise<(CheckpointDocument | undefined)[]> {
    const chunk = metas.slice(start, end);
    const parse = (key: string[], value: JsonValue) => parseStored(CheckpointDocumentSchema, value, `checkpoint ${key.join("/")}`);
    const readOne = async (key: string[]) => {
      const stored = await unwrap(this.#store.docs.get(key));
      return stored === undefined ? undefined : parse(key, stored.value);
    };
    const readPage = this.#store.capabilities.pageReads === true ? this.#store.docs.readPage?.bind(this.#store.docs) : undefined;
    if (readPage === undefined) {
      const out: (CheckpointDocument | undefined)[] = [];
      for (let at = 0; at < chunk.length; at += LIST_BATCH) out.push(...(await Promise.all(chunk.slice(at, at + LIST_BATCH).map(async (meta) => readOne(meta.key)))));
      return out;
    }
    const previous = metas[start - 1];
    const page = await unwrap(readPage(chunk[0]!.key.slice(0, -1), previous === undefined ? { limit: chunk.length } : { after: keyCursor(previous.key), limit: chunk.length }));
    const found = new Map(page.items.map((doc) => [doc.key.join("/"), doc]));
    return Promise.all(
      chunk.map(async (meta) => {
        const doc = found.get(meta.key.join("/"));
        return doc === undefined ? readOne(meta.key) : parse(doc.key, doc.value);
      }),
    );
  }

  /** One listed checkpoint as a tuple, or undefined when not matching `filter`. */
  async #listed(document: CheckpointDocument, filter: Record<string, unknown> | undefined, writeLogs: ReadonlySet<string>): Promise<CheckpointTuple | undefined> {
    const loaded = this.#loadState(document);
    const state = loaded instanceof Promise ? await loaded : loaded;
    if (filter) {
      const metadata = state.metadata as Record<string, unknown>;
      if (!Object.entries(filter).every(([name, value]) => metadata[name] === value)) return undefined;
    }
    return this.#toTuple(document, writeLogs, undefined, state);
  }

  /**
   * Stores a checkpoint and makes it the head of its thread and namespace. Fails with
   * `conflict` when the thread was advanced by another writer since this saver read the
   * checkpoint it continues from.
   */
  async put(config: RunnableConfig, checkpoint: Checkpoint, metadata: CheckpointMetadata, newVersions: ChannelVersions): Promise<RunnableConfig> {
    if (config.configurable === undefined) {
      throw new KeelError("invalid_input", "put: config.configurable is missing: pass { configurable: { thread_id: \"...\" } }");
    }
    const threadId = requireThreadId(config, "put");
    const namespace = configurableString(config, "checkpoint_ns") ?? "";
    const parentCheckpointId = getCheckpointId(config) || undefined;
    const { channels, blobs, inline } = await this.#channelsOf(threadId, namespace, parentCheckpointId, checkpoint.channel_values, newVersions);
    // The checkpoint (its small primitive channel values in it) and its metadata: one serializer call.
    const [stateType, stateBytes] = await this.serde.dumpsTyped({ checkpoint: { ...checkpoint, channel_values: inline }, metadata });
    const state = toSerialized(stateType, stateBytes);
    const document: CheckpointDocument = {
      threadId,
      namespace,
      checkpointId: checkpoint.id,
      ...(parentCheckpointId === undefined ? {} : { parentCheckpointId }),
      state,
      channels,
    };
    this.#inlineValues.set(document, inline);
    if (parentCheckpointId !== undefined && (this.#writesInFlight.size > 0 || this.#lostWrites.size > 0)) await this.#checkParentWrites(threadId, namespace, parentCheckpointId);
    const observed = this.#observed.get(this.#observedKey(threadId, namespace));
    // Continuing from the head this saver saw: one atomic batch, its head write checked by CAS.
    if (observed !== undefined && observed.checkpointId === parentCheckpointId && (await this.#putBatched(document, blobs, observed))) {
      return this.#configOf(threadId, namespace, checkpoint.id);
    }
    return this.#putOneByOne(document, blobs);
  }

  /**
   * The fast `put`: blobs, checkpoint and head in one `docs.batch`, the head's version the one
   * observed. A blob already stored (content-addressed: the same bytes) is dropped from the
   * batch, which runs again. Resolves false when the store has no batch or the checkpoint or
   * head write was refused: {@link KeelCheckpointSaver.#putOneByOne} then decides (a retried
   * put that landed, or `conflict`), reading the head afresh.
   */
  async #putBatched(document: CheckpointDocument, blobs: readonly BlobWrite[], observed: ObservedHead): Promise<boolean> {
    const { threadId, namespace, checkpointId } = document;
    const batch = this.#store.capabilities.batchWrites === true ? this.#store.docs.batch?.bind(this.#store.docs) : undefined;
    if (batch === undefined || blobs.length + 2 > MAX_BATCH_WRITES) return false;
    const key = this.#keys.checkpoint(threadId, namespace, checkpointId);
    const headKey = this.#keys.head(threadId, namespace);
    const tail: BatchPut[] = [
      { key, value: document as unknown as JsonValue, condition: { create: true } },
      { key: headKey, value: { checkpointId }, condition: observed.version === 0 ? { create: true } : { expectedVersion: observed.version } },
    ];
    let pending = [...blobs];
    for (;;) {
      const outcome = await batch([...pending.map((blob): BatchPut => ({ key: blob.key, value: blob.value, condition: { create: true } })), ...tail]);
      if (outcome.isOk()) {
        this.#observed.set(this.#observedKey(threadId, namespace), { checkpointId, version: outcome.value.at(-1)!.version });
        this.#rememberCheckpoint(key, document);
        for (const blob of blobs) this.#rememberBlob(blob.cacheKey, blob.value);
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
   * The `put` of a store without batches, or after a refused batch: blobs, then the checkpoint
   * (create-only; an identical one already there is a retried put), then the head by CAS (from
   * the version observed when continuing from the observed head, else the one read now). A
   * refused head move deletes the checkpoint it wrote and is `conflict`.
   */
  async #putOneByOne(document: CheckpointDocument, blobs: readonly BlobWrite[]): Promise<RunnableConfig> {
    const { threadId, namespace, checkpointId, parentCheckpointId } = document;
    const headKey = this.#keys.head(threadId, namespace);
    const [head] = await Promise.all([
      unwrap(this.#store.docs.get(headKey)),
      ...blobs.map(async (blob) => {
        const written = await this.#store.docs.put(blob.key, blob.value, { create: true });
        if (written.isErr() && written.error.code !== "conflict") throw written.error;
      }),
    ]);
    const key = this.#keys.checkpoint(threadId, namespace, checkpointId);
    const observedKey = this.#observedKey(threadId, namespace);
    const observed = this.#observed.get(observedKey);
    // Continuing from what this saver saw as the head: the head must not have moved since.
    const expectedHeadVersion = observed !== undefined && observed.checkpointId === parentCheckpointId ? observed.version : (head?.version ?? 0);
    if (head && expectedHeadVersion === head.version && parseStored(HeadDocumentSchema, head.value, `head ${headKey.join("/")}`).checkpointId === checkpointId) {
      return this.#configOf(threadId, namespace, checkpointId); // a retried put that already landed
    }
    const written = await this.#store.docs.put(key, document as unknown as JsonValue, { create: true });
    if (written.isErr()) {
      const existing = await unwrap(this.#store.docs.get(key));
      if (!existing || digest(existing.value) !== digest(document as unknown as JsonValue)) throw written.error;
    }
    const moved = await this.#store.docs.put(headKey, { checkpointId }, expectedHeadVersion === 0 ? { create: true } : { expectedVersion: expectedHeadVersion });
    if (moved.isErr()) {
      if (written.isOk()) await this.#store.docs.delete(key, { expectedVersion: written.value.version });
      if (moved.error.code === "conflict" || moved.error.code === "deleted") {
        this.#observed.delete(observedKey);
        throw new KeelError(
          "conflict",
          `thread "${threadId}" (namespace "${namespace}") was advanced by another writer since checkpoint ${parentCheckpointId ?? "(none)"} was read: re-read the thread and run again`,
          { details: { threadId, namespace, parentCheckpointId: parentCheckpointId ?? null, checkpointId }, cause: moved.error },
        );
      }
      throw moved.error;
    }
    this.#observed.set(observedKey, { checkpointId, version: moved.value.version });
    this.#rememberCheckpoint(key, document);
    for (const blob of blobs) this.#rememberBlob(blob.cacheKey, blob.value);
    return this.#configOf(threadId, namespace, checkpointId);
  }

  /**
   * A `put` from a checkpoint whose pending writes this saver failed to store (another writer
   * stored different ones: it ran the same task of the same checkpoint, as two processes
   * resuming one thread do) must not advance the thread with results that lost: it waits for
   * the writes in flight and fails with `conflict` when one lost.
   */
  async #checkParentWrites(threadId: string, namespace: string, parentCheckpointId: string): Promise<void> {
    const log = this.#keys.writes(threadId, namespace, parentCheckpointId).join("/");
    const inFlight = this.#writesInFlight.get(log);
    if (inFlight) await Promise.allSettled([...inFlight]);
    if (!this.#lostWrites.delete(log)) return;
    this.#observed.delete(this.#observedKey(threadId, namespace));
    throw new KeelError(
      "conflict",
      `thread "${threadId}" (namespace "${namespace}"): another writer stored different pending writes for checkpoint ${parentCheckpointId} (it ran the same step): re-read the thread and run again`,
      { details: { threadId, namespace, parentCheckpointId } },
    );
  }

  /** Stores pending writes of one task against a checkpoint, idempotently (see the class notes). */
  async putWrites(config: RunnableConfig, writes: PendingWrite[], taskId: string, taskPath?: string): Promise<void> {
    const checkpointId = getCheckpointId(config) || undefined;
    if (checkpointId === undefined) return this.#putWrites(config, writes, taskId, taskPath); // refused there, with its reason
    const log = this.#keys.writes(requireThreadId(config, "putWrites"), configurableString(config, "checkpoint_ns") ?? "", checkpointId).join("/");
    const work = this.#putWrites(config, writes, taskId, taskPath);
    let inFlight = this.#writesInFlight.get(log);
    if (!inFlight) this.#writesInFlight.set(log, (inFlight = new Set()));
    inFlight.add(work);
    try {
      await work;
    } catch (error) {
      if (KeelError.is(error, "conflict")) this.#lostWrites.add(log);
      throw error;
    } finally {
      inFlight.delete(work);
      if (inFlight.size === 0) this.#writesInFlight.delete(log);
    }
  }

  async #putWrites(config: RunnableConfig, writes: PendingWrite[], taskId: string, taskPath?: string): Promise<void> {
    const threadId = requireThreadId(config, "putWrites");
    const namespace = configurableString(config, "checkpoint_ns") ?? "";
    const checkpointId = getCheckpointId(config) || undefined;
    if (checkpointId === undefined) {
      throw new KeelError("invalid_input", "putWrites: config.configurable.checkpoint_id is missing: writes belong to a stored checkpoint");
    }
    if (typeof taskId !== "string" || taskId.length === 0) throw new KeelError("invalid_input", "putWrites: taskId must be a non-empty string");
    const records = await Promise.all(
      writes.map(async ([channel, value], position) => {
        const [type, bytes] = await this.serde.dumpsTyped(value);
        const index = WRITES_IDX_MAP[channel] ?? position;
        const record: WriteRecord = { taskId, channel, index, taskPath: taskPath ?? "", value: toSerialized(type, bytes) };
        const recordValue = record as unknown as JsonValue;
        // Special channels (negative index) are replaced: a new record per distinct value, the last wins.
        const id = index >= 0 ? JSON.stringify([taskId, index]) : JSON.stringify([taskId, index, digest(recordValue)]);
        return { id, value: recordValue };
      }),
    );
    await unwrap(this.#store.logs.append(this.#keys.writes(threadId, namespace, checkpointId), records));
  }

  /** Deletes every checkpoint and pending write of a thread (all namespaces). */
  async deleteThread(threadId: string): Promise<void> {
    if (typeof threadId !== "string" || threadId.length === 0) throw new KeelError("invalid_input", "deleteThread: threadId must be a non-empty string");
    const prefix = this.#keys.thread(threadId);
    for (const log of await unwrap(this.#store.logs.list(prefix))) await unwrap(this.#store.logs.delete(log));
    for (const meta of await this.#listAll(prefix)) await unwrap(this.#store.docs.delete(meta.key, { unconditional: true }));
    const observedPrefix = `${encodeSegment(threadId)}/`;
    for (const key of this.#observed.keys()) if (key.startsWith(observedPrefix)) this.#observed.delete(key);
    this.#documents.deletePrefix(`${prefix.join("/")}/`);
    this.#blobs.deletePrefix(observedPrefix);
  }

  /**
   * The channel map of a new checkpoint (the parent's, with the channels in `newVersions`
   * replaced), its values kept in the checkpoint itself (`inline`: small primitives, which need
   * no serializer call of their own), and the blobs of the changed larger values, to be written
   * (by content-address: an existing blob is the same bytes by construction). A changed value
   * that is not a small primitive is serialized alone: inline in the map when small, else a blob.
   */
  async #channelsOf(
    threadId: string,
    namespace: string,
    parentCheckpointId: string | undefined,
    values: Record<string, unknown> | undefined,
    newVersions: ChannelVersions,
  ): Promise<{ channels: CheckpointDocument["channels"]; blobs: BlobWrite[]; inline: Record<string, unknown> }> {
    const channels: CheckpointDocument["channels"] = {};
    const inline: Record<string, unknown> = {};
    const changed = newVersions ?? {};
    if (parentCheckpointId !== undefined) {
      const key = this.#keys.checkpoint(threadId, namespace, parentCheckpointId);
      const parent = this.#documents.get(key.join("/")) ?? (await this.#readCheckpoint(key));
      if (parent) {
        let parentInline: Record<string, unknown> | undefined;
        for (const [channel, entry] of Object.entries(parent.channels)) {
          if (channel in changed) continue;
          channels[channel] = entry;
          if (entry !== true) continue;
          parentInline ??= this.#inlineValues.get(parent) ?? (await this.#inlineOf(parent));
          inline[channel] = parentInline[channel];
        }
      }
    }
    const blobs: BlobWrite[] = [];
    // Small primitives need no serializer call: only the other changed values are awaited.
    const serialized: Promise<void>[] = [];
    for (const channel of Object.keys(changed)) {
      const value = values !== undefined && channel in values ? values[channel] : undefined;
      if (value === undefined) {
        channels[channel] = null;
      } else if (isSmallPrimitive(value)) {
        channels[channel] = true;
        inline[channel] = value;
      } else {
        serialized.push(
          this.serde.dumpsTyped(value).then(([type, bytes]) => {
            const blob = toSerialized(type, bytes);
            if (blob.data.length <= INLINE_MAX_CHARS) {
              channels[channel] = blob;
              return;
            }
            const blobDigest = digest(blob).slice("sha256:".length);
            channels[channel] = blobDigest;
            blobs.push({ key: this.#keys.blob(threadId, namespace, blobDigest), cacheKey: this.#blobCacheKey(threadId, namespace, blobDigest), value: blob });
          }),
        );
      }
    }
    if (serialized.length > 0) await Promise.all(serialized);
    return { channels, blobs, inline };
  }

  /** The channel values kept in a checkpoint's own serialized state (remembered, else deserialized). */
  async #inlineOf(document: CheckpointDocument): Promise<Record<string, unknown>> {
    const known = this.#inlineValues.get(document);
    if (known) return known;
    await this.#loadState(document);
    return this.#inlineValues.get(document) ?? {};
  }

  /**
   * A checkpoint document's state, deserialized: its checkpoint (with only its inline channel
   * values) and metadata; the inline values are remembered for a `put` continuing from it. At
   * once (no promise) when {@link KeelCheckpointSaver.#loadNow} reads it; throws `corrupt`.
   */
  #loadState(document: CheckpointDocument): LoadedState | Promise<LoadedState> {
    const now = this.#loadNow(document.state);
    return now === undefined ? this.#revive(document.state).then((loaded) => this.#checkState(document, loaded)) : this.#checkState(document, now.value);
  }

  /** A deserialized checkpoint state, checked for its shape (else `corrupt`); its inline values remembered. */
  #checkState(document: CheckpointDocument, loaded: unknown): LoadedState {
    const state = loaded as { checkpoint?: Checkpoint; metadata?: CheckpointMetadata } | null;
    if (typeof state !== "object" || state === null || typeof state.checkpoint !== "object" || state.checkpoint === null || typeof state.metadata !== "object") {
      throw new KeelError("corrupt", `stored LangGraph checkpoint ${document.checkpointId} does not deserialize to { checkpoint, metadata }`, {
        details: { checkpointId: document.checkpointId },
      });
    }
    state.checkpoint.channel_values ??= {};
    if (!this.#inlineValues.has(document)) this.#inlineValues.set(document, { ...state.checkpoint.channel_values });
    return state as LoadedState;
  }

  /**
   * A checkpoint document read from the store (and cached: it never changes once written; a
   * caller that may use a cached copy looks in `#documents` first, without a promise).
   */
  async #readCheckpoint(key: string[]): Promise<CheckpointDocument | undefined> {
    const text = key.join("/");
    const stored = await unwrap(this.#store.docs.get(key));
    if (!stored) {
      this.#documents.delete(text);
      return undefined;
    }
    const document = parseStored(CheckpointDocumentSchema, stored.value, `checkpoint ${text}`);
    this.#rememberCheckpoint(key, document);
    return document;
  }

  #rememberCheckpoint(key: string[], document: CheckpointDocument): void {
    this.#documents.set(key.join("/"), document, document.state.data.length + 256);
  }

  #rememberBlob(cacheKey: string, blob: Serialized): void {
    this.#blobs.set(cacheKey, blob, blob.data.length + 64);
  }

  #blobCacheKey(threadId: string, namespace: string, blobDigest: string): string {
    return `${this.#keys.scope(threadId, namespace)}/${blobDigest}`;
  }

  /**
   * The channel values of a checkpoint outside its own state: at once (no promise) when each is
   * inline or a cached blob that {@link KeelCheckpointSaver.#loadNow} reads, else a promise.
   */
  #readChannels(document: CheckpointDocument): Record<string, unknown> | Promise<Record<string, unknown>> {
    const values: Record<string, unknown> = {};
    let pending: Promise<void>[] | undefined;
    for (const [channel, entry] of Object.entries(document.channels)) {
      if (entry === null || entry === true) continue; // empty; in the checkpoint's own state
      const blob = typeof entry === "string" ? this.#blobs.get(this.#blobCacheKey(document.threadId, document.namespace, entry)) : entry;
      const now = blob === undefined ? undefined : this.#loadNow(blob);
      if (now !== undefined) {
        values[channel] = now.value;
        continue;
      }
      (pending ??= []).push(
        this.#readChannel(document, channel, blob ?? entry).then((value) => {
          values[channel] = value;
        }),
      );
    }
    return pending === undefined ? values : Promise.all(pending).then(() => values);
  }

  /** One channel value of a checkpoint: deserialized by the serializer, or its blob read from the store first. */
  async #readChannel(document: CheckpointDocument, channel: string, entry: Serialized | string): Promise<unknown> {
    if (typeof entry !== "string") return this.#revive(entry); // #readChannels tried #loadNow
    const key = this.#keys.blob(document.threadId, document.namespace, entry);
    const stored = await unwrap(this.#store.docs.get(key));
    if (!stored) {
      throw new KeelError("corrupt", `checkpoint ${document.checkpointId} refers to channel "${channel}" blob ${key.join("/")}, which is missing`, {
        details: { checkpointId: document.checkpointId, channel, key: key.join("/") },
      });
    }
    const blob = parseStored(SerializedSchema, stored.value, `blob ${key.join("/")}`);
    this.#rememberBlob(this.#blobCacheKey(document.threadId, document.namespace, entry), blob);
    return this.#load(blob);
  }

  #observedKey(threadId: string, namespace: string): string {
    return this.#keys.scope(threadId, namespace);
  }

  #configOf(threadId: string, namespace: string, checkpointId: string): RunnableConfig {
    return { configurable: { thread_id: threadId, checkpoint_ns: namespace, checkpoint_id: checkpointId } };
  }

  async #listAll(prefix: string[]): Promise<DocMeta[]> {
    const all: DocMeta[] = [];
    let after: string | undefined;
    do {
      const page = await unwrap(this.#store.docs.list(prefix, after === undefined ? { limit: 1000 } : { after, limit: 1000 }));
      all.push(...page.items);
      after = page.next;
    } while (after !== undefined);
    return all;
  }

  async #readWrites(threadId: string, namespace: string, checkpointId: string): Promise<WriteRecord[]> {
    const log = this.#keys.writes(threadId, namespace, checkpointId);
    const records = await unwrap(this.#store.logs.read(log));
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
   * A stored checkpoint as LangGraph's tuple; `writeLogs`, when given, are the checkpoint ids
   * of its namespace known to have pending writes; `readWrites`, its pending writes already being read; `loaded`, its
   * state already deserialized.
   */
  async #toTuple(
    document: CheckpointDocument,
    writeLogs?: ReadonlySet<string>,
    readWrites?: Promise<WriteRecord[]>,
    loaded?: LoadedState,
  ): Promise<CheckpointTuple> {
    const { threadId, namespace, checkpointId, parentCheckpointId } = document;
    const state = loaded ?? this.#loadState(document);
    const { checkpoint, metadata } = state instanceof Promise ? await state : state;
    const hasWrites = writeLogs === undefined || writeLogs.has(checkpointId);
    // Both under way at once; each awaited only when it is a promise.
    const reading = readWrites ?? (hasWrites ? this.#readWrites(threadId, namespace, checkpointId) : undefined);
    const channels = this.#readChannels(document);
    reading?.catch(() => undefined); // awaited below, after the channels
    Object.assign(checkpoint.channel_values, channels instanceof Promise ? await channels : channels);
    const writes = reading === undefined ? [] : await reading;
    if (checkpoint.v < 4 && parentCheckpointId !== undefined) await this.#migratePendingSends(checkpoint, threadId, namespace, parentCheckpointId);
    const pendingWrites: CheckpointPendingWrite[] =
      writes.length === 0
        ? []
        : await Promise.all(
            writes.map((write): CheckpointPendingWrite | Promise<CheckpointPendingWrite> => {
              const now = this.#loadNow(write.value);
              return now === undefined ? this.#revive(write.value).then((value) => [write.taskId, write.channel, value]) : [write.taskId, write.channel, now.value];
            }),
          );
    const tuple: CheckpointTuple = {
      config: this.#configOf(threadId, namespace, checkpointId),
      checkpoint,
      metadata,
      pendingWrites,
    };
    if (parentCheckpointId !== undefined) tuple.parentConfig = this.#configOf(threadId, namespace, parentCheckpointId);
    return tuple;
  }

  /** Checkpoints before format 4 kept pending sends as the parent's TASKS writes (as LangGraph's savers migrate them). */
  async #migratePendingSends(checkpoint: Checkpoint, threadId: string, namespace: string, parentCheckpointId: string): Promise<void> {
    const sends = await Promise.all(
      (await this.#readWrites(threadId, namespace, parentCheckpointId))
        .filter((write) => write.channel === TASKS)
        .map(async (write) => this.#load(write.value)),
    );
    checkpoint.channel_values ??= {};
    checkpoint.channel_values[TASKS] = sends;
    checkpoint.channel_versions ??= {};
    const versions = Object.values(checkpoint.channel_versions);
    checkpoint.channel_versions[TASKS] = versions.length > 0 ? maxChannelVersion(...versions) : this.getNextVersion(undefined);
  }
}

/**
 * Creates a LangGraph.js checkpointer over any Keel store; pass it as `checkpointer` to
 * `StateGraph.compile()`. Throws `invalid_input` on bad options.
 *
 * @example
 * ```ts
 * const checkpointer = createKeelCheckpointer({ store: createFsStore({ dir: ".keel" }) });
 * const graph = builder.compile({ checkpointer });
 * await graph.invoke(input, { configurable: { thread_id: "t-1" } });
 * ```
 */
export function createKeelCheckpointer(options: KeelCheckpointerOptions): KeelCheckpointSaver {
  return new KeelCheckpointSaver(options);
}

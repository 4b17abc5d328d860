import type { RunnableConfig } from "@langchain/core/runnables";
import {
  BaseCheckpointSaver,
  TASKS,
  WRITES_IDX_MAP,
  compareWritesSortKeys,
  copyCheckpoint,
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
import type { DocMeta, KeelStore } from "@keel/store";
import type { ResultAsync } from "neverthrow";
import { KeelCheckpointerOptionsSchema, type KeelCheckpointerOptions } from "./checkpointer-options.js";
import { createCheckpointKeys, encodeSegment, type CheckpointKeys } from "./internal/checkpoint-keys.js";
import {
  CheckpointDocumentSchema,
  HeadDocumentSchema,
  SerializedSchema,
  WriteRecordSchema,
  fromSerialized,
  parseStored,
  toSerialized,
  type CheckpointDocument,
  type WriteRecord,
} from "./internal/checkpoint-records.js";

/** What this saver last saw as the head of a thread and namespace (`version` 0: no head yet). */
interface ObservedHead {
  checkpointId: string | undefined;
  version: number;
}

/** How many listed checkpoints are read ahead at once. */
const LIST_BATCH = 16;

async function unwrap<T>(result: ResultAsync<T, KeelError>): Promise<T> {
  const settled = await result;
  if (settled.isErr()) throw settled.error;
  return settled.value;
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
 * Errors are thrown as {@link KeelError} (the saver's methods are LangGraph's Promise API).
 */
export class KeelCheckpointSaver extends BaseCheckpointSaver {
  readonly #store: KeelStore;
  readonly #keys: CheckpointKeys;
  readonly #observed = new Map<string, ObservedHead>();

  /** Use {@link createKeelCheckpointer}. */
  constructor(options: KeelCheckpointerOptions) {
    const parsed = KeelCheckpointerOptionsSchema.safeParse(options);
    if (!parsed.success) {
      throw new KeelError("invalid_input", `createKeelCheckpointer: ${parsed.error.issues.map((issue) => `${issue.path.join(".")}: ${issue.message}`).join("; ")}`);
    }
    super(options.serde);
    this.#store = options.store;
    this.#keys = createCheckpointKeys(options.prefix ?? ["langgraph"]);
  }

  /** Reads one checkpoint (by `checkpoint_id`) or the thread's latest, with its pending writes. */
  async getTuple(config: RunnableConfig): Promise<CheckpointTuple | undefined> {
    const threadId = configurableString(config, "thread_id");
    if (threadId === undefined) return undefined;
    const namespace = configurableString(config, "checkpoint_ns") ?? "";
    let checkpointId = getCheckpointId(config) || undefined;
    if (checkpointId === undefined) {
      const headKey = this.#keys.head(threadId, namespace);
      const head = await unwrap(this.#store.docs.get(headKey));
      const observedKey = this.#observedKey(threadId, namespace);
      if (!head) {
        this.#observed.set(observedKey, { checkpointId: undefined, version: 0 });
        return undefined;
      }
      checkpointId = parseStored(HeadDocumentSchema, head.value, `head ${headKey.join("/")}`).checkpointId;
      this.#observed.set(observedKey, { checkpointId, version: head.version });
    }
    const key = this.#keys.checkpoint(threadId, namespace, checkpointId);
    const stored = await unwrap(this.#store.docs.get(key));
    if (!stored) return undefined;
    return this.#toTuple(parseStored(CheckpointDocumentSchema, stored.value, `checkpoint ${key.join("/")}`));
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
      groups.set(group, [...(groups.get(group) ?? []), meta]);
    }
    for (const metas of groups.values()) {
      metas.sort((left, right) => ((left.key.at(-1) ?? "") < (right.key.at(-1) ?? "") ? 1 : -1));
      // Read ahead in small batches (the reads are independent), yield in order.
      let start = 0;
      while (start < metas.length) {
        if (remaining !== undefined && remaining <= 0) return;
        const size = remaining === undefined ? LIST_BATCH : Math.min(LIST_BATCH, remaining);
        const batch = metas.slice(start, start + size);
        start += size;
        const tuples = await Promise.all(batch.map(async (meta) => this.#listed(meta, filter)));
        for (const tuple of tuples) {
          if (tuple === undefined) continue;
          if (remaining !== undefined && remaining <= 0) return;
          if (remaining !== undefined) remaining -= 1;
          yield tuple;
        }
      }
    }
  }

  /** One listed checkpoint as a tuple, or undefined when deleted since listed or not matching `filter`. */
  async #listed(meta: DocMeta, filter: Record<string, unknown> | undefined): Promise<CheckpointTuple | undefined> {
    const stored = await unwrap(this.#store.docs.get(meta.key));
    if (!stored) return undefined;
    const document = parseStored(CheckpointDocumentSchema, stored.value, `checkpoint ${meta.key.join("/")}`);
    if (filter) {
      const metadata = (await this.serde.loadsTyped(document.metadata.type, fromSerialized(document.metadata))) as Record<string, unknown>;
      if (!Object.entries(filter).every(([name, value]) => metadata[name] === value)) return undefined;
    }
    return this.#toTuple(document);
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
    const prepared = copyCheckpoint(checkpoint);
    const values = prepared.channel_values;
    prepared.channel_values = {};
    const [[checkpointType, checkpointBytes], [metadataType, metadataBytes]] = await Promise.all([
      this.serde.dumpsTyped(prepared),
      this.serde.dumpsTyped(metadata),
    ]);
    const headKey = this.#keys.head(threadId, namespace);
    // The head is read alongside the blob writes; it is checked by CAS when moved, below.
    const [channels, head] = await Promise.all([
      this.#writeChannels(threadId, namespace, parentCheckpointId, values, newVersions),
      unwrap(this.#store.docs.get(headKey)),
    ]);
    const document: CheckpointDocument = {
      threadId,
      namespace,
      checkpointId: checkpoint.id,
      ...(parentCheckpointId === undefined ? {} : { parentCheckpointId }),
      checkpoint: toSerialized(checkpointType, checkpointBytes),
      channels,
      metadata: toSerialized(metadataType, metadataBytes),
    };
    const key = this.#keys.checkpoint(threadId, namespace, checkpoint.id);
    const observedKey = this.#observedKey(threadId, namespace);
    const observed = this.#observed.get(observedKey);
    // Continuing from what this saver saw as the head: the head must not have moved since.
    const expectedHeadVersion = observed !== undefined && observed.checkpointId === parentCheckpointId ? observed.version : (head?.version ?? 0);
    if (head && expectedHeadVersion === head.version && parseStored(HeadDocumentSchema, head.value, `head ${headKey.join("/")}`).checkpointId === checkpoint.id) {
      return this.#configOf(threadId, namespace, checkpoint.id); // a retried put that already landed
    }
    const written = await this.#store.docs.put(key, document as unknown as JsonValue, { create: true });
    if (written.isErr()) {
      const existing = await unwrap(this.#store.docs.get(key));
      if (!existing || digest(existing.value) !== digest(document as unknown as JsonValue)) throw written.error;
    }
    const headValue = { checkpointId: checkpoint.id };
    const moved = await this.#store.docs.put(headKey, headValue, expectedHeadVersion === 0 ? { create: true } : { expectedVersion: expectedHeadVersion });
    if (moved.isErr()) {
      if (written.isOk()) await this.#store.docs.delete(key, { expectedVersion: written.value.version });
      if (moved.error.code === "conflict" || moved.error.code === "deleted") {
        this.#observed.delete(observedKey);
        throw new KeelError(
          "conflict",
          `thread "${threadId}" (namespace "${namespace}") was advanced by another writer since checkpoint ${parentCheckpointId ?? "(none)"} was read: re-read the thread and run again`,
          { details: { threadId, namespace, parentCheckpointId: parentCheckpointId ?? null, checkpointId: checkpoint.id }, cause: moved.error },
        );
      }
      throw moved.error;
    }
    this.#observed.set(observedKey, { checkpointId: checkpoint.id, version: moved.value.version });
    return this.#configOf(threadId, namespace, checkpoint.id);
  }

  /** Stores pending writes of one task against a checkpoint, idempotently (see the class notes). */
  async putWrites(config: RunnableConfig, writes: PendingWrite[], taskId: string, taskPath?: string): Promise<void> {
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
  }

  /**
   * Stores the values of the channels in `newVersions` as content-addressed blobs (an existing
   * blob is the same bytes by construction) and returns the channel map of the new checkpoint:
   * the parent's references, with the changed channels replaced.
   */
  async #writeChannels(
    threadId: string,
    namespace: string,
    parentCheckpointId: string | undefined,
    values: Record<string, unknown>,
    newVersions: ChannelVersions,
  ): Promise<Record<string, string | null>> {
    let channels: Record<string, string | null> = {};
    const changed = Object.keys(newVersions ?? {});
    if (parentCheckpointId !== undefined) {
      const parentKey = this.#keys.checkpoint(threadId, namespace, parentCheckpointId);
      const parent = await unwrap(this.#store.docs.get(parentKey));
      if (parent) channels = { ...parseStored(CheckpointDocumentSchema, parent.value, `checkpoint ${parentKey.join("/")}`).channels };
    }
    await Promise.all(
      changed.map(async (channel) => {
        if (!(channel in values) || values[channel] === undefined) {
          channels[channel] = null;
          return;
        }
        const [type, bytes] = await this.serde.dumpsTyped(values[channel]);
        const blob = toSerialized(type, bytes);
        const blobDigest = digest(blob).slice("sha256:".length);
        const written = await this.#store.docs.put(this.#keys.blob(threadId, namespace, blobDigest), blob, { create: true });
        if (written.isErr() && written.error.code !== "conflict") throw written.error;
        channels[channel] = blobDigest;
      }),
    );
    return channels;
  }

  async #readChannels(document: CheckpointDocument): Promise<Record<string, unknown>> {
    const values: Record<string, unknown> = {};
    await Promise.all(
      Object.entries(document.channels).map(async ([channel, blobDigest]) => {
        if (blobDigest === null) return;
        const key = this.#keys.blob(document.threadId, document.namespace, blobDigest);
        const stored = await unwrap(this.#store.docs.get(key));
        if (!stored) {
          throw new KeelError("corrupt", `checkpoint ${document.checkpointId} refers to channel "${channel}" blob ${key.join("/")}, which is missing`, {
            details: { checkpointId: document.checkpointId, channel, key: key.join("/") },
          });
        }
        const blob = parseStored(SerializedSchema, stored.value, `blob ${key.join("/")}`);
        values[channel] = await this.serde.loadsTyped(blob.type, fromSerialized(blob));
      }),
    );
    return values;
  }

  #observedKey(threadId: string, namespace: string): string {
    return `${encodeSegment(threadId)}/${encodeSegment(namespace)}`;
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

  async #toTuple(document: CheckpointDocument): Promise<CheckpointTuple> {
    const { threadId, namespace, checkpointId, parentCheckpointId } = document;
    const checkpoint = (await this.serde.loadsTyped(document.checkpoint.type, fromSerialized(document.checkpoint))) as Checkpoint;
    const [channelValues, writes] = await Promise.all([this.#readChannels(document), this.#readWrites(threadId, namespace, checkpointId)]);
    checkpoint.channel_values = { ...checkpoint.channel_values, ...channelValues };
    if (checkpoint.v < 4 && parentCheckpointId !== undefined) await this.#migratePendingSends(checkpoint, threadId, namespace, parentCheckpointId);
    const pendingWrites: CheckpointPendingWrite[] = await Promise.all(
      writes.map(
        async (write): Promise<CheckpointPendingWrite> => [write.taskId, write.channel, await this.serde.loadsTyped(write.value.type, fromSerialized(write.value))],
      ),
    );
    const tuple: CheckpointTuple = {
      config: this.#configOf(threadId, namespace, checkpointId),
      checkpoint,
      metadata: (await this.serde.loadsTyped(document.metadata.type, fromSerialized(document.metadata))) as CheckpointMetadata,
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
        .map(async (write) => this.serde.loadsTyped(write.value.type, fromSerialized(write.value))),
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

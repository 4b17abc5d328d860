import type { RunnableConfig } from "@langchain/core/runnables";
import {
  BaseCheckpointSaver,
  JsonPlusSerializer,
  type ChannelVersions,
  type Checkpoint,
  type CheckpointListOptions,
  type CheckpointMetadata,
  type CheckpointTuple,
  type PendingWrite,
} from "@langchain/langgraph-checkpoint";
import { KeelCheckpointerOptionsSchema, type KeelCheckpointerOptions } from "./checkpointer-options.js";
import { BoundedCache } from "./internal/bounded-cache.js";
import { ThreadIdInputSchema, parseInput } from "./internal/checkpoint-input.js";
import { createCheckpointKeys, encodeSegment } from "./internal/checkpoint-keys.js";
import { listAll, listTuples } from "./internal/checkpoint-list.js";
import { putPendingWrites } from "./internal/checkpoint-put-writes.js";
import { putCheckpoint } from "./internal/checkpoint-put.js";
import { readTuple } from "./internal/checkpoint-read.js";
import { unwrap, type SaverContext } from "./internal/saver-context.js";

/**
 * Characters of JSON text each cache of one saver keeps (checkpoint documents; channel blobs).
 * The caches serve the put + getTuple step and the listing (bench/README.md, langgraph issue 22).
 */
const CACHE_CHARS = 4 * 1024 * 1024;

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
 * otherwise (the fs store) its writes are made one by one, the head last. The values a step
 * changed are kept in its checkpoint document (up to 256 KiB in all), so a chat step, which
 * changes its growing history, writes its checkpoint and the head, no blob; a large value
 * carried over unchanged becomes a content-addressed blob, shared from then on. Checkpoint documents
 * and blobs never change once written, so the saver keeps the ones it wrote or read in a
 * bounded cache; heads are always read from the store.
 *
 * Errors are thrown as `KeelError` (the saver's methods are LangGraph's Promise API).
 */
export class KeelCheckpointSaver extends BaseCheckpointSaver {
  /**
   * What the read, put and list paths (`internal/checkpoint-*.ts`) share. The methods below hand
   * it to them and are not `async` themselves: a wrapper adds no promise to a step.
   */
  readonly #context: SaverContext;

  /** Use {@link createKeelCheckpointer}. */
  constructor(options: KeelCheckpointerOptions) {
    // The store and serializer are the caller's objects (z.custom passes them through), read once.
    const parsed = parseInput(KeelCheckpointerOptionsSchema, options, "createKeelCheckpointer options") as KeelCheckpointerOptions;
    super(parsed.serde);
    // The context reads the saver's public `serde` and its `getNextVersion` (a subclass may
    // override either) at each call, as the methods did.
    const saver = this;
    this.#context = {
      store: parsed.store,
      keys: createCheckpointKeys(parsed.prefix ?? ["langgraph"]),
      get serde() {
        return saver.serde;
      },
      defaultSerde: Object.getPrototypeOf(this.serde) === JsonPlusSerializer.prototype,
      nextVersion: () => saver.getNextVersion(undefined),
      observed: new Map(),
      documents: new BoundedCache(CACHE_CHARS),
      blobs: new BoundedCache(CACHE_CHARS),
      inlineValues: new WeakMap(),
      writesInFlight: new Map(),
      lostWrites: new Set(),
    };
  }

  /** Reads one checkpoint (by `checkpoint_id`) or the thread's latest, with its pending writes. */
  getTuple(config: RunnableConfig): Promise<CheckpointTuple | undefined> {
    return readTuple(this.#context, config);
  }

  /** Lists checkpoints, newest first, filtered by thread, namespace, `before`, metadata `filter`, at most `limit`. */
  list(config: RunnableConfig, options?: CheckpointListOptions): AsyncGenerator<CheckpointTuple> {
    return listTuples(this.#context, config, options);
  }

  /**
   * Stores a checkpoint and makes it the head of its thread and namespace. Fails with
   * `conflict` when the thread was advanced by another writer since this saver read the
   * checkpoint it continues from. Refuses bad arguments, and a value the serializer cannot
   * represent (a BigInt, a cycle, a function), with `invalid_input`, writing nothing.
   */
  put(config: RunnableConfig, checkpoint: Checkpoint, metadata: CheckpointMetadata, newVersions: ChannelVersions): Promise<RunnableConfig> {
    return putCheckpoint(this.#context, config, checkpoint, metadata, newVersions);
  }

  /** Stores pending writes of one task against a checkpoint, idempotently (see the class notes). */
  putWrites(config: RunnableConfig, writes: PendingWrite[], taskId: string, taskPath?: string): Promise<void> {
    return putPendingWrites(this.#context, config, writes, taskId, taskPath);
  }

  /** Deletes every checkpoint and pending write of a thread (all namespaces). */
  async deleteThread(threadId: string): Promise<void> {
    parseInput(ThreadIdInputSchema, threadId, "deleteThread threadId");
    const { store, keys, observed, documents, blobs } = this.#context;
    const prefix = keys.thread(threadId);
    for (const log of await unwrap(store.logs.list(prefix))) await unwrap(store.logs.delete(log));
    for (const meta of await listAll(this.#context, prefix)) await unwrap(store.docs.delete(meta.key, { unconditional: true }));
    const observedPrefix = `${encodeSegment(threadId)}/`;
    for (const key of observed.keys()) if (key.startsWith(observedPrefix)) observed.delete(key);
    documents.deletePrefix(`${prefix.join("/")}/`);
    blobs.deletePrefix(observedPrefix);
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

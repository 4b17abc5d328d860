/**
 * What the checkpointer's read, put and list paths share: the store and key builders, the
 * serializer, and the saver's memory of heads, immutable documents and blobs, and pending writes
 * in flight. `KeelCheckpointSaver` owns one and passes it to the plain functions of
 * `checkpoint-read.ts`, `checkpoint-put.ts`, `checkpoint-put-writes.ts` and `checkpoint-list.ts`.
 */
import type { RunnableConfig } from "@langchain/core/runnables";
import type { Checkpoint, CheckpointMetadata, SerializerProtocol } from "@langchain/langgraph-checkpoint";
import type { KeelError } from "@keel/core";
import type { KeelStore } from "@keel/store";
import type { ResultAsync } from "neverthrow";
import type { BoundedCache } from "./bounded-cache.js";
import type { CheckpointKeys } from "./checkpoint-keys.js";
import type { CheckpointDocument, Serialized } from "./checkpoint-records.js";

/** What this saver last saw as the head of a thread and namespace (`version` 0: no head yet). */
export interface ObservedHead {
  checkpointId: string | undefined;
  version: number;
}

/** A checkpoint document's state, deserialized. */
export interface LoadedState {
  checkpoint: Checkpoint;
  metadata: CheckpointMetadata;
}

/** The state of one saver, shared by its paths. */
export interface SaverContext {
  readonly store: KeelStore;
  readonly keys: CheckpointKeys;
  /** The saver's serializer (read at each call, as `BaseCheckpointSaver.serde` is a public field). */
  readonly serde: SerializerProtocol;
  /** The serializer is LangGraph's own `JsonPlusSerializer`, not a subclass or another one (see `loadNow`). */
  readonly defaultSerde: boolean;
  /** The saver's `getNextVersion` (a subclass may override it). */
  readonly nextVersion: () => number | string;
  /** The head this saver last saw, by scope (`keys.scope`). */
  readonly observed: Map<string, ObservedHead>;
  /** Checkpoint documents this saver wrote or read (create-only: a cached copy is current), by key text. */
  readonly documents: BoundedCache<CheckpointDocument>;
  /** Channel blobs this saver wrote or read (content-addressed), by `<scope>/<digest>`. */
  readonly blobs: BoundedCache<Serialized>;
  /** The inline channel values of checkpoint documents this saver wrote or deserialized (primitives: safe to share). */
  readonly inlineValues: WeakMap<CheckpointDocument, Record<string, unknown>>;
  /** `putWrites` in flight, by writes log (LangGraph does not await them before the next `put`). */
  readonly writesInFlight: Map<string, Set<Promise<void>>>;
  /** Writes logs where this saver's `putWrites` lost to another writer's (a `conflict`), not yet reported by a `put`. */
  readonly lostWrites: Set<string>;
}

/** A store call's value, or its error thrown (one promise: `ResultAsync.then` is its own promise's `then`). */
export function unwrap<T>(result: ResultAsync<T, KeelError>): Promise<T> {
  return result.then((settled) => {
    if (settled.isErr()) throw settled.error;
    return settled.value;
  }) as Promise<T>;
}

/** The config LangGraph reads back for a stored checkpoint. */
export function configOf(threadId: string, namespace: string, checkpointId: string): RunnableConfig {
  return { configurable: { thread_id: threadId, checkpoint_ns: namespace, checkpoint_id: checkpointId } };
}

/** Keeps a checkpoint document this saver wrote or read. */
export function rememberCheckpoint(context: SaverContext, key: string[], document: CheckpointDocument): void {
  let chars = document.state.data.length + 256;
  for (const entry of Object.values(document.channels)) if (entry !== null && typeof entry === "object") chars += entry.data.length;
  context.documents.set(key.join("/"), document, chars);
}

/** Keeps a channel blob this saver wrote or read. */
export function rememberBlob(context: SaverContext, cacheKey: string, blob: Serialized): void {
  context.blobs.set(cacheKey, blob, blob.data.length + 64);
}

/** A blob's key in {@link SaverContext.blobs}. */
export function blobCacheKey(context: SaverContext, threadId: string, namespace: string, blobDigest: string): string {
  return `${context.keys.scope(threadId, namespace)}/${blobDigest}`;
}

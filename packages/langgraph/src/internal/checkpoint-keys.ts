/**
 * Where the checkpointer keeps things in a KeelStore. LangGraph's `thread_id` and
 * `checkpoint_ns` are caller-controlled strings (`""`, `"parent:abc|child:def"`, anything), so each
 * becomes one SafeName segment: `s` + base64url of its UTF-8 bytes, or `h` + its SHA-256 when
 * that would be too long. The encoding is deterministic, so equal strings give equal keys and
 * no string can walk out of its folder. Checkpoint ids stay readable (they are uuid6 and sort by
 * time), and must be SafeNames.
 */
import { createHash } from "node:crypto";
import { KeelError, isSafeName } from "@keel/core";

/** The longest a SafeName may be. */
const MAX_SEGMENT_LENGTH = 128;

/** One SafeName segment for an arbitrary string. */
export function encodeSegment(value: string): string {
  const encoded = `s${Buffer.from(value, "utf8").toString("base64url")}`;
  if (encoded.length <= MAX_SEGMENT_LENGTH) return encoded;
  return `h${createHash("sha256").update(value, "utf8").digest("hex")}`;
}

/** A checkpoint id as a key segment; throws `invalid_input` when it is not a SafeName. */
export function checkpointSegment(checkpointId: string): string {
  if (!isSafeName(checkpointId)) {
    throw new KeelError("invalid_input", `checkpoint id "${checkpointId}" is not a safe name: LangGraph's uuid6 ids are; use letters, digits, '.', '_' or '-'`, {
      details: { checkpointId },
    });
  }
  return checkpointId;
}

/** The key builders of one checkpointer, under its `prefix`. */
export interface CheckpointKeys {
  /** Everything of every thread. */
  threads(): string[];
  /** Everything of one thread. */
  thread(threadId: string): string[];
  /** The checkpoints of one thread and namespace. */
  checkpoints(threadId: string, namespace: string): string[];
  /** One checkpoint document. */
  checkpoint(threadId: string, namespace: string, checkpointId: string): string[];
  /** The head document: which checkpoint is the latest of a thread and namespace. */
  head(threadId: string, namespace: string): string[];
  /** A channel value blob, by the hex SHA-256 of its serialized form. */
  blob(threadId: string, namespace: string, blobDigest: string): string[];
  /** The pending-writes log of one checkpoint. */
  writes(threadId: string, namespace: string, checkpointId: string): string[];
  /** One thread and namespace as a string (`<thread>/<namespace>`, each encoded): a map key. */
  scope(threadId: string, namespace: string): string;
}

/** How many threads and namespaces the key builders keep encoded (cleared when full). */
const ENCODED_SCOPES = 1024;

/** The key builders under `prefix`. */
export function createCheckpointKeys(prefix: readonly string[]): CheckpointKeys {
  const threads = (): string[] => [...prefix, "threads"];
  const thread = (threadId: string): string[] => [...threads(), encodeSegment(threadId)];
  // Encoding a thread and namespace (base64url, or SHA-256 when long) is done once per scope,
  // not at every key of every step.
  const encoded = new Map<string, { key: readonly string[]; scope: string }>();
  const encodedScope = (threadId: string, namespace: string) => {
    const id = `${threadId.length}:${threadId}${namespace}`;
    let entry = encoded.get(id);
    if (entry === undefined) {
      if (encoded.size >= ENCODED_SCOPES) encoded.clear();
      const threadSegment = encodeSegment(threadId);
      const namespaceSegment = encodeSegment(namespace);
      entry = { key: [...threads(), threadSegment, "ns", namespaceSegment], scope: `${threadSegment}/${namespaceSegment}` };
      encoded.set(id, entry);
    }
    return entry;
  };
  const namespaceKey = (threadId: string, namespace: string): string[] => [...encodedScope(threadId, namespace).key];
  return {
    scope: (threadId, namespace) => encodedScope(threadId, namespace).scope,
    threads,
    thread,
    checkpoints: (threadId, namespace) => [...namespaceKey(threadId, namespace), "checkpoints"],
    checkpoint: (threadId, namespace, checkpointId) => [...namespaceKey(threadId, namespace), "checkpoints", checkpointSegment(checkpointId)],
    blob: (threadId, namespace, blobDigest) => [...namespaceKey(threadId, namespace), "blobs", blobDigest],
    head: (threadId, namespace) => [...namespaceKey(threadId, namespace), "head"],
    writes: (threadId, namespace, checkpointId) => [...namespaceKey(threadId, namespace), "writes", checkpointSegment(checkpointId)],
  };
}

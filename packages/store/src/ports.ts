import type { JsonValue, KeelError, SafeName } from "@keel/core";
import type { ResultAsync } from "neverthrow";

/**
 * A storage key: one or more safe-name segments, e.g. `["missions", "m1", "role-sessions", "engineer"]`.
 * Every segment is validated (see `SafeName` in `@keel/core`); at most `MAX_KEY_DEPTH` (16, in `@keel/store/kit`) segments.
 */
export type Key = readonly SafeName[] | readonly string[];

/** A stored JSON document with its store-assigned version. */
export interface Doc<T = JsonValue> {
  /** The key it is stored under. */
  key: string[];
  /** The value, a deep copy: mutating it changes nothing stored. */
  value: T;
  /** Store-assigned, strictly increasing per key (1 for the first write); never from a clock. */
  version: number;
  /** When the store wrote it (ISO 8601, the store's clock); informational only. */
  updatedAt: string;
  /**
   * Present only when the store could not read the document and served an earlier copy (the
   * filesystem store's `.bak`): the value is older than the last acknowledged write, which is
   * lost unless repaired. The store's next write of this key continues above every version it
   * ever acknowledged, so a `{ expectedVersion }` from before the damage is a `conflict`.
   */
  recovered?: RecoveredFrom;
}

/** Where a {@link Doc} served from a backup came from, and why. */
export interface RecoveredFrom {
  /** What was served: the document's backup (the version before the last write). */
  from: "backup";
  /** The damaged (or missing) file. */
  location: string;
  /** What was wrong with it. */
  problem: string;
}

/** A document's metadata, as listed. */
export interface DocMeta {
  key: string[];
  version: number;
  updatedAt: string;
  /** Size of the stored JSON text in bytes. */
  bytes: number;
  /** Present when the listed version is the document's backup (see {@link Doc.recovered}). */
  recovered?: RecoveredFrom;
}

/**
 * A listed key whose document cannot be read at all (it and its backup are damaged): reported
 * beside the good entries instead of failing the whole listing. `get` on it is `corrupt`;
 * `check({ repair: true })` or an unconditional write quarantines it.
 */
export interface DamagedEntry {
  key: string[];
  location: string;
  problem: string;
}

/** One page of {@link DocStore.list}. */
export interface DocPage {
  /** The live, readable documents of the page, in key order. */
  items: DocMeta[];
  /** Keys of the page's range that cannot be read (omitted when there are none). */
  damaged?: DamagedEntry[];
  /** The cursor of the next page, when there is more. */
  next?: string;
}

/**
 * A lease-derived write guard: the write succeeds only while lease `lease` is still held with
 * `token`, checked by the store atomically with the write, by the store's clock.
 */
export interface Fence {
  /** The lease name. */
  lease: string;
  /** The fencing token of the holder's lease. */
  token: number;
}

/**
 * The condition of a document write. Every write is conditional; a blind write must say so.
 * - `{ expectedVersion }`: compare-and-swap; a different current version is `conflict`
 *   (`deleted` when the document was deleted).
 * - `{ create: true }`: only when no live document exists (`conflict` otherwise).
 * - `{ unconditional: true }`: an explicit blind write.
 */
export type PutCondition = { expectedVersion: number } | { create: true } | { unconditional: true };

/** The condition of a document delete. */
export type DeleteCondition = { expectedVersion: number } | { unconditional: true };

/** Write options that may carry a {@link Fence}. */
export interface FenceOption {
  fence?: Fence;
}

/** A page request for {@link DocStore.list}. */
export interface PageRequest {
  /** Continue after this cursor (the `next` of the previous page). */
  after?: string;
  /** At most this many items (default 100, at most 1,000). */
  limit?: number;
}

/** One write of a {@link DocStore.batch}: a document put under its own condition. */
export interface BatchPut {
  key: Key;
  value: JsonValue;
  /** The write's own condition (a batch's fence is the batch's, in {@link FenceOption}). */
  condition: PutCondition;
}

/** What {@link DocStore.batch} reports of each document it wrote (the caller has the values). */
export interface WrittenDoc {
  key: string[];
  /** The document's new version. */
  version: number;
  /** When the store wrote it (ISO 8601, the store's clock). */
  updatedAt: string;
}

/** One page of {@link DocStore.readPage}: documents with their values. */
export interface DocValuePage {
  /** The live, readable documents of the page, in key order, values included. */
  items: Doc[];
  /** Keys of the page's range that cannot be read (omitted when there are none). */
  damaged?: DamagedEntry[];
  /** The cursor of the next page, when there is more. */
  next?: string;
}

/**
 * What the `decide` of a {@link DocStore.update} returns: the document's next value, or
 * `{ none: true }` to write nothing.
 */
export type DocDecision = { value: JsonValue } | { none: true };

/** JSON documents under keys, each replaced atomically under a condition. */
export interface DocStore {
  /** Reads a live document, or `undefined` when there is none (never written, or deleted). */
  get(key: Key): ResultAsync<Doc | undefined, KeelError>;
  /**
   * Writes a document under a condition. Returns the stored document with its new version.
   * Errors: `conflict`, `deleted`, `lease_lost` (fence), `too_large`, `invalid_input`.
   *
   * The value must be plain JSON: `undefined`, functions, symbols as values, bigints, non-finite
   * numbers and class instances are `invalid_input`. Properties keyed by a symbol are not part
   * of a JSON value and are left out, as `JSON.stringify` leaves them out (they are how code
   * tags objects, not data). A document damaged beyond repair (the filesystem store's file and
   * backup both) is `corrupt`, except for `{ unconditional: true }`, which replaces it.
   */
  put(key: Key, value: JsonValue, condition: PutCondition & FenceOption): ResultAsync<Doc, KeelError>;
  /**
   * Deletes a document, leaving a tombstone so that a later write with a stale version fails.
   * Resolves `true` when a live document was deleted, `false` when there was none
   * (an `expectedVersion` on a missing document is `conflict`).
   */
  delete(key: Key, condition: DeleteCondition & FenceOption): ResultAsync<boolean, KeelError>;
  /**
   * Lists live documents whose key starts with `prefix` (any depth below it), in key order
   * (segments compared as strings), a page at a time. Fails closed per entry: a document that
   * cannot be read is listed in `damaged` (and counts towards the page's `limit`), not skipped,
   * and does not fail the listing.
   */
  list(prefix: Key, page?: PageRequest): ResultAsync<DocPage, KeelError>;
  /**
   * Optional (present when {@link StoreCapabilities.batchWrites} is true): writes several
   * documents atomically, all or none, each under its own condition, in one transaction. The
   * first write whose condition fails fails the whole batch with that write's error (`conflict`,
   * `deleted`, `corrupt`), its `details.index` the write's position; nothing is written. The
   * fence, when given, guards the whole batch. At most `MAX_BATCH_WRITES` (100, in `@keel/store/kit`) writes, no key
   * twice (`invalid_input`); values follow the rules of {@link DocStore.put}. An empty batch
   * checks the fence and writes nothing. Resolves each written key's new version, in the writes' order.
   */
  batch?(writes: readonly BatchPut[], options?: FenceOption): ResultAsync<WrittenDoc[], KeelError>;
  /**
   * Optional (present when {@link StoreCapabilities.pageReads} is true): {@link DocStore.list}
   * with the values, the page read at once (one query in the SQL stores) instead of a `get` per
   * listed key. Same order, cursors, limits and fail-closed `damaged` entries as `list`.
   */
  readPage?(prefix: Key, page?: PageRequest): ResultAsync<DocValuePage, KeelError>;
  /**
   * Optional (present when {@link StoreCapabilities.lockedUpdates} is true): a read-modify-write
   * of one document under the store's lock on it, with no compare-and-swap retry by the caller.
   * In one transaction the store locks the document (PostgreSQL: `SELECT … FOR UPDATE`), calls
   * `decide` with it (`undefined` when there is none, or it was deleted), writes the value
   * `decide` returns at the next version (after a tombstone's, as `put` does) and commits.
   * Writers of one key take turns: a concurrent update is never lost and never a `conflict`.
   *
   * `decide` must be pure and synchronous (it runs while the row is locked; keep it short). It
   * may run more than once: two first writers of a new key race to create it, and the loser's
   * transaction runs again with the winner's document. `{ none: true }` writes nothing. The value
   * follows the rules of {@link DocStore.put} (`too_large`, `invalid_input`, nothing written); a
   * `decide` that throws or returns neither shape is `invalid_input`, nothing written. The fence,
   * when given, is checked in the same transaction (`lease_lost`). A stored document that cannot
   * be read is `corrupt`.
   *
   * @returns the document written, or the current one (or `undefined`) when `decide` wrote nothing.
   */
  update?(key: Key, decide: (current: Doc | undefined) => DocDecision, options?: FenceOption): ResultAsync<Doc | undefined, KeelError>;
}


/** One record of a log. */
export interface LogRecord<T = JsonValue> {
  /** Store-assigned, dense within a log's life, strictly increasing; never reused. */
  seq: number;
  /** The caller's id; appending the same id again is idempotent. */
  id: string;
  value: T;
  /** When the store appended it (ISO 8601, the store's clock); informational only. */
  at: string;
}

/** A record to append. */
export interface LogRecordInput {
  /** A caller-chosen id, unique within the log (1 to 256 characters, no control characters). */
  id: string;
  value: JsonValue;
}

/** Options of {@link LogStore.append}. */
export interface AppendOptions extends FenceOption {
  /** The log's current last seq must equal this (0 for an empty or new log), else `conflict`. */
  expectedSeq?: number;
  /**
   * `false` asks for a buffered append: acknowledged once its bytes are with the operating
   * system, before they reach the disk. It is visible to every reader and process at once and
   * survives a crash of the process, like any append; only a stop of the machine (power loss,
   * kernel panic) before the log's next sync may lose it, and then with every later buffered
   * append of that log, never a durable one before it. Dedupe, `expectedSeq` and fences are
   * unchanged. Stores that offer it say so ({@link StoreCapabilities.bufferedAppends}); any
   * other store may ignore it and be durable anyway. Default `true`.
   */
  durable?: boolean;
}

/** The result of {@link LogStore.append}. */
export interface AppendResult {
  /** The log's last seq after the append. */
  lastSeq: number;
  /** How many records were added. */
  appended: number;
  /** How many records were already there with the same id and value (no-ops). */
  deduplicated: number;
}

/** Append-only logs of JSON records, ordered by a store-assigned sequence. */
export interface LogStore {
  /**
   * Appends records atomically (all or none). A record whose id exists with the same value is a
   * no-op (`deduplicated`); with a different value the whole append is `conflict`.
   *
   * An empty batch (or one whose records are all duplicates) writes nothing: it checks its
   * `expectedSeq` and fence, then resolves with the log's current last seq (0 when the log does
   * not exist or was deleted); it never creates a log or brings back a deleted one. Values
   * follow the rules of {@link DocStore.put} (symbol-keyed properties left out).
   */
  append(log: Key, records: readonly LogRecordInput[], options?: AppendOptions): ResultAsync<AppendResult, KeelError>;
  /** Reads records in `seq` order, after `afterSeq` (default 0), at most `limit`. A missing log reads as empty. */
  read(log: Key, options?: { afterSeq?: number; limit?: number }): ResultAsync<LogRecord[], KeelError>;
  /** The log's last seq, or `undefined` when the log does not exist (or was deleted). */
  head(log: Key): ResultAsync<{ lastSeq: number } | undefined, KeelError>;
  /**
   * Deletes a log, leaving a tombstone: seqs are never reused, and an append with an
   * `expectedSeq` from before the delete is `deleted`. Resolves whether a live log was deleted.
   */
  delete(log: Key, options?: FenceOption): ResultAsync<boolean, KeelError>;
  /** Keys of the live logs under `prefix`, in key order. */
  list(prefix: Key): ResultAsync<string[][], KeelError>;
}

/** A held lease. */
export interface Lease {
  /** The lease name (a safe name). */
  name: string;
  /** Who holds it. */
  holder: string;
  /** The fencing token: strictly increasing per name, a new one at each new acquisition. */
  token: number;
  /** When it expires, epoch ms by the store's clock. */
  expiresAt: number;
}

/** Options of {@link LeaseStore.acquire}. */
export interface AcquireOptions {
  /** Time to live in ms (at least 1). */
  ttlMs: number;
  /** How long to wait for a held lease before `lease_held` (default 0: fail at once). */
  waitMs?: number;
  /**
   * Ends the wait early: once it is aborted, no further try is made and `acquire` answers the
   * `KeelError` `aborted` with nothing taken (a lease taken by a try already under way is kept
   * and answered, as if the abort came just after).
   */
  signal?: AbortSignal;
}

/** Named leases with fencing tokens; expiry is judged by the store's clock. */
export interface LeaseStore {
  /**
   * Acquires a lease. A free or expired lease is taken with a new token; the same holder
   * re-acquiring its live lease extends it and keeps its token. Otherwise waits up to `waitMs`,
   * then `lease_held`.
   */
  acquire(name: string, holder: string, options: AcquireOptions): ResultAsync<Lease, KeelError>;
  /** Extends a held lease. `lease_lost` when it expired or another holder took it. */
  renew(lease: Lease, options?: { ttlMs?: number }): ResultAsync<Lease, KeelError>;
  /** Releases a lease; a no-op when it was already lost or released. */
  release(lease: Lease): ResultAsync<void, KeelError>;
  /** The live lease of that name, or `undefined` when free or expired. */
  current(name: string): ResultAsync<Lease | undefined, KeelError>;
}

/** What a store guarantees. */
export interface StoreCapabilities {
  /** Who may share one store safely: one process, the processes of one host, or many hosts. */
  scope: "process" | "host" | "cluster";
  /** Whether an acknowledged write survives a crash (`fsync`) or only the process (`memory`). */
  durability: "memory" | "fsync";
  /** The largest value, in bytes of JSON text, a write accepts. */
  maxValueBytes: number;
  /** Whether the store has {@link DocStore.batch} (atomic multi-document writes). Absent: false. */
  batchWrites?: boolean;
  /** Whether the store has {@link DocStore.readPage} (a page of documents with values at once). Absent: false. */
  pageReads?: boolean;
  /**
   * Whether the store has {@link DocStore.update}: a read-modify-write that locks the document
   * for the time of one decision, so that many writers of one hot document (a budget ledger
   * shared by many hosts) take turns instead of retrying conflicts. Absent: false (use
   * `updateDoc` from `@keel/store/kit`, a compare-and-swap loop).
   */
  lockedUpdates?: boolean;
  /**
   * Whether `append(…, { durable: false })` is cheaper than a durable append: acknowledged before
   * its sync, which the store makes soon after, once for many appends (see
   * {@link AppendOptions.durable}). Absent: false (every append is as durable as `durability`).
   */
  bufferedAppends?: boolean;
}

/** One repair made by {@link KeelStore.check}. */
export interface IntegrityRepair {
  location: string;
  /**
   * `restored-bak`: a damaged document's backup became its current value again (at a new
   * version, the damaged file kept in quarantine); `quarantined`: a document damaged beyond its
   * backup was moved into quarantine and its key left writable (a tombstone above every version
   * it had).
   */
  action: "truncated-tail" | "restored-bak" | "quarantined" | "removed-tmp" | "removed-stale-lock";
  message: string;
}

/** One problem found by {@link KeelStore.check}. */
export interface IntegrityProblem {
  location: string;
  /** `link`: a symbolic link inside the store (the store never follows one; what it points at is not checked). */
  code: "corrupt" | "orphan" | "seq_gap" | "schema" | "link";
  message: string;
}

/** Damaged bytes a store moved aside (kept, never deleted by the store), with the reason. */
export interface QuarantineEntry {
  /** The key of the document they belonged to. */
  key: string[];
  /** Where the damaged bytes are kept now (a directory of the filesystem store). */
  location: string;
  /** Where they were. */
  from: string;
  /** Why they were moved. */
  reason: string;
  /** When (ISO 8601, the store's clock). */
  at: string;
}

/** What {@link KeelStore.check} found and repaired. */
export interface IntegrityReport {
  /** True when no unrepaired problem remains. */
  ok: boolean;
  repaired: IntegrityRepair[];
  problems: IntegrityProblem[];
  /** Everything in the store's quarantine (this check's and earlier ones'), when the store keeps one. */
  quarantined?: QuarantineEntry[];
}

/** A complete store: documents, logs and leases, with its capabilities. */
export interface KeelStore {
  docs: DocStore;
  logs: LogStore;
  leases: LeaseStore;
  capabilities: StoreCapabilities;
  /** Checks stored data; with `repair: true` repairs what is safely repairable and reports it. */
  check(options?: { repair?: boolean }): ResultAsync<IntegrityReport, KeelError>;
  /** Waits for writes in flight and releases resources. Operations after close fail with `unavailable`. */
  close(): Promise<void>;
}

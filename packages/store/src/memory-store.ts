import { KeelError, systemClock, validateOrThrow, type Clock, type JsonValue } from "@keel/core";
import { errAsync, ok, okAsync, type Result, type ResultAsync } from "neverthrow";
import { z } from "zod";
import type { Doc, DocMeta, KeelStore, Lease, LogRecord } from "./ports.js";
import {
  checkFence,
  decideAcquire,
  decideAppend,
  decideBatch,
  decideDelete,
  decidePut,
  decideRelease,
  decideRenew,
  remainingTtl,
  type LeaseState,
} from "./rules.js";
import {
  DEFAULT_MAX_VALUE_BYTES,
  compareKeyToCursor,
  compareKeys,
  encodeValue,
  hasPrefix,
  keyCursor,
  keyPath,
  validateAppend,
  validateBatch,
  validateCheckOptions,
  validateDeleteCondition,
  validateFenceOption,
  validateKey,
  validateLease,
  validatePage,
  validatePutCondition,
  validateReadOptions,
  validateRenewOptions,
} from "./validation.js";
import { pollAcquire } from "./lease-port.js";
import type { Attempt } from "./poll.js";

/** Options of {@link createMemoryStore}. */
export interface MemoryStoreOptions {
  /** The store's clock (lease expiry, timestamps). Default the system clock. */
  clock?: Clock;
  /** The largest value in bytes of JSON text. Default 1 MiB. */
  maxValueBytes?: number;
}

const OptionsSchema = z
  .strictObject({
    clock: z.custom<Clock>((value) => typeof (value as Clock | undefined)?.now === "function", "clock must have now()").optional(),
    maxValueBytes: z.number().int().positive().optional(),
  })
  .optional();

interface DocEntry {
  key: string[];
  text: string;
  bytes: number;
  version: number;
  updatedAt: string;
  deleted: boolean;
}

interface StoredRecord {
  seq: number;
  id: string;
  text: string;
  at: string;
}

interface LogEntry {
  key: string[];
  records: StoredRecord[];
  ids: Map<string, string>;
  lastSeq: number;
  deleted: boolean;
}

/**
 * Creates a store that keeps everything in this process's memory: for tests, examples and
 * short-lived hosts. It keeps every rule of the storage contract (conditional writes,
 * tombstones, fencing, idempotent appends); values are copied in and out, so callers can never
 * mutate stored state. Scope `process`, durability `memory`.
 *
 * @example
 * ```ts
 * const store = createMemoryStore();
 * await store.docs.put(["missions", "m1"], { objective: "ship" }, { create: true });
 * ```
 */
export function createMemoryStore(options: MemoryStoreOptions = {}): KeelStore {
  validateOrThrow(OptionsSchema, options, "memory store options");
  const clock = options.clock ?? systemClock;
  const maxValueBytes = options.maxValueBytes ?? DEFAULT_MAX_VALUE_BYTES;
  const docs = new Map<string, DocEntry>();
  const logs = new Map<string, LogEntry>();
  const leases = new Map<string, LeaseState>();
  let closed = false;

  const iso = () => new Date(clock.now()).toISOString();
  /** Runs a synchronous step as one atomic operation, after the closed check. */
  const run = <T>(step: () => Result<T, KeelError>): ResultAsync<T, KeelError> => {
    if (closed) return errAsync(new KeelError("unavailable", "the memory store is closed", { retryable: false }));
    const result = step();
    return result.isOk() ? okAsync(result.value) : errAsync(result.error);
  };
  /** The live entries of one page under `prefix`, in key order, and the next cursor. */
  const pageOf = (prefix: unknown, page: unknown): Result<{ entries: DocEntry[]; next?: string }, KeelError> =>
    validateKey(prefix, "prefix", true).andThen((segments) =>
      validatePage(page).map(({ after, limit }) => {
        const matching = [...docs.values()]
          .filter((entry) => !entry.deleted && hasPrefix(entry.key, segments))
          .filter((entry) => after === undefined || compareKeyToCursor(entry.key, after) > 0)
          .sort((left, right) => compareKeys(left.key, right.key));
        const entries = matching.slice(0, limit);
        const last = entries[entries.length - 1];
        return matching.length > limit && last ? { entries, next: keyCursor(last.key) } : { entries };
      }),
    );
  const fenceOk = (fence: { lease: string; token: number } | undefined) =>
    fence ? checkFence(leases.get(fence.lease), fence, clock.now()) : ok(undefined);

  return {
    capabilities: { scope: "process", durability: "memory", maxValueBytes, batchWrites: true, pageReads: true },
    docs: {
      get: (key) =>
        run(() =>
          validateKey(key).map((segments) => {
            const entry = docs.get(keyPath(segments));
            if (!entry || entry.deleted) return undefined;
            return toDoc(entry);
          }),
        ),
      put: (key, value, condition) =>
        run(() =>
          validateKey(key).andThen((segments) =>
            validatePutCondition(condition).andThen((parsed) =>
              encodeValue(value, maxValueBytes).andThen((encoded) =>
                fenceOk(parsed.fence).andThen(() => {
                  const path = keyPath(segments);
                  return decidePut(docs.get(path), parsed, path).map((version) => {
                    const entry: DocEntry = { key: segments, ...encoded, version, updatedAt: iso(), deleted: false };
                    docs.set(path, entry);
                    return toDoc(entry);
                  });
                }),
              ),
            ),
          ),
        ),
      delete: (key, condition) =>
        run(() =>
          validateKey(key).andThen((segments) =>
            validateDeleteCondition(condition).andThen((parsed) =>
              fenceOk(parsed.fence).andThen(() => {
                const path = keyPath(segments);
                const current = docs.get(path);
                return decideDelete(current, parsed, path).map((deleted) => {
                  if (deleted && current) docs.set(path, { ...current, text: "null", bytes: 4, version: current.version + 1, updatedAt: iso(), deleted: true });
                  return deleted;
                });
              }),
            ),
          ),
        ),
      list: (prefix, page) =>
        run(() =>
          pageOf(prefix, page).map(({ entries, next }) => ({
            items: entries.map((entry): DocMeta => ({ key: [...entry.key], version: entry.version, updatedAt: entry.updatedAt, bytes: entry.bytes })),
            ...(next === undefined ? {} : { next }),
          })),
        ),
      readPage: (prefix, page) =>
        run(() => pageOf(prefix, page).map(({ entries, next }) => ({ items: entries.map(toDoc), ...(next === undefined ? {} : { next }) }))),
      batch: (writes, batchOptions) =>
        run(() =>
          validateBatch(writes, batchOptions, maxValueBytes).andThen(({ writes: encoded, fence }) =>
            fenceOk(fence).andThen(() =>
              decideBatch(
                encoded.map((write) => docs.get(write.path)),
                encoded,
              ).map((versions) =>
                encoded.map((write, index) => {
                  const entry: DocEntry = { key: write.segments, text: write.text, bytes: write.bytes, version: versions[index]!, updatedAt: iso(), deleted: false };
                  docs.set(write.path, entry);
                  return { key: [...write.segments], version: entry.version, updatedAt: entry.updatedAt };
                }),
              ),
            ),
          ),
        ),
    },
    logs: {
      append: (log, records, appendOptions) =>
        run(() =>
          validateKey(log, "log").andThen((segments) =>
            validateAppend(records, appendOptions, maxValueBytes).andThen(({ records: encoded, options: parsed }) =>
              fenceOk(parsed.fence).andThen(() => {
                const path = keyPath(segments);
                const current = logs.get(path);
                const state = {
                  lastSeq: current?.lastSeq ?? 0,
                  deleted: current?.deleted ?? false,
                  textOf: (id: string) => current?.ids.get(id),
                };
                return decideAppend(state, encoded, parsed.expectedSeq, path).map(({ fresh, deduplicated }) => {
                  const entry: LogEntry =
                    current && !current.deleted ? current : { key: segments, records: [], ids: new Map(), lastSeq: current?.lastSeq ?? 0, deleted: false };
                  const at = iso();
                  for (const record of fresh) {
                    entry.lastSeq += 1;
                    entry.records.push({ seq: entry.lastSeq, id: record.id, text: record.text, at });
                    entry.ids.set(record.id, record.text);
                  }
                  // An empty batch writes nothing: it never creates a log or brings back a deleted one.
                  if (fresh.length === 0) return { lastSeq: current && !current.deleted ? current.lastSeq : 0, appended: 0, deduplicated };
                  logs.set(path, entry);
                  return { lastSeq: entry.lastSeq, appended: fresh.length, deduplicated };
                });
              }),
            ),
          ),
        ),
      read: (log, readOptions) =>
        run(() =>
          validateKey(log, "log").andThen((segments) =>
            validateReadOptions(readOptions).map(({ afterSeq, limit }) => {
              const entry = logs.get(keyPath(segments));
              if (!entry || entry.deleted) return [];
              // Seqs are consecutive from the first record's: start at afterSeq's successor, no scan.
              const first = entry.records[0]?.seq ?? 1;
              const start = Math.max(0, afterSeq - first + 1);
              const out: LogRecord[] = [];
              for (let index = start; index < entry.records.length && out.length < limit; index += 1) {
                const record = entry.records[index]!;
                out.push({ seq: record.seq, id: record.id, value: JSON.parse(record.text) as JsonValue, at: record.at });
              }
              return out;
            }),
          ),
        ),
      head: (log) =>
        run(() =>
          validateKey(log, "log").map((segments) => {
            const entry = logs.get(keyPath(segments));
            return entry && !entry.deleted ? { lastSeq: entry.lastSeq } : undefined;
          }),
        ),
      delete: (log, deleteOptions) =>
        run(() =>
          validateKey(log, "log").andThen((segments) =>
            validateFenceOption(deleteOptions).andThen((parsed) =>
              fenceOk(parsed.fence).map(() => {
                const path = keyPath(segments);
                const entry = logs.get(path);
                if (!entry || entry.deleted) return false;
                logs.set(path, { key: segments, records: [], ids: new Map(), lastSeq: entry.lastSeq, deleted: true });
                return true;
              }),
            ),
          ),
        ),
      list: (prefix) =>
        run(() =>
          validateKey(prefix, "prefix", true).map((segments) =>
            [...logs.values()]
              .filter((entry) => !entry.deleted && hasPrefix(entry.key, segments))
              .map((entry) => [...entry.key])
              .sort(compareKeys),
          ),
        ),
    },
    leases: {
      acquire: (name, holder, acquireOptions) =>
        pollAcquire(name, holder, acquireOptions, (request) =>
          run(() => {
            const decision = decideAcquire(leases.get(request.name), request.name, request.holder, clock.now(), request.ttlMs);
            if (!decision.acquired) return ok<Attempt<Lease, Lease>>({ done: false, last: decision.held });
            leases.set(decision.lease.name, { holder: decision.lease.holder, token: decision.lease.token, expiresAt: decision.lease.expiresAt });
            return ok<Attempt<Lease, Lease>>({ done: true, value: decision.lease });
          }),
        ),
      renew: (lease, renewOptions) =>
        run(() =>
          validateLease(lease).andThen((parsed) =>
            validateRenewOptions(renewOptions).andThen(({ ttlMs }) => {
              const state = leases.get(parsed.name);
              const now = clock.now();
              const ttl = ttlMs ?? remainingTtl(parsed.expiresAt, now);
              return decideRenew(state, parsed, now, ttl).map((renewed) => {
                leases.set(parsed.name, { holder: renewed.holder, token: renewed.token, expiresAt: renewed.expiresAt });
                return renewed;
              });
            }),
          ),
        ),
      release: (lease) =>
        run(() =>
          validateLease(lease).map((parsed) => {
            const next = decideRelease(leases.get(parsed.name), parsed);
            if (next) leases.set(parsed.name, next);
          }),
        ),
      current: (name) =>
        run(() =>
          validateKey([name], "lease name").map(() => {
            const state = leases.get(name);
            return state && state.expiresAt > clock.now() ? { name, ...state } : undefined;
          }),
        ),
    },
    check: (options) => run(() => validateCheckOptions(options).map(() => ({ ok: true, repaired: [], problems: [] }))),
    close: async () => {
      closed = true;
    },
  };
}

function toDoc(entry: DocEntry): Doc {
  return { key: [...entry.key], value: JSON.parse(entry.text) as JsonValue, version: entry.version, updatedAt: entry.updatedAt };
}


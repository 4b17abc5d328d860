import { KeelError, type JsonValue } from "@keel/core";
import { errAsync, okAsync, ResultAsync } from "neverthrow";
import type { Doc, DocStore, Fence, Key, Lease, LeaseStore } from "./ports.js";

/** Options of {@link updateDoc}. */
export interface UpdateDocOptions {
  /** How many times to retry after a `conflict` (default 20). */
  retries?: number;
  /** A fence for every write. */
  fence?: Fence;
  /**
   * The document as the caller last read it (`doc: undefined` when it read none): the first try
   * starts from it instead of reading again. A stale one only costs a `conflict` and a re-read.
   */
  known?: { doc: Doc | undefined };
}

/**
 * Read-modify-write of one document with compare-and-swap: reads the current document (or
 * `undefined`), calls `update` with it, writes the result under `{ expectedVersion }` (or
 * `{ create: true }` when there was none) and, on `conflict`, starts again from a fresh read,
 * so no concurrent update is ever lost. `update` may return `undefined` to write nothing, and
 * must be pure: it can run more than once.
 *
 * @returns the stored document (or the unchanged current one when `update` returned `undefined`).
 */
export function updateDoc<T extends JsonValue>(
  docs: DocStore,
  key: Key,
  update: (current: Doc<T> | undefined) => T | undefined | ResultAsync<T | undefined, KeelError>,
  options: UpdateDocOptions = {},
): ResultAsync<Doc<T> | undefined, KeelError> {
  const retries = options.retries ?? 20;
  const fence = options.fence ? { fence: options.fence } : {};
  const attempt = (left: number): ResultAsync<Doc<T> | undefined, KeelError> => {
    // The first try starts from the document the caller knew, which may have been replaced or
    // deleted since: either way, the next try reads it again.
    const known = left === retries ? options.known : undefined;
    const fromKnown = known !== undefined;
    const read: ResultAsync<Doc | undefined, KeelError> = known ? okAsync(known.doc) : docs.get(key);
    return read.andThen((current) => {
      const typed = current as Doc<T> | undefined;
      const produced = update(typed);
      const next = produced instanceof ResultAsync ? produced : okAsync(produced);
      return next.andThen((value) => {
        if (value === undefined) return okAsync(typed);
        const condition = typed ? { expectedVersion: typed.version, ...fence } : { create: true as const, ...fence };
        return docs
          .put(key, value, condition)
          .map((doc) => doc as Doc<T>)
          .orElse((error) => {
            if ((error.code === "conflict" || (fromKnown && error.code === "deleted")) && left > 0) return attempt(left - 1);
            if (error.code === "conflict") {
              return errAsync(
                new KeelError("conflict", `gave up updating ${key.join("/")} after ${retries + 1} conflicting tries`, {
                  details: { key: key.join("/"), tries: retries + 1 },
                  cause: error,
                }),
              );
            }
            return errAsync(error);
          });
      });
    });
  };
  return attempt(retries);
}

/** Options of {@link withLease}. */
export interface WithLeaseOptions {
  /** Lease time to live (default 30,000 ms). The lease is renewed at a third of it while `work` runs. */
  ttlMs?: number;
  /** How long to wait for the lease (default 10,000 ms). */
  waitMs?: number;
}

/**
 * Runs `work` while holding lease `name` for `holder`, passing the fence to put on its writes.
 * The lease is renewed in the background while `work` runs and released afterwards, whatever
 * the outcome. A lost lease shows up as `lease_lost` on the fenced writes.
 */
export function withLease<T>(
  leases: LeaseStore,
  name: string,
  holder: string,
  work: (fence: Fence, lease: Lease) => ResultAsync<T, KeelError>,
  options: WithLeaseOptions = {},
): ResultAsync<T, KeelError> {
  const ttlMs = options.ttlMs ?? 30_000;
  return leases.acquire(name, holder, { ttlMs, waitMs: options.waitMs ?? 10_000 }).andThen((acquired) => {
    let held = acquired;
    const timer = setInterval(() => {
      void leases.renew(held, { ttlMs }).map((renewed) => {
        held = renewed;
      });
    }, Math.max(10, Math.floor(ttlMs / 3)));
    timer.unref?.();
    const finish = () => {
      clearInterval(timer);
      return leases.release(held).orElse(() => okAsync(undefined));
    };
    return ResultAsync.fromSafePromise(Promise.resolve())
      .andThen(() => work({ lease: held.name, token: held.token }, held))
      .andThen((value) => finish().map(() => value))
      .orElse((error) => finish().andThen(() => errAsync(error)));
  });
}

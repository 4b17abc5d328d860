import { KeelError, type JsonValue } from "@keel/core";
import { err, errAsync, ok, okAsync, ResultAsync, type Result } from "neverthrow";
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
  // One loop over awaited results rather than a chain of ResultAsync steps, each of which costs a
  // promise and a generator: role sessions run this on every turn.
  const run = async (): Promise<Result<Doc<T> | undefined, KeelError>> => {
    for (let left = retries; ; left--) {
      // The first try starts from the document the caller knew, which may have been replaced or
      // deleted since: either way, the next try reads it again.
      const known = left === retries ? options.known : undefined;
      const read = known ? ok(known.doc) : await docs.get(key);
      if (read.isErr()) return err(read.error);
      const current = read.value as Doc<T> | undefined;
      const produced = update(current);
      const next = produced instanceof ResultAsync ? await produced : ok(produced);
      if (next.isErr()) return err(next.error);
      if (next.value === undefined) return ok(current);
      const condition = current ? { expectedVersion: current.version, ...fence } : { create: true as const, ...fence };
      const written = await docs.put(key, next.value, condition);
      if (written.isOk()) return ok(written.value as Doc<T>);
      const error = written.error;
      if ((error.code === "conflict" || (known !== undefined && error.code === "deleted")) && left > 0) continue;
      if (error.code !== "conflict") return err(error);
      return err(
        new KeelError("conflict", `gave up updating ${key.join("/")} after ${retries + 1} conflicting tries`, {
          details: { key: key.join("/"), tries: retries + 1 },
          cause: error,
        }),
      );
    }
  };
  return new ResultAsync(run());
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

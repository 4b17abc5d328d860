import { KeelError, type JsonValue } from "@keel/core";
import { err, ok, ResultAsync, type Result } from "neverthrow";
import type { Doc, DocStore, Fence, Key } from "./ports.js";

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

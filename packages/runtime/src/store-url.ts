import { isAbsolute, resolve } from "node:path";
import { KeelError, toKeelError, validate } from "@keel/core";
import type { KeelStore } from "@keel/store";
import { createFsStore } from "@keel/store-fs";
import { err, ok, ResultAsync, type Result } from "neverthrow";
import { z } from "zod";
import { loadStoreAdapter, storeAdapterImporters, type StoreAdapterImporters } from "./internal/store-adapters.js";

/** Where a store URL points (see {@link parseStoreUrl}). */
export type StoreLocation =
  | { kind: "fs"; dir: string }
  | { kind: "sqlite"; file: string }
  | { kind: "postgres"; connectionString: string; schema: string };

/** Options of {@link openStore}. */
export interface OpenStoreOptions {
  /** The directory relative paths of a URL are resolved against. Default `process.cwd()`. */
  cwd?: string;
  /**
   * `write` (the default) creates a missing store and migrates an older one. `read` creates and
   * migrates nothing: the store must exist at the current layout or schema, and is read once
   * before it is answered, so a store that cannot be read fails here.
   */
  mode?: "write" | "read";
}

const StoreLocationSchema = z.discriminatedUnion("kind", [
  z.strictObject({ kind: z.literal("fs"), dir: z.string().min(1) }),
  z.strictObject({ kind: z.literal("sqlite"), file: z.string().min(1) }),
  z.strictObject({ kind: z.literal("postgres"), connectionString: z.string().min(1), schema: z.string().min(1) }),
]);

const OpenStoreInputSchema = z.strictObject({
  target: z.union([z.string(), StoreLocationSchema]),
  options: z.strictObject({ cwd: z.string().min(1).optional(), mode: z.enum(["write", "read"]).optional() }),
});

const USAGE = "a store URL must be a directory, sqlite:<file> or postgres://…";

/**
 * Reads a store URL, the one syntax {@link openStore} and the `keel` command accept:
 * - a directory (`.keel`, `/srv/keel`): the filesystem store;
 * - `sqlite:<file>` (`sqlite:.keel/keel.db`, `sqlite:///abs/keel.db`): the SQLite store;
 * - `postgres://…` or `postgresql://…`: the PostgreSQL store; `?schema=<name>` picks the
 *   schema (default `keel`) and is taken out of the connection string.
 *
 * Relative paths are resolved against `cwd`. Another `scheme:`, an empty URL, or a control
 * character (NUL among them) anywhere in the URL is `invalid_input`. Pure: nothing is opened.
 */
export function parseStoreUrl(url: string, cwd: string = process.cwd()): Result<StoreLocation, KeelError> {
  if (typeof url !== "string" || url.trim() === "") return err(new KeelError("invalid_input", USAGE, { details: {} }));
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(url)) {
    return err(new KeelError("invalid_input", "a store URL must not contain NUL or other control characters (a NUL would cut the path short and name another store)", { details: {} }));
  }
  const at = (path: string) => (isAbsolute(path) ? path : resolve(cwd, path));
  if (/^postgres(ql)?:\/\//i.test(url)) {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      return err(new KeelError("invalid_input", `${redactStoreUrl(url)} is not a valid postgres:// URL`, { details: {} }));
    }
    const schema = parsed.searchParams.get("schema") ?? "keel";
    parsed.searchParams.delete("schema");
    return ok({ kind: "postgres", connectionString: parsed.toString(), schema });
  }
  if (url.startsWith("sqlite:")) {
    const path = url.slice("sqlite:".length).replace(/^\/\//, "");
    if (path === "") return err(new KeelError("invalid_input", "sqlite: needs a file, e.g. sqlite:.keel/keel.db", { details: {} }));
    return ok({ kind: "sqlite", file: at(path) });
  }
  // A scheme other than a one-letter Windows drive is not a directory.
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]+):/.exec(url);
  if (scheme) {
    return err(new KeelError("invalid_input", `unknown store URL scheme "${scheme[1]}:": use a directory, sqlite:<file> or postgres://…`, { details: { scheme: scheme[1]! } }));
  }
  return ok({ kind: "fs", dir: at(url) });
}

/** A store URL fit to print or log: the password of a `postgres://` URL is masked. */
export function redactStoreUrl(url: string): string {
  return url.replace(/^(postgres(?:ql)?:\/\/[^:/@]+:)[^@]*@/i, "$1***@");
}

/**
 * Opens the store a URL (see {@link parseStoreUrl}) or a parsed {@link StoreLocation} names.
 * The SQL adapters are optional peers, imported only when a URL asks for one: a user of the
 * filesystem store never loads better-sqlite3 or pg.
 *
 * Errors (`code`):
 * - `invalid_input` — a bad URL, location or option;
 * - `unavailable` — the adapter package is not installed (`details.package`, and
 *   `details.install`, e.g. `npm install @keel/store-sqlite`) or cannot be loaded;
 * - with `mode: "read"`: `not_found` for a missing store, `unsupported` for one at another
 *   layout or schema version, `corrupt` for a torn layout marker;
 * - the adapter's own errors at open (`io_failed`, …).
 *
 * The caller closes the store it receives; on every failure nothing is left open.
 *
 * @example
 * ```ts
 * const opened = await openStore("sqlite:.keel/keel.db");
 * if (opened.isErr()) throw opened.error; // e.g. code "unavailable": npm install @keel/store-sqlite
 * const keel = createKeel({ store: opened.value, backends });
 * // … then keel.close() and opened.value.close()
 * ```
 */
export function openStore(target: string | StoreLocation, options: OpenStoreOptions = {}): ResultAsync<KeelStore, KeelError> {
  return openStoreWith(target, options, storeAdapterImporters);
}

/** {@link openStore} with the adapter importers given (tests hand in missing ones). Not exported by the package. */
export function openStoreWith(target: string | StoreLocation, options: OpenStoreOptions, importers: StoreAdapterImporters): ResultAsync<KeelStore, KeelError> {
  const input = validate(OpenStoreInputSchema, { target, options }, "openStore arguments");
  if (input.isErr()) return new ResultAsync(Promise.resolve(err(input.error)));
  const { cwd, mode = "write" } = input.value.options;
  const location = typeof target === "string" ? parseStoreUrl(target, cwd ?? process.cwd()) : ok(input.value.target as StoreLocation);
  if (location.isErr()) return new ResultAsync(Promise.resolve(err(location.error)));
  return new ResultAsync(open(location.value, mode, importers));
}

async function open(location: StoreLocation, mode: "write" | "read", importers: StoreAdapterImporters): Promise<Result<KeelStore, KeelError>> {
  const read = mode === "read";
  let store: KeelStore;
  try {
    switch (location.kind) {
      case "fs":
        store = createFsStore({ dir: location.dir, ...(read ? { create: false } : {}) });
        break;
      case "sqlite": {
        const { createSqliteStore } = await loadStoreAdapter("sqlite", importers);
        store = createSqliteStore({ file: location.file, ...(read ? { create: false, migrate: false } : {}) });
        break;
      }
      case "postgres": {
        const { createPostgresStore } = await loadStoreAdapter("postgres", importers);
        const { connectionString, schema } = location;
        store = createPostgresStore({ connectionString, schema, ...(read ? { create: false, migrate: false } : {}) });
        break;
      }
    }
  } catch (error) {
    return err(toKeelError(error, "io_failed", "cannot open the store"));
  }
  if (!read) return ok(store);
  // Read once, so a store that cannot be read fails here, before the caller opens anything else.
  const probe = await store.docs.list([], { limit: 1 });
  if (probe.isErr()) {
    await store.close();
    return err(probe.error);
  }
  return ok(store);
}

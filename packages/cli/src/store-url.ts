import { isAbsolute, resolve } from "node:path";
import { KeelError } from "@keel/core";
import type { KeelStore } from "@keel/store";
import { createFsStore } from "@keel/store-fs";
import { createPostgresStore } from "@keel/store-postgres";
import { createSqliteStore } from "@keel/store-sqlite";
import { err, ok, type Result } from "neverthrow";

/** Where a store URL points. */
export type StoreLocation =
  | { kind: "fs"; dir: string }
  | { kind: "sqlite"; file: string }
  | { kind: "postgres"; connectionString: string; schema: string };

/**
 * Reads a store URL, the one syntax `keel` and {@link openStoreUrl} accept:
 * - a directory (`.keel`, `/srv/keel`): the filesystem store;
 * - `sqlite:<file>` (`sqlite:.keel/keel.db`, `sqlite:///abs/keel.db`): the SQLite store;
 * - `postgres://…` or `postgresql://…`: the PostgreSQL store; `?schema=<name>` picks the
 *   schema (default `keel`) and is taken out of the connection string.
 * Relative paths are resolved against `cwd`. Another `scheme:` is `invalid_input`.
 */
export function parseStoreUrl(url: string, cwd: string = process.cwd()): Result<StoreLocation, KeelError> {
  if (typeof url !== "string" || url.trim() === "") return err(new KeelError("invalid_input", "a store URL must be a directory, sqlite:<file> or postgres://…", { details: {} }));
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

/** A store URL fit to print: the password of a postgres:// URL is masked. */
export function redactStoreUrl(url: string): string {
  return url.replace(/^(postgres(?:ql)?:\/\/[^:/@]+:)[^@]*@/i, "$1***@");
}

/**
 * Opens the store a URL names (see {@link parseStoreUrl}). This is the one place that knows the
 * store adapters by name: `createKeel` takes it as its `openStore` option, so the runtime itself
 * names none.
 *
 * @throws KeelError `invalid_input` for a bad URL, and the adapter's own errors at open.
 */
export function openStoreUrl(url: string, cwd: string = process.cwd()): KeelStore {
  const location = parseStoreUrl(url, cwd);
  if (location.isErr()) throw location.error;
  return openStoreLocation(location.value);
}

/** Opens a parsed {@link StoreLocation}. */
export function openStoreLocation(location: StoreLocation): KeelStore {
  switch (location.kind) {
    case "fs":
      return createFsStore({ dir: location.dir });
    case "sqlite":
      return createSqliteStore({ file: location.file });
    case "postgres":
      return createPostgresStore({ connectionString: location.connectionString, schema: location.schema });
  }
}

import { KeelError } from "@keel/core";
import type { KeelStore } from "@keel/store";

/**
 * The SQL store adapters, loaded only when a URL names them: they are optional peers of
 * `@keel/runtime` (and of `@keel/cli`), so a user of the filesystem store never installs or
 * loads better-sqlite3 or pg. Each literal `import()` stays visible to bundlers and to tsc.
 */
export const STORE_ADAPTER_PACKAGES = {
  sqlite: "@keel/store-sqlite",
  postgres: "@keel/store-postgres",
} as const;

/** What the runtime uses of `@keel/store-sqlite`. */
export interface SqliteAdapterModule {
  createSqliteStore(options: { file: string; create?: boolean; migrate?: boolean }): KeelStore;
}

/** What the runtime uses of `@keel/store-postgres`. */
export interface PostgresAdapterModule {
  createPostgresStore(options: { connectionString: string; schema: string; create?: boolean; migrate?: boolean }): KeelStore;
}

/**
 * The modules the SQL store kinds load, one importer per kind (a test hands in its own). Typed
 * by what the runtime uses of them, not by `typeof import(…)`: the emitted declarations must not
 * name an optional peer, or a user without it installed cannot type-check against the runtime.
 */
export interface StoreAdapterImporters {
  sqlite: () => Promise<SqliteAdapterModule>;
  postgres: () => Promise<PostgresAdapterModule>;
}

/** The real importers. */
export const storeAdapterImporters: StoreAdapterImporters = {
  sqlite: () => import("@keel/store-sqlite"),
  postgres: () => import("@keel/store-postgres"),
};

/**
 * Whether `error` is Node's "Cannot find package '<name>'" for `name` itself, not for a module
 * inside it or for one of its own dependencies (that is a broken install, not a missing peer).
 */
export function isMissingPackage(error: unknown, name: string): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (code !== "ERR_MODULE_NOT_FOUND" && code !== "MODULE_NOT_FOUND") return false;
  return error.message.includes(`'${name}'`) || error.message.includes(`"${name}"`);
}

/**
 * Loads the adapter module of a SQL store kind. A missing package is `unavailable` (not
 * retryable: installing it is the fix) whose message names the package and the install line;
 * any other load failure (a broken native build of better-sqlite3, say) is `unavailable` too,
 * with the loader's first line.
 */
export async function loadStoreAdapter<K extends keyof StoreAdapterImporters>(
  kind: K,
  importers: StoreAdapterImporters,
): Promise<Awaited<ReturnType<StoreAdapterImporters[K]>>> {
  const name = STORE_ADAPTER_PACKAGES[kind];
  try {
    return (await importers[kind]()) as Awaited<ReturnType<StoreAdapterImporters[K]>>;
  } catch (error) {
    const install = `npm install ${name}`;
    if (isMissingPackage(error, name)) {
      throw new KeelError("unavailable", `a ${kind} store URL needs ${name}, which is not installed: ${install}`, {
        retryable: false,
        details: { package: name, install },
      });
    }
    const first = (error instanceof Error ? error.message : String(error)).split("\n")[0] ?? "";
    throw new KeelError("unavailable", `${name} is installed but cannot be loaded (${first}): reinstall it (${install})`, {
      retryable: false,
      details: { package: name, install },
      cause: error,
    });
  }
}

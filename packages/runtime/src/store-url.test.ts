import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { KeelError } from "@keel/core";
import type { KeelStore } from "@keel/store";
import type { Result } from "neverthrow";
import { afterEach, describe, expect, it } from "vitest";
import { describeWithPostgres, dropSchema, freshSchemaName, testPostgresUrl } from "../../store-postgres/test-support/postgres-test-database.js";
import { createKeel } from "./keel.js";
import { storeAdapterImporters, type StoreAdapterImporters } from "./internal/store-adapters.js";
import { openStore, openStoreWith, parseStoreUrl, redactStoreUrl } from "./store-url.js";

const made: string[] = [];
const tempDir = () => {
  const dir = mkdtempSync(path.join(tmpdir(), "keel-open-store-"));
  made.push(dir);
  return dir;
};
afterEach(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const value = async <T>(outcome: PromiseLike<Result<T, KeelError>>): Promise<T> => {
  const result = await outcome;
  if (result.isErr()) throw result.error;
  return result.value;
};
const failure = async <T>(outcome: PromiseLike<Result<T, KeelError>>): Promise<KeelError> => {
  const result = await outcome;
  if (result.isOk()) throw new Error("expected an error");
  return result.error;
};

/** Writes one document, closes, reopens for reading and reads it back. */
async function roundTrip(url: string, cwd?: string): Promise<void> {
  const options = cwd === undefined ? {} : { cwd };
  const written: KeelStore = await value(openStore(url, options));
  await value(written.docs.put(["missions", "m1"], { n: 1 }, { create: true }));
  await written.close();
  const read = await value(openStore(url, { ...options, mode: "read" }));
  expect(await value(read.docs.get(["missions", "m1"]))).toMatchObject({ value: { n: 1 }, version: 1 });
  await read.close();
}

/** Node's own error for an import of a package that is not installed. */
const notInstalled = (name: string) => Object.assign(new Error(`Cannot find package '${name}' imported from /app/node_modules/@keel/runtime/dist/index.js`), { code: "ERR_MODULE_NOT_FOUND" });

describe("parseStoreUrl", () => {
  it("reads a directory, sqlite:<file> and postgres://…?schema=", () => {
    expect(parseStoreUrl(".keel", "/work")._unsafeUnwrap()).toEqual({ kind: "fs", dir: "/work/.keel" });
    expect(parseStoreUrl("/srv/keel", "/work")._unsafeUnwrap()).toEqual({ kind: "fs", dir: "/srv/keel" });
    expect(parseStoreUrl("sqlite:data/keel.db", "/work")._unsafeUnwrap()).toEqual({ kind: "sqlite", file: "/work/data/keel.db" });
    expect(parseStoreUrl("sqlite:///abs/keel.db", "/work")._unsafeUnwrap()).toEqual({ kind: "sqlite", file: "/abs/keel.db" });
    expect(parseStoreUrl("postgres://keel:secret@db:5432/app?schema=prod&sslmode=disable")._unsafeUnwrap()).toEqual({
      kind: "postgres",
      connectionString: "postgres://keel:secret@db:5432/app?sslmode=disable",
      schema: "prod",
    });
    expect(parseStoreUrl("postgresql://db/app")._unsafeUnwrap()).toMatchObject({ kind: "postgres", schema: "keel" });
    expect(redactStoreUrl("postgres://keel:secret@db/app")).toBe("postgres://keel:***@db/app");
  });

  it.each(["", "  ", "mysql://db/app", "sqlite:", "s3://bucket", "dir\u0000other", "postgres://[::1"])("refuses %j as invalid_input", (bad) => {
    expect(parseStoreUrl(bad)._unsafeUnwrapErr().code).toBe("invalid_input");
  });
});

describe("openStore", () => {
  it("opens a directory for writing, creating it, and then for reading", async () => {
    const dir = tempDir();
    await roundTrip("store", dir);
    expect(existsSync(path.join(dir, "store"))).toBe(true);
  });

  it("opens a SQLite file, and a parsed location as well as a URL", async () => {
    const dir = tempDir();
    await roundTrip(`sqlite:${path.join(dir, "keel.db")}`);
    const store = await value(openStore({ kind: "sqlite", file: path.join(dir, "keel.db") }, { mode: "read" }));
    expect((await value(store.docs.list([]))).items).toHaveLength(1);
    await store.close();
  });

  it("for reading creates nothing: a missing directory or SQLite file is not_found", async () => {
    const dir = tempDir();
    expect((await failure(openStore("nothing", { cwd: dir, mode: "read" }))).code).toBe("not_found");
    expect((await failure(openStore("sqlite:nothing.db", { cwd: dir, mode: "read" }))).code).toBe("not_found");
    expect(existsSync(path.join(dir, "nothing"))).toBe(false);
    expect(existsSync(path.join(dir, "nothing.db"))).toBe(false);
  });

  it("answers a bad URL, location or option with invalid_input, opening nothing", async () => {
    const dir = tempDir();
    for (const url of ["", "mysql://db/app", "sqlite:", "a\u0000b"]) expect((await failure(openStore(url, { cwd: dir }))).code).toBe("invalid_input");
    const bad: [unknown, unknown][] = [
      [42, {}],
      [{ kind: "s3", bucket: "b" }, {}],
      [{ kind: "sqlite" }, {}],
      ["store", { mode: "append" }],
      ["store", { cwd: "" }],
      ["store", { cwd: dir, extra: true }],
    ];
    for (const [target, options] of bad) {
      expect((await failure(openStore(target as string, options as object))).code).toBe("invalid_input");
    }
    expect(existsSync(path.join(dir, "store"))).toBe(false);
  });

  it("names the package to install when a SQL adapter is missing, and loads nothing for a directory", async () => {
    const loaded: string[] = [];
    const missing: StoreAdapterImporters = {
      sqlite: () => {
        loaded.push("sqlite");
        return Promise.reject(notInstalled("@keel/store-sqlite"));
      },
      postgres: () => {
        loaded.push("postgres");
        return Promise.reject(notInstalled("@keel/store-postgres"));
      },
    };
    const dir = tempDir();
    const sqlite = await failure(openStoreWith("sqlite:k.db", { cwd: dir }, missing));
    expect(sqlite.code).toBe("unavailable");
    expect(sqlite.retryable).toBe(false);
    expect(sqlite.details).toEqual({ package: "@keel/store-sqlite", install: "npm install @keel/store-sqlite" });
    expect(sqlite.message).toContain("npm install @keel/store-sqlite");
    const postgres = await failure(openStoreWith("postgres://keel:secret@127.0.0.1/app", {}, missing));
    expect(postgres.details).toEqual({ package: "@keel/store-postgres", install: "npm install @keel/store-postgres" });
    expect(postgres.message).not.toContain("secret");
    expect(loaded).toEqual(["sqlite", "postgres"]);
    const fs = await value(openStoreWith("store", { cwd: dir }, missing));
    await fs.close();
    expect(loaded).toEqual(["sqlite", "postgres"]);
    expect(existsSync(path.join(dir, "k.db"))).toBe(false);
  });

  it("tells a missing peer from a broken install of it", async () => {
    const broken: StoreAdapterImporters = {
      ...storeAdapterImporters,
      sqlite: () => Promise.reject(Object.assign(new Error("Cannot find package 'better-sqlite3' imported from /app/node_modules/@keel/store-sqlite/dist/index.js"), { code: "ERR_MODULE_NOT_FOUND" })),
    };
    const error = await failure(openStoreWith("sqlite:k.db", { cwd: tempDir() }, broken));
    expect(error.code).toBe("unavailable");
    expect(error.message).toMatch(/installed but cannot be loaded/);
    expect(error.details).toMatchObject({ package: "@keel/store-sqlite" });
  });
});

describeWithPostgres("openStore with PostgreSQL", () => {
  it("opens a schema for writing, then for reading; a missing schema is not_found for reading", async () => {
    const schema = freshSchemaName();
    try {
      await roundTrip(`${testPostgresUrl}?schema=${schema}`);
      const missing = freshSchemaName();
      expect((await failure(openStore(`${testPostgresUrl}?schema=${missing}`, { mode: "read" }))).code).toBe("not_found");
    } finally {
      await dropSchema(schema);
    }
  });
});

describe("createKeel with a store URL", () => {
  it("without an opener points to openStore of @keel/runtime, not to another package", () => {
    let thrown: unknown;
    try {
      createKeel({ store: "postgres://keel:secret@db/app" });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toMatchObject({ code: "invalid_input", details: { store: "postgres://keel:***@db/app" } });
    const message = (thrown as Error).message;
    expect(message).toContain("openStore");
    expect(message).toContain("@keel/runtime");
    expect(message).not.toContain("@keel/cli");
    expect(message).not.toContain("secret");
  });

  it("runs over the store openStore answers, and leaves it open for its owner", async () => {
    const store = await value(openStore("store", { cwd: tempDir() }));
    const keel = createKeel({ store });
    expect(keel.store).toBe(store);
    await keel.close();
    await value(store.docs.put(["after"], 1, { create: true }));
    await store.close();
  });
});

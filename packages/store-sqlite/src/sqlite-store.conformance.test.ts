import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { describeStoreConformance } from "@keel/testkit/store";
import { createSqliteStore, type SqliteStore } from "./index.js";

const directories = new WeakMap<object, string>();

describeStoreConformance({
  name: "sqlite",
  batchWrites: true,
  pageReads: true,
  create: async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "keel-sqlite-conformance-"));
    const store = createSqliteStore({ file: path.join(dir, "keel.db") });
    directories.set(store, dir);
    return store;
  },
  // Another connection on the same file is what another process opens.
  reopen: async (store) => createSqliteStore({ file: (store as SqliteStore).file }),
  destroy: async (store) => {
    const dir = directories.get(store);
    if (dir) await rm(dir, { recursive: true, force: true });
  },
});

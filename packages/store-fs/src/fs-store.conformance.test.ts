import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { describeStoreConformance } from "@keel/testkit/store";
import { createFsStore } from "./index.js";

const directories = new WeakMap<object, string>();

describeStoreConformance({
  name: "fs",
  // Lease-expiry tests need the fenced writes inside the TTL: each is several fsyncs, which take
  // far longer than the default 80 ms on a loaded 2-core CI machine.
  shortTtlMs: 1_000,
  create: async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "keel-fs-conformance-"));
    const store = createFsStore({ dir });
    directories.set(store, dir);
    return store;
  },
  // A second store on the same directory is what another process would open.
  reopen: async (store) => createFsStore({ dir: directories.get(store)! }),
  destroy: async (store) => {
    const dir = directories.get(store);
    if (dir) await rm(dir, { recursive: true, force: true });
  },
});

import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { createFsStore } from "@keel/store-fs";
import { describeBudgetSuite } from "./support/budget-suite.js";

describeBudgetSuite("the filesystem store", {
  create: async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "keel-budget-"));
    const store = createFsStore({ dir });
    return {
      store,
      dispose: async () => {
        await store.close();
        await rm(dir, { recursive: true, force: true });
      },
    };
  },
});

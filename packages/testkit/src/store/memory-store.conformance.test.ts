// The memory store is checked here, beside the suite, because @keel/testkit depends on @keel/store:
// a test in @keel/store importing the testkit would make the workspace graph a cycle.
import { createMemoryStore } from "@keel/store";
import { describeStoreConformance } from "@keel/testkit/store";

describeStoreConformance({ name: "memory", create: async () => createMemoryStore(), batchWrites: true, pageReads: true });

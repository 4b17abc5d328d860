import { createMemoryStore } from "@keel/store";
import { describeStoreConformance } from "@keel/testkit/store";

describeStoreConformance({ name: "memory", create: async () => createMemoryStore(), batchWrites: true, pageReads: true });

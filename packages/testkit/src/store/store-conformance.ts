import { describeBatchConformance } from "./store-conformance-batch.js";
import { describeDocumentConformance } from "./store-conformance-documents.js";
import type { StoreConformancePrimitive, StoreConformanceTarget } from "./store-conformance-harness.js";
import { describeIntegrityConformance } from "./store-conformance-integrity.js";
import { describeLeaseConformance } from "./store-conformance-leases.js";
import { describeLogConformance } from "./store-conformance-logs.js";
import { describeSharingConformance } from "./store-conformance-sharing.js";

const SUITES: Record<StoreConformancePrimitive, (target: StoreConformanceTarget) => void> = {
  documents: describeDocumentConformance,
  batch: describeBatchConformance,
  logs: describeLogConformance,
  leases: describeLeaseConformance,
  integrity: describeIntegrityConformance,
  sharing: describeSharingConformance,
};

/**
 * The storage conformance suite: every rule of the storage contract (DESIGN.md §3), run against
 * one adapter, one `describe` block per primitive (documents, batches and pages, logs, leases, integrity, and
 * sharing between handles when the target can `reopen`). Call it at the top level of a test file:
 *
 * ```ts
 * describeStoreConformance({ name: "memory", create: async () => createMemoryStore() });
 * ```
 *
 * Each test creates its own store through `target.create()` and closes it afterwards. Filters:
 * `only` picks primitives; `check: false` declares a store without an integrity check;
 * `batchWrites` / `pageReads` declare the optional `docs.batch` / `docs.readPage`; a store
 * whose scope is one process gives no `reopen` and runs no sharing tests. Each primitive's suite
 * is also exported alone (`describeDocumentConformance`, …) for an adapter of one port.
 */
export function describeStoreConformance(target: StoreConformanceTarget): void {
  const primitives = target.only ?? (Object.keys(SUITES) as StoreConformancePrimitive[]);
  for (const primitive of primitives) {
    if (primitive === "sharing" && !target.reopen) {
      if (target.only?.includes("sharing")) throw new Error(`store conformance: ${target.name} asks for the sharing suite but gives no reopen()`);
      continue;
    }
    SUITES[primitive](target);
  }
}

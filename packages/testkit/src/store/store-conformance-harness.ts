import type { KeelStore } from "@keel/store";
import { afterEach } from "vitest";
import { errOf, okValue, type AnyResult } from "../result-assertions.js";

/** The parts of the storage contract the suite is split into; each can be run alone. */
export type StoreConformancePrimitive = "documents" | "batch" | "logs" | "leases" | "integrity" | "sharing";

/** What the conformance suites need to test an adapter. */
export interface StoreConformanceTarget {
  /** The adapter's name, shown in test titles. */
  name: string;
  /** Creates a new, empty, isolated store: no two instances may see each other's data. */
  create: () => Promise<KeelStore>;
  /** Frees what `create` made (after `close`), e.g. removes a temp directory or schema. */
  destroy?: (store: KeelStore) => Promise<void>;
  /** A short lease time to live for the expiry tests (default 80 ms). */
  shortTtlMs?: number;
  /**
   * Which primitives {@link describeStoreConformance} runs (default all of them). The
   * `sharing` suite also needs {@link StoreConformanceTarget.reopen}.
   */
  only?: readonly StoreConformancePrimitive[];
  /**
   * Whether the store has an integrity check (default true). A store without one answers
   * `check()` with `unsupported`, and the integrity suite asserts exactly that.
   */
  check?: boolean;
  /** Whether the store has `docs.batch` (capability `batchWrites`; default false): the batch suite tests it. */
  batchWrites?: boolean;
  /** Whether the store has `docs.readPage` (capability `pageReads`; default false): the batch suite tests it. */
  pageReads?: boolean;
  /** Whether the store has `docs.update` (capability `lockedUpdates`; default false): the batch suite tests it. */
  lockedUpdates?: boolean;
  /**
   * Opens a second, independent handle on the data of `store` (another connection, as another
   * process would): the `sharing` suite runs the cross-handle rules through it. Omit it for a
   * store whose scope is one process (its handles share nothing); the suite then does not
   * register the sharing tests. The suite closes what it opens, before `destroy`.
   */
  reopen?: (store: KeelStore) => Promise<KeelStore>;
}

/** One test file's access to the target: opens stores and closes them after each test. */
export interface StoreConformanceHarness {
  target: StoreConformanceTarget;
  /** A short lease TTL for expiry tests. */
  ttl: number;
  /** A fresh store, closed and destroyed after the test. */
  open(): Promise<KeelStore>;
  /** A second handle on `store` (see {@link StoreConformanceTarget.reopen}), closed after the test. */
  reopen(store: KeelStore): Promise<KeelStore>;
}

/**
 * Makes the harness of one `describe` block. Must be called inside it (it registers an
 * `afterEach` that closes every store the block's tests opened, second handles first).
 */
export function createStoreConformanceHarness(target: StoreConformanceTarget): StoreConformanceHarness {
  const opened: KeelStore[] = [];
  const handles: KeelStore[] = [];
  afterEach(async () => {
    for (const store of handles.splice(0)) await store.close();
    for (const store of opened.splice(0)) {
      await store.close();
      await target.destroy?.(store);
    }
  });
  return {
    target,
    ttl: target.shortTtlMs ?? 80,
    open: async () => {
      const store = await target.create();
      opened.push(store);
      return store;
    },
    reopen: async (store) => {
      if (!target.reopen) throw new Error(`store conformance: ${target.name} has no reopen(); the sharing suite needs one`);
      const handle = await target.reopen(store);
      handles.push(handle);
      return handle;
    },
  };
}

/** The value of a successful result (fails the test otherwise). */
export const value = okValue;

/** The error code of a failed result (fails the test on success). */
export const code = async <T>(outcome: AnyResult<T>): Promise<string> => (await errOf(outcome)).code;

/** Waits `ms` milliseconds. */
export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

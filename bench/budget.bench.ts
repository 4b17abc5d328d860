import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { createBudget, type BudgetScope } from "@keel/budget";
import { createMemoryStore, type KeelStore } from "@keel/store";
import { createFsStore } from "@keel/store-fs";
import { afterAll, bench, describe } from "vitest";

/** A task scope under a workflow and a global scope, with limits far above what the bench uses. */
function taskScope(store: KeelStore): BudgetScope {
  const budget = createBudget({ store });
  const global = budget.scope("global", { limits: { tokens: Number.MAX_SAFE_INTEGER, calls: Number.MAX_SAFE_INTEGER } });
  const workflow = budget.scope("workflow", { limits: { costMicroUsd: Number.MAX_SAFE_INTEGER }, parents: [global] });
  return budget.scope("task", { limits: { timeMs: Number.MAX_SAFE_INTEGER }, parents: [workflow] });
}

async function reserveAndSettle(scope: BudgetScope): Promise<void> {
  const reservation = (await scope.reserve({ tokens: 2_000, calls: 1, timeMs: 30_000 }))._unsafeUnwrap();
  (await reservation.settle({ tokens: 1_500, timeMs: 12_000 }))._unsafeUnwrap();
}

const memoryStore = createMemoryStore();
const memoryScope = taskScope(memoryStore);
const dir = mkdtempSync(path.join(tmpdir(), "keel-budget-bench-"));
const fsStore = createFsStore({ dir });
const fsScope = taskScope(fsStore);

afterAll(async () => {
  await memoryStore.close();
  await fsStore.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("budget: reserve + settle over a 3-scope chain", () => {
  bench("memory store", () => reserveAndSettle(memoryScope), { time: 1_000 });
  bench("fs store", () => reserveAndSettle(fsScope), { time: 2_000 });
});

/**
 * A worker process for the multi-process budget test: opens the filesystem store at `dir`,
 * declares scope `shared` with a calls limit, makes `count` reservations against it (settling
 * every other one granted) and prints one JSON line with what it was granted and refused.
 *
 * Usage: node --import tsx --conditions=@keel/source test/support/budget-reserve-worker.ts <dir> <limit> <count> <worker>
 */
import { createBudget } from "@keel/budget";
import { createFsStore } from "@keel/store-fs";

const [dir, limitText, countText, worker] = process.argv.slice(2);
const limit = Number(limitText);
const count = Number(countText);
const store = createFsStore({ dir: dir! });
const budget = createBudget({ store });
const shared = budget.scope("shared", { limits: { calls: limit, tokens: limit * 100 } });

const granted: string[] = [];
const refused: { code: string; limitingScope: unknown; dimension: unknown }[] = [];
const failed: { code: string; message: string }[] = [];
for (let index = 0; index < count; index++) {
  const result = await shared.reserve({ calls: 1, tokens: 10 });
  if (result.isOk()) {
    granted.push(result.value.id);
    if (granted.length % 2 === 0) {
      const settled = await result.value.settle({ tokens: 7 });
      if (settled.isErr()) failed.push({ code: settled.error.code, message: settled.error.message });
    }
  } else if (result.error.code === "budget_exceeded") {
    refused.push({ code: result.error.code, limitingScope: result.error.details["limitingScope"], dimension: result.error.details["dimension"] });
  } else {
    failed.push({ code: result.error.code, message: result.error.message });
  }
}
await store.close();
process.stdout.write(`${JSON.stringify({ worker, granted, refused, failed })}\n`);

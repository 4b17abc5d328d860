// A process that steps a workflow run over a filesystem store and dies in the middle of a stage:
// its stage call prints `calling <stage>` and never answers, so the parent can SIGKILL it while
// the run's lease is held and the call's budget reservation is open.
import { createBudget } from "@keel/budget";
import { createFsStore } from "@keel/store-fs";
import { createCatalog, createWorkflowEngine } from "@keel/workflow";
import { MODELS } from "./workflow-harness.js";

const [dir, runId, leaseTtlMs] = process.argv.slice(2);
if (!dir || !runId || !leaseTtlMs) throw new Error("usage: workflow-step-worker <dir> <runId> <leaseTtlMs>");
const store = createFsStore({ dir });
const engine = createWorkflowEngine({
  store,
  catalog: createCatalog()._unsafeUnwrap(),
  budget: createBudget({ store }),
  models: MODELS,
  leaseTtlMs: Number(leaseTtlMs),
  executeStage: (call) => {
    console.log(`calling ${call.stage}`);
    return new Promise(() => undefined);
  },
});
console.log("ready");
const stepped = await engine.step(runId, { version: 1 });
console.log(stepped.isOk() ? `stepped ${stepped.value.status.status}` : `err ${stepped.error.code}`);

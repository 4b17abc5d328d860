// The published backend conformance suite of @keel/testkit, where it fits a real CLI: the
// scenarios become prompts that the fake provider answers by (`hang` hangs, anything else is a
// plain answer). A real CLI cannot print garbage or unknown events on demand, so only the
// capability and abort behaviours run from it; the rest is in real-cli-conformance.ts, proven
// from the provider's side.
import { readdir, readFile } from "node:fs/promises";
import { describeAbort, describeCapabilities, type BackendConformanceScenario, type BackendConformanceTarget } from "@keel/testkit/backend";
import { startFakeProvider } from "@keel/testkit/provider";
import type { RealCliId } from "./cli-sandbox.js";
import { createRealCliSetup, type RealCliSetup } from "./cli-setups.js";

const MARKER = "KEEL_REAL_CLI_RUN";

async function markedPids(value: string): Promise<number[]> {
  const pids: number[] = [];
  for (const entry of await readdir("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const environ = await readFile(`/proc/${entry}/environ`, "latin1").catch(() => "");
    if (environ.split("\0").includes(`${MARKER}=${value}`)) pids.push(Number(entry));
  }
  return pids;
}

/** Runs @keel/testkit's capability and abort behaviours against the real `cli`. */
export function describeTestkitConformance(cli: RealCliId, options: { turnTimeoutMs?: number } = {}): void {
  const target: BackendConformanceTarget = {
    name: `${cli} (real CLI)`,
    resumable: true,
    scenarios: ["success", "hang"],
    turnTimeoutMs: options.turnTimeoutMs ?? 120_000,
    setup: async () => {
      let setup: RealCliSetup | undefined;
      const provider = (
        await startFakeProvider({
          respond: (request) => setup?.sideCall(request) ?? (request.text.includes("KEEL-PLAY:hang") ? { hang: true } : { text: "A one-sentence summary." }),
        })
      )._unsafeUnwrap();
      const ready = await createRealCliSetup(cli, provider);
      setup = ready;
      return {
        backend: ready.backend,
        cwd: ready.sandbox.cwd,
        scenario: (scenario: BackendConformanceScenario) => ({ prompt: `KEEL-PLAY:${scenario} Summarize the README.`, env: { [MARKER]: ready.sandbox.root } }),
        spawnedPids: () => markedPids(ready.sandbox.root),
        cleanup: async () => {
          await provider.close();
          await ready.sandbox.cleanup();
          // No turn of the CLI may try an outside host (the refusing proxy records each attempt).
          const outside = provider.failures.filter((failure) => failure.kind === "outside_host");
          if (outside.length > 0) throw new Error(`${cli} tried to reach an outside host: ${outside.map((failure) => `${failure.method} ${failure.target}`).join(", ")}`);
        },
      };
    },
  };
  describeCapabilities(target);
  describeAbort(target);
}

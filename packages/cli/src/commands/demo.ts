import { isAbsolute, resolve } from "node:path";
import type { Backend } from "@keel/backend";
import { CliUsageError, type CliCommand } from "../cli-command.js";
import { paint } from "../cli-io.js";
import { runDemo, type DemoBackendOpener, type DemoPolicy } from "../demo/demo-run.js";
import { DEMO_FAKE_PROVIDER_CLIS, startDemoFakeProvider } from "../demo/demo-fake-provider.js";
import type { FakeProviderCli } from "@keel/testkit/provider";
import { createCliBackendById, CLI_BACKEND_IDS } from "../demo/demo-backends.js";
import { DEMO_WORKFLOWS, runWorkflowDemo, workflowProviderReply, type DemoWorkflow } from "../demo/demo-workflow.js";
import { openStoreLocation, parseStoreUrl, redactStoreUrl } from "../store-url.js";

const POLICIES: readonly DemoPolicy[] = ["fresh", "mission", "rolling"];

/** `keel demo`: replays one scripted mission under each policy and prints the comparison. */
export const demoCommand: CliCommand = {
  name: "demo",
  summary: "replay one scripted mission under each session policy and compare them",
  help: [
    "Usage: keel demo [--dir .keel-demo] [--policies fresh,mission,rolling] [--rounds N] [--backend scripted|<cli> [--fake-provider]] [--continue]",
    "",
    "Replays one matched mission — planner, engineer and reviewer over several rounds, with a",
    "repository to read and a review verdict computed from the change the reviewer is shown —",
    "under each role-session policy on the filesystem store, printing a line per turn, then the",
    "comparison table. Writes events.jsonl and report.html into the directory.",
    "",
    "Options:",
    "  --dir <dir>          the demo directory (default .keel-demo); an earlier demo there is replaced",
    "  --policies <list>    comma-separated, from fresh, mission, rolling (default all three)",
    "  --rounds <n>         rounds per policy, 1 to 50 (default 8)",
    `  --backend <id>       scripted (default), or a real CLI: ${CLI_BACKEND_IDS.join(", ")}`,
    "  --fake-provider      with --backend <cli>: run the CLI on PATH against a local fake model server that",
    "                       plays the mission (real tool calls reading the demo repository), offline;",
    `                       without it the CLI uses your own login. For: ${DEMO_FAKE_PROVIDER_CLIS.join(", ")}`,
    "  --continue           continue the missions of the earlier demo in --dir (a restart)",
    `  --workflow <id>      instead, run a built-in workflow (${DEMO_WORKFLOWS.join(", ")}) end to end on the fs store,`,
    "                       the demo acting as supervisor (once revising, then accepting); --backend and",
    "                       --fake-provider choose what runs its stages",
    "  --store <url>        run in this store instead of <dir>/store: a directory, sqlite:<file> or postgres://…",
    "",
    "Example:",
    "  keel demo --policies fresh,rolling --rounds 8",
    "  keel inspect .keel-demo/store",
  ].join("\n"),
  options: {
    dir: { type: "string" },
    policies: { type: "string" },
    rounds: { type: "string" },
    backend: { type: "string" },
    "fake-provider": { type: "boolean" },
    continue: { type: "boolean" },
    workflow: { type: "string" },
    store: { type: "string" },
  },
  allowPositionals: false,
  run: async ({ values }, io) => {
    const dirValue = typeof values.dir === "string" ? values.dir : ".keel-demo";
    const dir = isAbsolute(dirValue) ? dirValue : resolve(io.cwd, dirValue);
    const workflow = typeof values.workflow === "string" ? values.workflow : undefined;
    const policies = parsePolicies(typeof values.policies === "string" ? values.policies : undefined);
    const rounds = parseRounds(typeof values.rounds === "string" ? values.rounds : undefined);
    const backendId = typeof values.backend === "string" ? values.backend : "scripted";
    const fake = values["fake-provider"] === true;
    let backend: Backend | "scripted" | DemoBackendOpener = "scripted";
    if (fake) {
      if (!DEMO_FAKE_PROVIDER_CLIS.includes(backendId)) {
        throw new CliUsageError(`--fake-provider needs --backend with one of ${DEMO_FAKE_PROVIDER_CLIS.join(", ")}, got "${backendId}"`);
      }
      const path = io.env.PATH ?? "/usr/local/bin:/usr/bin:/bin";
      backend = ({ dir, workspace }) => startDemoFakeProvider(backendId as FakeProviderCli, dir, workspace, path, workflow === undefined ? undefined : workflowProviderReply);
    } else if (backendId !== "scripted") {
      const made = createCliBackendById(backendId);
      if (made.isErr()) throw new CliUsageError(made.error.message);
      backend = made.value;
    }
    const on = `${backendId}${fake ? " against the fake provider (offline)" : ""}`;
    if (workflow !== undefined) return runWorkflowCommand(workflow, dir, { backend, on }, io);
    io.stdout(`${paint(io, "bold", "keel demo")}: ${policies.join(", ")} × ${rounds} rounds on ${on}, in ${dir}\n`);
    const outcome = await runDemo({
      dir,
      policies,
      rounds,
      backend,
      continueMissions: values.continue === true,
      ...(typeof values.store === "string" ? { store: demoStore(values.store, io.cwd) } : {}),
      progress: (line) => io.stdout(`${line}\n`),
      heartbeat: (line) => io.stderr(`${line}\n`),
      color: io.color,
    });
    if (outcome.isErr()) {
      io.stderr(`${paint(io, "red", "error")} (${outcome.error.code}): ${outcome.error.message}\n`);
      return outcome.error.code === "invalid_input" ? 2 : 1;
    }
    io.stdout(`\n${outcome.value.table}\n`);
    io.stdout(`events: ${outcome.value.files.events}\nreport: ${outcome.value.files.report}\nstore:  ${outcome.value.files.store}  (keel inspect ${outcome.value.files.store})\n`);
    return 0;
  },
};

function parsePolicies(text: string | undefined): DemoPolicy[] {
  if (text === undefined) return [...POLICIES];
  const names = text.split(",").map((name) => name.trim()).filter(Boolean);
  if (names.length === 0) throw new CliUsageError("--policies needs at least one of fresh, mission, rolling");
  for (const name of names) {
    if (!(POLICIES as readonly string[]).includes(name)) throw new CliUsageError(`unknown policy "${name}": use fresh, mission or rolling`);
  }
  return [...new Set(names)] as DemoPolicy[];
}

function parseRounds(text: string | undefined): number {
  if (text === undefined) return 8;
  if (!/^\d+$/.test(text) || Number(text) < 1 || Number(text) > 50) throw new CliUsageError(`--rounds must be a whole number from 1 to 50, got "${text}"`);
  return Number(text);
}

async function runWorkflowCommand(workflow: string, dir: string, run: { backend: Backend | "scripted" | DemoBackendOpener; on: string }, io: Parameters<CliCommand["run"]>[1]): Promise<number> {
  if (!(DEMO_WORKFLOWS as readonly string[]).includes(workflow)) throw new CliUsageError(`unknown workflow "${workflow}": use ${DEMO_WORKFLOWS.join(" or ")}`);
  io.stdout(`${paint(io, "bold", "keel demo")}: workflow ${workflow} on ${run.on}, in ${dir}\n`);
  const outcome = await runWorkflowDemo({ dir, workflow: workflow as DemoWorkflow, backend: run.backend, progress: (line) => io.stdout(`${line}\n`) });
  if (outcome.isErr()) {
    io.stderr(`${paint(io, "red", "error")} (${outcome.error.code}): ${outcome.error.message}\n`);
    return 1;
  }
  io.stdout(`\n${workflow}: ${outcome.value.status.status} after ${outcome.value.status.corrections.used} correction(s)\nstore:  ${outcome.value.store}  (keel inspect ${outcome.value.store})\n`);
  return outcome.value.status.status === "completed" ? 0 : 1;
}

/** The store of `--store <url>`: checked now (a bad URL is a usage error), opened by the run. */
function demoStore(url: string, cwd: string) {
  const location = parseStoreUrl(url, cwd);
  if (location.isErr()) throw new CliUsageError(location.error.message);
  return { open: () => openStoreLocation(location.value), label: redactStoreUrl(url) };
}

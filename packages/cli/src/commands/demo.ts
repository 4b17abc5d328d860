import { isAbsolute, resolve } from "node:path";
import type { Backend } from "@keel/backend";
import { createClaudeAgentSdkBackend } from "@keel/backends/claude-agent-sdk";
import { KeelError, unwrapOrThrow } from "@keel/core";
import { openStore, parseStoreUrl, redactStoreUrl } from "@keel/runtime";
import type { FakeProviderCli } from "@keel/testkit/provider";
import { CliUsageError, type CliCommand } from "../cli-command.js";
import { parseHeartbeat } from "../cli-heartbeat.js";
import { paint, type CliIo } from "../cli-io.js";
import { runDemo, type DemoBackendOpener, type DemoPolicy } from "../demo/demo-run.js";
import { createCliBackendById, CLI_BACKEND_IDS } from "../demo/demo-backends.js";
import { DEMO_SDK_BACKENDS, loadDemoSdkPackages, type DemoSdkBackend, type DemoSdkPackages } from "../demo/demo-sdk-packages.js";
import { DEMO_WORKFLOWS, runWorkflowDemo, workflowProviderReply, type DemoWorkflow } from "../demo/demo-workflow.js";

const POLICIES: readonly DemoPolicy[] = ["fresh", "mission", "rolling"];

/**
 * The CLIs `keel demo --backend <cli> --fake-provider` can run: the ones `@keel/testkit/provider`
 * configures (a test checks the two lists agree). Named here so that the demo's help and its
 * argument checks load no testkit: only `--fake-provider` imports it.
 */
export const DEMO_FAKE_PROVIDER_CLIS: readonly string[] = ["pi", "codex", "claude-code", "opencode", "gemini", "copilot"];

/** Every backend `keel demo --fake-provider` can run: the CLIs above and the in-process SDKs. */
const DEMO_FAKE_PROVIDER_BACKENDS: readonly string[] = [...DEMO_FAKE_PROVIDER_CLIS, ...DEMO_SDK_BACKENDS];

const isSdkBackend = (id: string): id is DemoSdkBackend => (DEMO_SDK_BACKENDS as readonly string[]).includes(id);

const HELP = `keel demo — replay one scripted mission under each session policy and compare them

Usage: keel demo [--dir <dir>] [--policies fresh,mission,rolling] [--rounds <n>]
                 [--backend scripted|<cli> [--fake-provider]] [--continue] [--store <url>] [--json]
       keel demo --workflow <id> [--dir <dir>] [--backend scripted|<cli> [--fake-provider]] [--json]

Options:
  --dir <dir>          the demo directory (default .keel-demo); an earlier demo there is replaced
  --policies <list>    comma-separated, from fresh, mission, rolling (default all three)
  --rounds <n>         rounds per policy, 1 to 50 (default 8)
  --backend <id>       scripted (default), a real CLI: ${CLI_BACKEND_IDS.join(", ")},
                       or an agent SDK run in process: ${DEMO_SDK_BACKENDS.join(", ")}
  --fake-provider      with --backend <cli|sdk>: run the CLI on PATH, or the SDK, against a local fake
                       model server that plays the mission (real tool calls reading the demo
                       repository), offline; without it the CLI uses your own login. For:
                       ${DEMO_FAKE_PROVIDER_BACKENDS.join(", ")}
                       (needs @keel/testkit installed beside @keel/cli; ai-sdk needs @keel/ai-sdk, ai and
                       @ai-sdk/openai-compatible, claude-agent-sdk @anthropic-ai/claude-agent-sdk, beside
                       @keel/cli or in the current project)
  --continue           continue the missions of the earlier demo in --dir (a restart)
  --workflow <id>      instead, run a built-in workflow (${DEMO_WORKFLOWS.join(", ")}) end to end on the fs store,
                       the demo acting as supervisor (once revising, then accepting); --backend and
                       --fake-provider choose what runs its stages
  --store <url>        run in this store instead of <dir>/store: a directory, sqlite:<file> or postgres://…
  --heartbeat <s>      seconds between the heartbeat lines on stderr while a turn runs (default 10; 0: none)
  --json               print one JSON document (the outcome and the analysis) instead of the table;
                       the progress lines go to stderr
  -h, --help

Replays one matched mission — planner, engineer and reviewer over several rounds, with a
repository to read and a review verdict computed from the change the reviewer is shown —
under each role-session policy, printing a line per turn, then the comparison table. Writes
events.jsonl and report.html into the directory and the store into <dir>/store.

Exit codes: 0 the demo ran (a workflow: it completed), 1 a turn, the store or the workflow
failed, 2 bad arguments.

Example:
  keel demo --policies fresh,rolling --rounds 8
  keel inspect .keel-demo/store
`;

/** `keel demo`: replays one scripted mission under each policy and prints the comparison. */
export const demoCommand: CliCommand = {
  name: "demo",
  summary: "replay one scripted mission under each session policy and compare them",
  help: HELP,
  options: {
    dir: { type: "string" },
    policies: { type: "string" },
    rounds: { type: "string" },
    backend: { type: "string" },
    "fake-provider": { type: "boolean" },
    continue: { type: "boolean" },
    workflow: { type: "string" },
    store: { type: "string" },
    heartbeat: { type: "string" },
    json: { type: "boolean" },
  },
  allowPositionals: false,
  run: async ({ values }, io) => {
    const dirValue = typeof values.dir === "string" ? values.dir : ".keel-demo";
    const dir = isAbsolute(dirValue) ? dirValue : resolve(io.cwd, dirValue);
    const json = values.json === true;
    // With --json, stdout holds the one document: the progress goes to stderr.
    const say = json ? (line: string) => io.stderr(`${line}\n`) : (line: string) => io.stdout(`${line}\n`);
    const workflow = typeof values.workflow === "string" ? values.workflow : undefined;
    const policies = parsePolicies(typeof values.policies === "string" ? values.policies : undefined);
    const rounds = parseRounds(typeof values.rounds === "string" ? values.rounds : undefined);
    const heartbeatMs = parseHeartbeat(typeof values.heartbeat === "string" ? values.heartbeat : undefined);
    const backendId = typeof values.backend === "string" ? values.backend : "scripted";
    const fake = values["fake-provider"] === true;
    let backend: Backend | "scripted" | DemoBackendOpener = "scripted";
    if (fake) {
      if (!DEMO_FAKE_PROVIDER_BACKENDS.includes(backendId)) {
        throw new CliUsageError(`--fake-provider needs --backend with one of ${DEMO_FAKE_PROVIDER_BACKENDS.join(", ")}, got "${backendId}"`);
      }
      const path = io.env.PATH ?? "/usr/local/bin:/usr/bin:/bin";
      const reply = workflow === undefined ? undefined : workflowProviderReply;
      // An SDK's packages are loaded before the demo writes anything: a missing one is one line.
      const target: FakeProviderCli | DemoSdkPackages = isSdkBackend(backendId) ? await loadDemoSdkPackages(backendId, io.cwd) : (backendId as FakeProviderCli);
      backend = async (paths) => (await loadFakeProvider()).startDemoFakeProvider(target, paths, path, reply);
    } else if (backendId === "ai-sdk") {
      throw new CliUsageError("--backend ai-sdk runs against the fake provider: add --fake-provider (your own model and tools: see examples/ai-sdk-thread)");
    } else if (backendId === "claude-agent-sdk") {
      // The SDK with your own Claude login or ANTHROPIC_API_KEY, in this process's environment.
      const packages = await loadDemoSdkPackages(backendId, io.cwd);
      if (packages.kind === "claude-agent-sdk") backend = createClaudeAgentSdkBackend({ query: packages.query });
    } else if (backendId !== "scripted") {
      const made = createCliBackendById(backendId);
      if (made.isErr()) throw new CliUsageError(`unknown backend "${backendId}": use scripted, one of ${CLI_BACKEND_IDS.join(", ")}, or ${DEMO_SDK_BACKENDS.join(" or ")}`);
      backend = made.value;
    }
    const on = `${backendId}${fake ? " against the fake provider (offline)" : ""}`;
    if (workflow !== undefined) return runWorkflowCommand(workflow, dir, { backend, on }, io, json, say);
    say(`${paint(io, "bold", "keel demo")}: ${policies.join(", ")} × ${rounds} rounds on ${on}, in ${dir}`);
    const store = typeof values.store === "string" ? await openDemoStore(values.store, io.cwd) : undefined;
    let outcome: Awaited<ReturnType<typeof runDemo>>;
    try {
      outcome = await runDemo({
        dir,
        policies,
        rounds,
        backend,
        continueMissions: values.continue === true,
        ...(store ? { store: store.option } : {}),
        progress: say,
        ...(heartbeatMs === 0 ? { heartbeat: () => undefined } : { heartbeat: (line: string) => io.stderr(`${line}\n`), heartbeatMs }),
        color: io.color && !json,
      });
    } finally {
      await store?.release();
    }
    if (outcome.isErr()) {
      io.stderr(`${paint(io, "red", "error")} (${outcome.error.code}): ${outcome.error.message}\n`);
      return outcome.error.code === "invalid_input" ? 2 : 1;
    }
    const { files, turns, analysis, table } = outcome.value;
    if (json) {
      io.stdout(`${JSON.stringify({ dir, policies, rounds, backend: backendId, fakeProvider: fake, turns, files, analysis }, null, 2)}\n`);
      return 0;
    }
    io.stdout(`\n${table}\n`);
    io.stdout(`events: ${files.events}\nreport: ${files.report}\nstore:  ${files.store}  (keel inspect ${files.store})\n`);
    return 0;
  },
};

/** Imports the fake provider (and with it `@keel/testkit`) only for `--fake-provider`. */
async function loadFakeProvider(): Promise<typeof import("../demo/demo-fake-provider.js")> {
  try {
    return await import("../demo/demo-fake-provider.js");
  } catch (error) {
    throw new KeelError("unavailable", `--fake-provider needs @keel/testkit: install it beside @keel/cli (npm install -g @keel/testkit). ${error instanceof Error ? error.message.split("\n")[0] : ""}`, {
      details: {},
      cause: error,
    });
  }
}

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

async function runWorkflowCommand(
  workflow: string,
  dir: string,
  run: { backend: Backend | "scripted" | DemoBackendOpener; on: string },
  io: CliIo,
  json: boolean,
  say: (line: string) => void,
): Promise<number> {
  if (!(DEMO_WORKFLOWS as readonly string[]).includes(workflow)) throw new CliUsageError(`unknown workflow "${workflow}": use ${DEMO_WORKFLOWS.join(" or ")}`);
  say(`${paint(io, "bold", "keel demo")}: workflow ${workflow} on ${run.on}, in ${dir}`);
  const outcome = await runWorkflowDemo({ dir, workflow: workflow as DemoWorkflow, backend: run.backend, progress: say });
  if (outcome.isErr()) {
    io.stderr(`${paint(io, "red", "error")} (${outcome.error.code}): ${outcome.error.message}\n`);
    return 1;
  }
  const { status, store } = outcome.value;
  if (json) io.stdout(`${JSON.stringify({ dir, workflow, store, status }, null, 2)}\n`);
  else io.stdout(`\n${workflow}: ${status.status} after ${status.corrections.used} correction(s)\nstore:  ${store}  (keel inspect ${store})\n`);
  return status.status === "completed" ? 0 : 1;
}

/**
 * The store of `--store <url>`: a bad URL is a usage error; the store is opened now (its adapter
 * loaded, a missing one named) and handed to the run, which closes it. `release` closes it when
 * the run failed before taking it.
 */
async function openDemoStore(url: string, cwd: string) {
  const location = parseStoreUrl(url, cwd);
  if (location.isErr()) throw new CliUsageError(location.error.message);
  const store = unwrapOrThrow(await openStore(location.value));
  let handed = false;
  const open = () => {
    handed = true;
    return store;
  };
  return { option: { open, label: redactStoreUrl(url) }, release: async () => (handed ? undefined : store.close()) };
}

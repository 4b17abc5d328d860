/**
 * Keel's role sessions over the Claude Agent SDK. The host already runs its agent with the SDK's
 * `query()`; Keel decides, per role, whether a turn resumes the role's Claude session, starts one
 * or rotates to a new one seeded from a small capsule (instead of the SDK's automatic
 * compaction), keeps that state in a store so that another process continues it, and turns the
 * agent's real tool calls (`Read`, `Edit`, `Grep` …) into `agent.io.*` events.
 *
 * Two roles, a planner and a reviewer, each keep their own Claude session; a second process
 * resumes the planner's session by the id Keel kept; the planner's third turn rotates (`rolling`,
 * two turns per session here) to a new session that starts from the capsule.
 *
 * It runs offline: Claude Code (the SDK's bundled binary) is pointed at Keel's fake provider
 * (`@keel/testkit/provider`) in a private HOME, with the same setup Keel's tests use. In your host
 * it is `createClaudeAgentSdkBackend({ query, settingSources: ["project"] })` with your own login
 * or `ANTHROPIC_API_KEY`, and the rest stays as it is. The SDK is a peer the host installs
 * (`npm install @anthropic-ai/claude-agent-sdk`, about 400 MiB with its binary): this example's
 * test runs with the real SDK in `pnpm test:clis`
 * (test/real-clis/src/claude-agent-sdk-example.spec.ts); from the repository, where the SDK is
 * installed in test/real-clis: `node --import tsx --conditions=@keel/source
 * examples/claude-agent-sdk-sessions/claude-agent-sdk-sessions.ts test/real-clis`.
 */
import { mkdir, mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { createClaudeAgentSdkBackend, type ClaudeAgentSdkQuery } from "@keel/backends/claude-agent-sdk";
import { createEventBus } from "@keel/core";
import { createKeel } from "@keel/runtime";
import type { RoleTurnResult } from "@keel/runtime";
import { createFsStore } from "@keel/store-fs";
import { createFakeProviderSandbox, fakeProviderSetup, startFakeProvider, type FakeProviderRequest, type FakeReply } from "@keel/testkit/provider";

/** What {@link runClaudeSessions} did, and what the model was sent. */
export interface ClaudeSessionsRun {
  /** Each turn as `role action`: planner fresh, reviewer fresh, then (a second process) planner resumed, planner rotated. */
  turns: string[];
  /** Each turn's thread: the Claude session id of the SDK's `system/init` message. */
  threadIds: string[];
  /** Whether the second process's resumed turn sent the planner's first exchange (Claude Code loaded the session). */
  resumedCarriedHistory: boolean;
  /** Whether the rotated session's request held the capsule (the last decision) and not the old session's messages. */
  rotatedFromCapsule: boolean;
  /** The `agent.io.read` events: the files Claude Code's Read tool opened, by role. */
  reads: string[];
}

const TASKS = ["Plan the --json flag.", "Review the plan.", "Refine the plan.", "Write the test list."] as const;

/** The fake model: the first task reads README.md with Claude Code's Read tool, then every task answers with a decision. */
function playModel(request: FakeProviderRequest, readme: string): FakeReply {
  const usage = { inputUncached: 900, cacheRead: 100, output: 40 };
  // The turn's task is the last one the conversation names.
  const task = [...TASKS].sort((a, b) => request.text.lastIndexOf(a) - request.text.lastIndexOf(b)).at(-1)!;
  if (!request.text.includes(task)) return { text: "Nothing to do.\nDecision: none", usage };
  if (task === TASKS[0] && !request.text.includes("KEEL-README-7")) return { toolCalls: [{ name: "Read", arguments: { file_path: readme } }], usage };
  // No `Inspected:` line: the reads Keel reports are the Read tool's, not the answer's say-so.
  return { text: `Done: ${task}\nDecision: ${task.toLowerCase().replace(/\.$/, "")} done`, usage };
}

/**
 * Runs the two roles in `dir` over the SDK's `query`: two turns, a restart, two more. Claude Code
 * gets `PATH` (for its shell tool) from `path`.
 */
export async function runClaudeSessions(options: { dir: string; query: ClaudeAgentSdkQuery; path?: string }): Promise<ClaudeSessionsRun> {
  const workspace = join(options.dir, "workspace");
  await mkdir(workspace, { recursive: true });
  await writeFile(join(workspace, "README.md"), "# cli\n\nA small CLI. Marker: KEEL-README-7.\n");
  const provider = (await startFakeProvider({ respond: (request) => playModel(request, join(workspace, "README.md")) }))._unsafeUnwrap();
  try {
    // Offline: Claude Code in a private HOME and config directory, pointed at the fake provider.
    const sandbox = await createFakeProviderSandbox(join(options.dir, "claude"), options.path ?? process.env.PATH ?? "/usr/bin:/bin");
    const setup = fakeProviderSetup("claude-code", provider, sandbox, sandbox.envWith(provider));
    // In your host: createClaudeAgentSdkBackend({ query, settingSources: ["project"] }), with your own login.
    const claude = createClaudeAgentSdkBackend({ query: options.query, inheritEnv: false, env: setup.env, model: "claude-sonnet-4-5", settingSources: [] });
    const keelDir = join(options.dir, "keel");

    const reads: string[] = [];
    const turns: RoleTurnResult[] = [];
    const roles: string[] = [];
    const requestsOf: FakeProviderRequest[][] = [];
    /** One "process": Keel's runtime over the fs store, two turns per Claude session before a rotation. */
    const openHost = () => {
      const events = createEventBus();
      events.on("agent.io.read", (event) => void reads.push(`${event.role} ${event.path}`));
      const keel = createKeel({ dir: keelDir, cwd: workspace, backends: [claude], policy: "rolling", limits: { maxTurns: 2 }, events, instructions: false });
      return keel;
    };
    const turn = async (keel: ReturnType<typeof openHost>, role: string, prompt: string) => {
      const before = provider.modelRequests().length;
      const result = await keel.runRoleTurn({ missionId: "json-flag", role, prompt, objective: "Ship --json" });
      if (result.isErr()) throw result.error; // a KeelError: resume_failed, backend_failed (retryable on 429/5xx/529), timeout, …
      turns.push(result.value);
      roles.push(role);
      requestsOf.push(provider.modelRequests().slice(before));
    };

    const first = openHost();
    await turn(first, "planner", TASKS[0]);
    await turn(first, "reviewer", TASKS[1]);
    await first.close();

    // Another process: the planner's session id is in Keel's store, its history in Claude Code's.
    const second = openHost();
    await turn(second, "planner", TASKS[2]);
    await turn(second, "planner", TASKS[3]); // the session's third turn: rotated, seeded from the capsule
    await second.close();

    const [, , resumed = [], rotated = []] = requestsOf;
    return {
      turns: turns.map((done, index) => `${roles[index]} ${done.plan.action}`),
      threadIds: turns.map((done) => done.threadId ?? ""),
      resumedCarriedHistory: resumed.some((request) => request.text.includes("KEEL-README-7") && request.text.includes(TASKS[0])),
      rotatedFromCapsule: rotated.length > 0 && rotated.every((request) => request.text.includes("refine the plan done") && !request.text.includes("KEEL-README-7")),
      reads,
    };
  } finally {
    await provider.close();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  // The SDK's query, imported as @keel/backends imports it (a missing SDK is a KeelError "unavailable").
  const { loadClaudeAgentSdkQuery } = await import("@keel/backends/claude-agent-sdk");
  const project = process.argv[2];
  const query = project
    ? ((await import(pathToFileURL(join(project, "node_modules/@anthropic-ai/claude-agent-sdk/sdk.mjs")).href)) as { query: ClaudeAgentSdkQuery }).query
    : await loadClaudeAgentSdkQuery();
  console.log(await runClaudeSessions({ dir: await mkdtemp(join(tmpdir(), "keel-claude-sessions-")), query }));
}

import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { detectBackends } from "@keel/backends";
import { describeBackendConformance } from "@keel/testkit/backend";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { adapterInfo, createLineAgentBackend } from "./line-agent-backend.js";

const cli = fileURLToPath(new URL("./line-agent-cli.mjs", import.meta.url));
const make = (state: string) =>
  createLineAgentBackend({ command: process.execPath, commandArgs: [cli], env: { LINE_AGENT_STATE: state }, killGraceMs: 500 });

// The whole conformance suite, minus nothing: the stand-in CLI plays every scenario.
describeBackendConformance({
  name: "line-agent (example CLI adapter)",
  resumable: true,
  scenarios: ["success", "unknown_events", "in_band_error", "transient_error", "garbage", "hang", "tool_read"],
  expectedUsage: {
    fresh: { inputUncached: 100, cacheRead: 20, cacheWrite: null, output: 8, reasoning: null, costUsd: null },
    resumed: { inputUncached: 100, cacheRead: 20, cacheWrite: null, output: 8, reasoning: null, costUsd: null },
  },
  toolReadPath: "README.md",
  setup: async () => {
    const root = await mkdtemp(join(tmpdir(), "keel-line-agent-"));
    return {
      backend: make(join(root, "state")),
      cwd: root,
      scenario: (scenario) => ({ env: { LINE_AGENT_SCENARIO: scenario === "tool_read" ? "success" : scenario } }),
      cleanup: () => rm(root, { recursive: true, force: true }),
    };
  },
});

describe("line-agent adapter", () => {
  let root: string;
  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), "keel-line-agent-"));
  });
  afterEach(() => rm(root, { recursive: true, force: true }));

  it("reports its read tool call with bytes, and is detected through its adapterInfo", async () => {
    const result = (await make(join(root, "state")).runTurn({ prompt: "hello", cwd: root, timeoutMs: 30_000 }))._unsafeUnwrap();
    expect(result.text).toBe("You said: hello");
    expect(result.fileAccess).toEqual([{ op: "read", path: "README.md", bytes: 42, tool: "read" }]);
    expect(result.toolCalls).toBe(1);
    const [detected] = (await detectBackends({ builtIn: false, adapters: [adapterInfo], env: { PATH: root } }))._unsafeUnwrap();
    expect(detected).toMatchObject({ id: "line-agent", available: false, provenAgainst: "recordings", versionStanding: "unknown" });
  });
});

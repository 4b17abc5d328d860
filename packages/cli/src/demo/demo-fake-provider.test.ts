import { runCli } from "@keel/cli";
import { createScriptedBackend } from "@keel/backends/scripted";
import { FAKE_PROVIDER_CLIS, fakeProviderSetup, type FakeProviderRequest, type FakeTurnReply } from "@keel/testkit/provider";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import path from "node:path";
import { demoRespond } from "./demo-mission.js";
import { demoProviderReply } from "./demo-provider-script.js";
import { runDemo } from "./demo-run.js";
import { captureIo, temporaryDirectory } from "../../../../test/support/cli-harness.js";

const WORKSPACE = "/demo/workspace";
const readTool = (file: string) => ({ name: "read", arguments: { path: file } });

/** A model call whose conversation text is `text` (what the provider searches). */
function request(text: string): FakeProviderRequest {
  return { index: 0, at: 0, method: "POST", path: "/v1/chat/completions", query: {}, headers: {}, format: "openai-chat", model: "fake-model", stream: true, hasTools: true, body: {}, text, reply: null };
}

describe("keel demo --fake-provider: options", () => {
  let scratch: { dir: string; remove: () => void };
  beforeEach(() => {
    scratch = temporaryDirectory("demo-fake");
  });
  afterEach(() => scratch.remove());

  it("needs --backend with one of the six CLIs or the two SDKs it can point at the fake provider", async () => {
    for (const args of [["--fake-provider"], ["--backend", "scripted", "--fake-provider"], ["--backend", "cursor", "--fake-provider"]]) {
      const io = captureIo({ cwd: scratch.dir });
      expect(await runCli(["demo", "--dir", "d", ...args], io)).toBe(2);
      expect(io.err).toContain("--fake-provider needs --backend with one of pi, codex, claude-code, opencode, gemini, copilot, ai-sdk, claude-agent-sdk, got");
    }
  });

  it("is listed in the help", async () => {
    const io = captureIo({ cwd: scratch.dir });
    expect(await runCli(["demo", "--help"], io)).toBe(0);
    expect(io.out).toContain("--fake-provider");
  });
});

describe("the demo's provider script", () => {
  it("reads each file the round needs with the CLI's read tool, one per call, then answers with the role's decision and no self-reported reads", () => {
    const prompt = "system prompt\n[planner] Round 1: plan the next step towards the objective. Candidate step: parse the --json flag in the CLI.";
    const first = demoProviderReply(request(prompt), { workspace: WORKSPACE, readTool }) as FakeTurnReply;
    expect(first.toolCalls).toEqual([readTool(path.join(WORKSPACE, "README.md"))]);
    const second = demoProviderReply(request(`${prompt}\n{"path":"${WORKSPACE}/README.md"}\n# todo`), { workspace: WORKSPACE, readTool }) as FakeTurnReply;
    expect(second.toolCalls).toEqual([readTool(path.join(WORKSPACE, "src/cli.ts"))]);
    const all = `${prompt}\n${["README.md", "src/cli.ts", "docs/usage.md"].map((file) => path.join(WORKSPACE, file)).join("\n")}`;
    const answer = demoProviderReply(request(all), { workspace: WORKSPACE, readTool }) as FakeTurnReply;
    expect(answer.toolCalls).toBeUndefined();
    expect(answer.text).toContain("Decision: step 1 — parse the --json flag in the CLI");
    expect(answer.text).not.toContain("Inspected:");
  });

  it("reads nothing a resumed thread already read or a capsule names, and answers the last task of the conversation", () => {
    const earlier = `[planner] Round 1: plan.\n${path.join(WORKSPACE, "src/cli.ts")}\n${path.join(WORKSPACE, "src/list.ts")}`;
    const now = "[engineer] Round 1: implement the planned step.\nPlan:\nstep 1";
    const reply = demoProviderReply(request(`${earlier}\n${now}`), { workspace: WORKSPACE, readTool }) as FakeTurnReply;
    expect(reply.toolCalls).toBeUndefined();
    expect(reply.text).toContain("Decision: changed src/cli.ts, src/list.ts");
    const seeded = demoProviderReply(request(`Paths you inspected: src/format.ts\n[reviewer] Round 2: review.\nChange:\n  M src/format.ts\n  tests: none`), { workspace: WORKSPACE, readTool }) as FakeTurnReply;
    expect(seeded.text).toContain("Verdict: REQUEST_CHANGES");
  });

  it("answers a conversation without a demo task plainly", () => {
    expect((demoProviderReply(request("hello"), { workspace: WORKSPACE, readTool }) as FakeTurnReply).text).toContain("Decision: none");
  });
});

describe("fakeProviderSetup", () => {
  it("gives each CLI its environment over the base one, config files inside its own directories, and a read tool", () => {
    const provider = { url: "http://127.0.0.1:9", openAiUrl: "http://127.0.0.1:9/v1" };
    for (const cli of FAKE_PROVIDER_CLIS) {
      const setup = fakeProviderSetup(cli, provider, { home: "/h", config: "/c" }, { PATH: "/bin", HOME: "/h" });
      expect(setup.env).toMatchObject({ PATH: "/bin", HOME: "/h" });
      expect(JSON.stringify(setup.env) + Object.values(setup.files).join("")).toContain("127.0.0.1:9");
      for (const file of Object.keys(setup.files)) expect(file.startsWith("/h/") || file.startsWith("/c/")).toBe(true);
      expect(JSON.stringify(setup.readTool("/w/a.txt"))).toContain("/w/a.txt");
    }
  });
});

describe("runDemo with a backend opened in the demo directory", () => {
  let scratch: { dir: string; remove: () => void };
  beforeEach(() => {
    scratch = temporaryDirectory("demo-opener");
  });
  afterEach(() => scratch.remove());

  it("opens the backend after writing the repository, beats while a turn runs, and closes it", async () => {
    const seen: string[] = [];
    let closed = 0;
    const beats: string[] = [];
    const outcome = await runDemo({
      dir: path.join(scratch.dir, "demo"),
      policies: ["fresh"],
      rounds: 1,
      continueMissions: false,
      color: false,
      progress: () => undefined,
      heartbeat: (line) => beats.push(line),
      heartbeatMs: 20,
      backend: async ({ workspace }) => {
        seen.push(workspace);
        const { existsSync } = await import("node:fs");
        expect(existsSync(path.join(workspace, "src/cli.ts"))).toBe(true);
        return {
          backend: createScriptedBackend({ resumable: true, script: (turn) => ({ ...demoRespond(turn), delayMs: 80 }) }),
          close: async () => void closed++,
        };
      },
    });
    expect(outcome.isOk()).toBe(true);
    expect(outcome._unsafeUnwrap().turns).toBe(3);
    expect(seen).toEqual([path.join(scratch.dir, "demo", "workspace")]);
    expect(closed).toBe(1);
    expect(beats.length).toBeGreaterThan(0);
    expect(beats[0]).toMatch(/^\[fresh  \]  round  1  planner   turn running for \d+ s$/);
  });
});

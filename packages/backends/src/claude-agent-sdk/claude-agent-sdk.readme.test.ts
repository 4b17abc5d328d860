import { readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createClaudeAgentSdkBackend, type ClaudeAgentSdkQuery } from "./index.js";

const README = readFileSync(new URL("../../README.md", import.meta.url), "utf8");

function recorded(name: string): unknown[] {
  return readFileSync(new URL(`./__fixtures__/claude-agent-sdk.${name}.jsonl`, import.meta.url), "utf8")
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line) as unknown);
}

describe("the README's Claude Agent SDK example", () => {
  it("imports only the SDK and this subpath, and installs both", () => {
    const section = README.slice(README.indexOf("## The Claude Agent SDK"), README.indexOf("## Options"));
    const example = /```ts\n([\s\S]*?)^```/m.exec(section)?.[1] ?? "";
    expect([...example.matchAll(/from "([^"]+)"/g)].map((match) => match[1])).toEqual(["@anthropic-ai/claude-agent-sdk", "@keel/backends/claude-agent-sdk"]);
    expect(section).toMatch(/npm install [^\n]*@keel\/backends[^\n]*@anthropic-ai\/claude-agent-sdk/);
  });

  // The SDK is not installed in the workspace (a peer with a native binary): the example runs
  // here with the messages the real SDK yielded in place of its `query`.
  it("runs as written, over the recorded SDK messages", async () => {
    const cwd = await mkdtemp(join(tmpdir(), "keel-agent-sdk-readme-"));
    try {
      const query: ClaudeAgentSdkQuery = ({ options }) => {
        const messages = recorded(options.resume === undefined ? "success" : "resumed");
        return (async function* () {
          yield* messages;
        })();
      };
      const claude = createClaudeAgentSdkBackend({ query, settingSources: ["project"], allowedTools: ["Read", "Grep", "Glob"] });
      const first = await claude.runTurn({ prompt: "Summarize README.md", cwd, timeoutMs: 600_000 });
      if (first.isErr()) throw first.error;
      const next = await claude.runTurn({
        prompt: "Now list the open TODOs",
        cwd,
        timeoutMs: 600_000,
        threadId: first.value.threadId!,
        resumeState: first.value.resumeState!,
      });
      expect(next._unsafeUnwrap()).toMatchObject({ threadId: first.value.threadId, text: "second answer", usage: { inputUncached: 400, output: 7 } });
    } finally {
      await rm(cwd, { recursive: true, force: true });
    }
  });
});

import { readFileSync } from "node:fs";
import { rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { readmePrinted, repoRoot, runTs } from "../../../../test/support/run-ts.js";

const DOCUMENT = "packages/backends/README.md";
const README = readFileSync(join(repoRoot, DOCUMENT), "utf8");
/** `node --import` it and `@anthropic-ai/claude-agent-sdk` is the stand-in replaying the real SDK's recorded messages. */
const STAND_IN = fileURLToPath(new URL("./__fixtures__/readme-sdk/register.mjs", import.meta.url));

/** The README's `<!-- example:<marker> -->` block, as written. */
function example(marker: string): string {
  const block = new RegExp(`<!-- example:${marker}[^>]*-->\\s*\`\`\`ts\\n([\\s\\S]*?\\n)\`\`\``).exec(README)?.[1];
  if (block === undefined) throw new Error(`${DOCUMENT} has no example:${marker} block`);
  return block;
}

describe("the README's Claude Agent SDK example", () => {
  it("imports only the SDK and this subpath, and installs both", () => {
    const section = README.slice(README.indexOf("## The Claude Agent SDK"), README.indexOf("## Options"));
    expect([...example("claude-agent-sdk").matchAll(/from "([^"]+)"/g)].map((match) => match[1])).toEqual(["@anthropic-ai/claude-agent-sdk", "@keel/backends/claude-agent-sdk"]);
    expect(section).toMatch(/npm install [^\n]*@keel\/backends[^\n]*@anthropic-ai\/claude-agent-sdk/);
    // Every TypeScript block of the Claude sections is one of the examples a test runs.
    expect(section.match(/```ts\n/g)).toHaveLength(2);
    expect(section.match(/<!-- example:claude-[a-z-]+ \(run by [^)]+\) -->\n```ts\n/g)).toHaveLength(2);
  });

  // The SDK is not installed in the workspace (a peer with a native binary): the example runs as
  // written, in a child process from beside the README, with the SDK's name resolved to a
  // stand-in that replays what the real SDK yielded for the same prompts. The real SDK runs the
  // same block in test/real-clis/src/claude-agent-sdk.spec.ts.
  it("runs as written over the recorded SDK messages and prints what the README says", { timeout: 120_000 }, async () => {
    const file = join(repoRoot, "packages/backends", `.readme-claude-agent-sdk-${process.pid}.ts`);
    await writeFile(file, example("claude-agent-sdk"));
    try {
      const output = await runTs(file, [], { env: { NODE_OPTIONS: `--import=${STAND_IN}` } });
      expect(output.stderr).toBe("");
      expect(output.code).toBe(0);
      const printed = await readmePrinted(DOCUMENT, "\\nprints \\(the answers are the model's[^)]*\\)\\n");
      expect(printed).toBe("README.md describes Harbor, a linter for Helm charts.\nTwo TODOs: chart caching and a --fix flag. (same session, 11 output tokens)\n");
      expect(output.stdout).toBe(printed);
    } finally {
      await rm(file, { force: true });
    }
  });
});

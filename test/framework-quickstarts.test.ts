import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { expect, it } from "vitest";
import { repoRoot } from "./support/run-ts.js";

// The framework quick starts of the README and the getting-started guide are excerpts of
// runnable, tested files (the adapters' README examples, examples/ai-sdk-thread,
// examples/claude-agent-sdk-sessions). Each code line of an excerpt must be a line of one of the
// files it names, so a renamed option or a changed call there fails here: the excerpts cannot rot.
// Comments are the excerpt's own (a trailing ` // …` is dropped before the comparison).

const FRAMEWORKS = ["langgraph", "openai-agents", "ai-sdk", "claude-agent-sdk"];
const code = (line: string) => line.replace(/\s+\/\/\s.*$/, "").trim();

async function excerpts(document: string): Promise<{ framework: string; sources: string[]; lines: string[] }[]> {
  const text = await readFile(join(repoRoot, document), "utf8");
  return [...text.matchAll(/<!-- framework:([\w-]+) \(excerpt of ([^)]+)\) -->\s*```ts\n([\s\S]*?\n)```/g)].map((match) => ({
    framework: match[1]!,
    sources: match[2]!.split(",").map((source) => source.trim()),
    lines: match[3]!.split("\n").map(code).filter((line) => line !== "" && !line.startsWith("//")),
  }));
}

for (const document of ["README.md", "docs/getting-started.md"]) {
  it(`${document} shows every framework integration, each an excerpt of a tested file`, async () => {
    const found = await excerpts(document);
    expect(found.map((excerpt) => excerpt.framework)).toEqual(FRAMEWORKS);
    for (const excerpt of found) {
      const sourceLines = new Set<string>();
      for (const source of excerpt.sources) for (const line of (await readFile(join(repoRoot, source), "utf8")).split("\n")) sourceLines.add(code(line));
      expect(excerpt.lines.length, excerpt.framework).toBeGreaterThan(3);
      for (const line of excerpt.lines) expect(sourceLines.has(line), `${document}, ${excerpt.framework}: "${line}" is in none of ${excerpt.sources.join(", ")}`).toBe(true);
    }
  });
}

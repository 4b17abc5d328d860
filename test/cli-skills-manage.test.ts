import { cpSync, existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { runCli } from "@keel/cli";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { sharedFixtures } from "./support/shared-fixtures.js";
import { captureIo, hasStackTrace, spawnKeel, temporaryDirectory } from "./support/cli-harness.js";

const { dir: real, available: present } = sharedFixtures("skills", "real");
let scratch: { dir: string; remove: () => void };
beforeEach(() => {
  scratch = temporaryDirectory("skills-manage");
});
afterEach(() => scratch.remove());

async function keel(...args: string[]) {
  const io = captureIo({ cwd: scratch.dir });
  const code = await runCli(["skills", ...args], io);
  return { code, out: io.out, err: io.err };
}

describe.runIf(present)("keel skills import | update | withdraw", () => {
  it("import: --dry-run writes nothing, then imports; a second import is a conflict unless --overwrite", async () => {
    const from = path.join(real, "webapp-testing");
    const dry = await keel("import", from, "--layer", "layer", "--role", "engineer", "--route", "engineer", "--dry-run");
    expect(dry.code).toBe(0);
    expect(dry.out).toContain("would import webapp-testing");
    expect(existsSync(path.join(scratch.dir, "layer"))).toBe(false);
    const done = await keel("import", from, "--layer", "layer", "--role", "engineer", "--route", "engineer", "--json");
    expect(done.code).toBe(0);
    expect(JSON.parse(done.out)).toMatchObject({ name: "webapp-testing", applied: true, metadata: { routing: { status: "classified", routes: ["engineer"] } } });
    const again = await keel("import", from, "--layer", "layer", "--role", "engineer", "--unclassified");
    expect(again.code).toBe(1);
    expect(again.err).toContain("(conflict)");
    expect((await keel("import", from, "--layer", "layer", "--role", "engineer", "--unclassified", "--overwrite")).out).toContain("replaced webapp-testing");
    const view = await keel("engineer", "--project", "layer", "--json");
    expect(JSON.parse(view.out).own.map((skill: { name: string }) => skill.name)).toEqual(["webapp-testing"]);
  });

  it("update: --dry-run prints the plan, then applies it; withdraw moves a skill to the trash", async () => {
    const checkout = path.join(scratch.dir, "checkout");
    for (const name of ["internal-comms", "template-skill"]) cpSync(path.join(real, name), path.join(checkout, "skills", name), { recursive: true });
    const plan = await keel("update", "checkout", "--layer", "layer", "--role", "writer", "--unclassified", "--dry-run");
    expect(plan.code).toBe(0);
    expect(plan.out).toMatch(/plan \(dry run\)[\s\S]*add\s+internal-comms[\s\S]*add\s+template-skill/);
    expect(existsSync(path.join(scratch.dir, "layer"))).toBe(false);
    const applied = await keel("update", "checkout", "--layer", "layer", "--role", "writer", "--unclassified", "--json");
    expect(JSON.parse(applied.out).entries.map((entry: { action: string; done: boolean }) => [entry.action, entry.done])).toEqual([
      ["add", true],
      ["add", true],
    ]);
    writeFileSync(path.join(scratch.dir, "layer", "writer", "template-skill", "SKILL.md"), "---\nname: template-skill\ndescription: edited here\n---\n");
    const conflict = await keel("update", "checkout", "--layer", "layer", "--role", "writer", "--unclassified");
    expect(conflict.out).toMatch(/conflict\s+template-skill/);
    expect(readFileSync(path.join(scratch.dir, "layer", "writer", "template-skill", "SKILL.md"), "utf8")).toContain("edited here");
    expect((await keel("update", "checkout", "--layer", "layer", "--role", "writer", "--unclassified", "--force")).out).toMatch(/✓ conflict\s+template-skill/);

    const dry = await keel("withdraw", "template-skill", "--layer", "layer", "--role", "writer", "--dry-run");
    expect(dry.out).toContain("would withdraw template-skill");
    expect(existsSync(path.join(scratch.dir, "layer", "writer", "template-skill"))).toBe(true);
    expect((await keel("withdraw", "template-skill", "--layer", "layer", "--role", "writer")).code).toBe(0);
    expect(existsSync(path.join(scratch.dir, "layer", "writer", "template-skill"))).toBe(false);
    expect(readdirSync(path.join(scratch.dir, "layer", ".keel", "trash", "writer"))).toHaveLength(1);
    const missing = await keel("withdraw", "template-skill", "--layer", "layer", "--role", "writer");
    expect(missing.code).toBe(1);
    expect(missing.err).toContain("(not_found)");
  });

  it("bad arguments exit 2 with a one-line reason", async () => {
    const from = path.join(real, "webapp-testing");
    for (const args of [
      ["import", from, "--layer", "layer", "--role", "engineer"],
      ["import", from, "--layer", "layer", "--role", "engineer", "--route", "a", "--unclassified"],
      ["import", "--layer", "layer", "--role", "engineer", "--unclassified"],
      ["import", from, "--role", "engineer", "--unclassified"],
      ["import", from, "--layer", "layer", "--role", "../x", "--unclassified"],
      ["update", "checkout", "--layer", "layer", "--role", "w", "--unclassified", "--overwrite"],
      ["withdraw", "x", "--layer", "layer", "--role", "w", "--force"],
    ]) {
      const result = await keel(...args);
      expect(result.code, args.join(" ")).toBe(2);
      expect(hasStackTrace(result.err)).toBe(false);
    }
  });

  it("the real binary imports with --dry-run and says so", async () => {
    const result = await spawnKeel(["skills", "import", path.join(real, "template-skill"), "--layer", path.join(scratch.dir, "layer"), "--role", "engineer", "--unclassified", "--dry-run"]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain("would import template-skill");
    expect(existsSync(path.join(scratch.dir, "layer"))).toBe(false);
  });
});

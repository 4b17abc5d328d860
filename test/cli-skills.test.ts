import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { runCli } from "@keel/cli";
import type { SkillView } from "@keel/skills";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { sharedFixtures } from "./support/shared-fixtures.js";
import { ANSI, captureIo, hasStackTrace, spawnKeel, temporaryDirectory } from "./support/cli-harness.js";

const fixtures = sharedFixtures("skills");

type SkillsJson = SkillView & { layers: { name: string; dir: string; exists: boolean }[] };

let scratch: { dir: string; remove: () => void };

function skill(layer: string, role: string, name: string, frontmatter = `name: ${name}\ndescription: ${name} for ${role} in ${layer}`): void {
  const dir = path.join(scratch.dir, layer, role, name);
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, "SKILL.md"), `---\n${frontmatter}\n---\n\nBody of ${name}.\n`);
}

beforeEach(() => {
  scratch = temporaryDirectory("skills");
  skill("project", "engineer", "testing");
  skill("project", "reviewer", "review-checklist");
  skill("global", "engineer", "testing");
  skill("global", "engineer", "deploy");
  skill("project", "engineer", "broken", "name: broken\ndescription: [unclosed");
});
afterEach(() => scratch.remove());

async function skillsJson(args: string[]): Promise<SkillsJson> {
  const io = captureIo({ cwd: scratch.dir });
  await runCli(["skills", ...args, "--json"], io);
  return JSON.parse(io.out) as SkillsJson;
}

describe("keel skills", () => {
  it("lists ordered roots with layer and ownership, OWN and REFERENCE skills, shadowed skills and diagnostics", async () => {
    const io = captureIo({ cwd: scratch.dir });
    expect(await runCli(["skills", "engineer", "--project", "project", "--global", "global"], io)).toBe(0);
    const text = io.out;
    expect(text).toContain("Skills of role engineer (lenient discovery)");
    const roots = text.slice(text.indexOf("Roots"), text.indexOf("OWN skills"));
    expect(roots.split("\n").slice(1, 4)).toEqual([
      `   1. project  OWN        ${path.join(scratch.dir, "project", "engineer")}`,
      `   2. project  REFERENCE  ${path.join(scratch.dir, "project", "reviewer")}`,
      `   3. global   OWN        ${path.join(scratch.dir, "global", "engineer")}`,
    ]);
    expect(text).toMatch(/OWN skills \(2\)\n {2}testing — testing for engineer in project\n.*\n {2}deploy — deploy for engineer in global/);
    expect(text).toMatch(/REFERENCE skills \(1\)\n {2}review-checklist — /);
    expect(text).toMatch(/Shadowed \(1\)\n {2}testing: .*global\/engineer\/testing\/SKILL\.md \(global\/engineer\) is hidden by .*project\/engineer\/testing\/SKILL\.md/);
    expect(text).toMatch(/Diagnostics \(1\)\n {2}error {3}invalid_yaml \(project\/engineer\)/);
    expect(text).not.toMatch(ANSI);
  });

  it("--json prints the resolved view and the layers", async () => {
    const view = await skillsJson(["engineer", "--project", "project", "--domain", "missing", "--global", "global", "--allow-missing"]);
    expect(view.layers.map((layer) => [layer.name, layer.exists])).toEqual([
      ["project", true],
      ["domain", false],
      ["global", true],
    ]);
    expect(view.roots.map((root) => [root.layer, root.role, root.ownership])).toEqual([
      ["project", "engineer", "own"],
      ["project", "reviewer", "reference"],
      ["global", "engineer", "own"],
    ]);
    expect(view.own.map((entry) => [entry.name, entry.layer])).toEqual([
      ["testing", "project"],
      ["deploy", "global"],
    ]);
    expect(view.reference.map((entry) => entry.name)).toEqual(["review-checklist"]);
    expect(view.shadowed).toEqual([expect.objectContaining({ name: "testing", loser: expect.objectContaining({ layer: "global" }) })]);
    expect(view.diagnostics.map((diagnostic) => [diagnostic.severity, diagnostic.code])).toEqual([["error", "invalid_yaml"]]);
  });

  it("refuses a layer directory that does not exist, naming it, and prints nothing on stdout", async () => {
    for (const args of [["--domain", "nowhere"], ["--project", "project", "--domain", "nowhere", "--json"]]) {
      const io = captureIo({ cwd: scratch.dir });
      expect(await runCli(["skills", "engineer", ...args], io)).toBe(1);
      expect(io.err).toBe(`error (not_found): the domain layer ${path.join(scratch.dir, "nowhere")} is not a directory; pass --allow-missing to treat a missing layer as empty\n`);
      expect(io.out).toBe("");
    }
    const file = captureIo({ cwd: scratch.dir });
    writeFileSync(path.join(scratch.dir, "a-file"), "not a layer");
    expect(await runCli(["skills", "engineer", "--global", "a-file", "--project", "gone"], file)).toBe(1);
    expect(file.err).toContain(`the project layer ${path.join(scratch.dir, "gone")} and the global layer ${path.join(scratch.dir, "a-file")} are not directories`);
  });

  it("with --allow-missing, shows a missing layer as empty and says it does not exist", async () => {
    const io = captureIo({ cwd: scratch.dir });
    expect(await runCli(["skills", "engineer", "--domain", "nowhere", "--allow-missing"], io)).toBe(0);
    expect(io.out).toContain(`domain: ${path.join(scratch.dir, "nowhere")} (does not exist)`);
    expect(io.out).toMatch(/Roots, in precedence order \(0\)\n {2}none/);
  });

  it("--strict makes spec violations errors and exits 1 when a diagnostic is an error", async () => {
    skill("project", "engineer", "Bad_Name", "name: Bad_Name\ndescription: breaks the naming rules");
    const lenient = captureIo({ cwd: scratch.dir });
    expect(await runCli(["skills", "engineer", "--project", "project"], lenient)).toBe(0);
    expect(lenient.out).toContain("Bad_Name — breaks the naming rules");
    const strict = captureIo({ cwd: scratch.dir });
    expect(await runCli(["skills", "engineer", "--project", "project", "--strict"], strict)).toBe(1);
    expect(strict.out).toContain("(strict discovery)");
    expect(strict.out).not.toContain("Bad_Name — ");
    expect(strict.out).toMatch(/error {3}invalid_name/);
  });

  it("colours only when the io asks for colour", async () => {
    const io = captureIo({ cwd: scratch.dir, color: true });
    await runCli(["skills", "engineer", "--project", "project"], io);
    expect(io.out).toMatch(ANSI);
  });

  it("no role, no layer, a role that is not a safe name, or an unknown option are usage errors (exit 2)", async () => {
    const noLayer = captureIo({ cwd: scratch.dir });
    expect(await runCli(["skills", "engineer"], noLayer)).toBe(2);
    expect(noLayer.err).toContain("at least one layer");
    expect(await runCli(["skills", "--project", "project"], captureIo())).toBe(2);
    const unsafe = captureIo({ cwd: scratch.dir });
    expect(await runCli(["skills", "../etc", "--project", "project"], unsafe)).toBe(2);
    expect(unsafe.err).toContain("role");
    expect(await runCli(["skills", "engineer", "--project"], captureIo())).toBe(2);
    expect(await runCli(["skills", "engineer", "--layer", "x"], captureIo())).toBe(2);
  });

  it("--help shows the options and an example", async () => {
    const io = captureIo();
    expect(await runCli(["skills", "--help"], io)).toBe(0);
    for (const option of ["--project", "--domain", "--global", "--strict", "--json", "Example:"]) expect(io.out).toContain(option);
  });

  it("the real binary lists skills, and exits 2 without a stack trace on a bad role", async () => {
    const listed = await spawnKeel(["skills", "engineer", "--project", path.join(scratch.dir, "project")]);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toContain("testing — testing for engineer in project");
    const bad = await spawnKeel(["skills", "a/b", "--project", path.join(scratch.dir, "project")]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/^error: /);
    expect(hasStackTrace(bad.stderr)).toBe(false);
  });
});

describe.skipIf(!fixtures.available)("keel skills on real skill libraries (shared fixtures)", () => {
  // fixtures/skills is a layer: `real` (Anthropic's skills) and `edge-cases` (pi's validation cases) are its roles.
  const layer = fixtures.dir;

  it("shows the real skills as OWN, the edge cases as REFERENCE, with their shadowing and diagnostics", async () => {
    const io = captureIo();
    expect(await runCli(["skills", "real", "--project", layer, "--json"], io)).toBe(0);
    const view = JSON.parse(io.out) as SkillsJson;
    expect(view.own.map((entry) => entry.name).sort()).toEqual(["brand-guidelines", "internal-comms", "template-skill", "webapp-testing"]);
    expect(view.reference.map((entry) => entry.name)).toContain("valid-skill");
    expect(view.shadowed.map((shadowed) => shadowed.name)).toEqual(["calendar"]);
    const codes = view.diagnostics.map((diagnostic) => diagnostic.code);
    expect(codes).toEqual(expect.arrayContaining(["invalid_yaml", "missing_description", "no_frontmatter", "name_mismatch"]));
  });

  it("--strict fails (exit 1) on the edge cases but still lists the real skills", async () => {
    const io = captureIo();
    expect(await runCli(["skills", "real", "--project", layer, "--strict"], io)).toBe(1);
    expect(io.out).toMatch(/OWN skills \(4\)/);
  });
});

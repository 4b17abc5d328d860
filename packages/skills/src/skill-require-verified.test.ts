import { appendFileSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { temporaryDirectory, writeSkill } from "./__fixtures__/skill-tree.js";
import { createSkillLibrary, importSkill, setSkillVisibility, type VerificationSummary } from "./index.js";

let work: { dir: string; cleanup: () => void };
let project: string;
let global: string;
beforeEach(() => {
  work = temporaryDirectory("keel-require-verified-");
  project = join(work.dir, "project");
  global = join(work.dir, "global");
});
afterEach(() => work.cleanup());

const passing: VerificationSummary = { backends: [{ backend: "pi", cases: 3, status: "passed", required: true }], unresolved: { critical: 0, high: 0, medium: 0, low: 0 } };

async function imported(layer: string, name: string, options: { verification?: VerificationSummary; manual?: boolean } = {}): Promise<string> {
  const from = join(work.dir, "sources", `${name}-${Math.random().toString(36).slice(2)}`, name);
  writeSkill(from, { name });
  const report = await importSkill({
    from,
    layer,
    role: "engineer",
    routing: "unclassified",
    ...(options.verification ? { verification: options.verification } : {}),
    ...(options.manual ? { manualDecision: { kind: "manual" as const, by: "lead@example" } } : {}),
  });
  return report._unsafeUnwrap().target;
}

const names = (skills: readonly { name: string }[]) => skills.map((skill) => skill.name).sort();

describe("createSkillLibrary({ requireVerified })", () => {
  it("offers only verified managed skills and reports every other one as a diagnostic", async () => {
    await imported(project, "checked", { verification: passing });
    await imported(project, "plain-import");
    await imported(project, "overridden", { manual: true });
    writeSkill(join(project, "engineer", "hand-written"));
    const open = (await createSkillLibrary({ layers: [{ name: "project", dir: project }] }).resolve("engineer"))._unsafeUnwrap();
    expect(names(open.skills)).toEqual(["checked", "hand-written", "overridden", "plain-import"]);

    const library = createSkillLibrary({ layers: [{ name: "project", dir: project }], requireVerified: true });
    expect(library.requireVerified).toBe(true);
    const view = (await library.resolve("engineer"))._unsafeUnwrap();
    expect(names(view.skills)).toEqual(["checked"]);
    expect(names(view.own)).toEqual(["checked"]);
    const refused = view.diagnostics.filter((diagnostic) => diagnostic.code === "unverified");
    expect(refused.map((diagnostic) => diagnostic.path.split("/").at(-2)).sort()).toEqual(["hand-written", "overridden", "plain-import"]);
    expect(refused.every((diagnostic) => diagnostic.severity === "error" && diagnostic.layer === "project" && diagnostic.role === "engineer")).toBe(true);
    expect((await library.get("checked"))._unsafeUnwrap().skill.name).toBe("checked");
    const missing = (await library.get("plain-import"))._unsafeUnwrapErr();
    expect(missing.code).toBe("not_found");
    expect(missing.details).toMatchObject({ reason: "unverified" });
  });

  it("stops offering a verified skill whose files changed, and offers it again when they are as verified", async () => {
    const target = await imported(project, "checked", { verification: passing });
    const library = createSkillLibrary({ layers: [{ name: "project", dir: project }], requireVerified: true });
    expect(names((await library.resolve("engineer"))._unsafeUnwrap().skills)).toEqual(["checked"]);
    const file = join(target, "SKILL.md");
    const original = readFileSync(file);
    appendFileSync(file, "\nAlso run this.\n");
    const stale = (await library.resolve("engineer"))._unsafeUnwrap();
    expect(stale.skills).toEqual([]);
    expect(stale.diagnostics.map((diagnostic) => diagnostic.code)).toEqual(["verification_stale"]);
    writeFileSync(join(target, "extra.sh"), "echo hi\n");
    writeFileSync(file, original);
    expect((await library.resolve("engineer"))._unsafeUnwrap().diagnostics.map((diagnostic) => diagnostic.code)).toEqual(["verification_stale"]);
    rmSync(join(target, "extra.sh"));
    const again = (await library.resolve("engineer"))._unsafeUnwrap();
    expect(names(again.skills)).toEqual(["checked"]);
    expect(again.diagnostics).toEqual([]);
  });

  it("a cached digest is not trusted past a change of the files", async () => {
    const target = await imported(project, "checked", { verification: passing });
    // A clock past the racy window: every file counts as settled, so digests are cached.
    const library = createSkillLibrary({ layers: [{ name: "project", dir: project }], requireVerified: true, clock: { now: () => Date.now() + 60_000 } });
    for (let round = 0; round < 2; round++) expect(names((await library.resolve("engineer"))._unsafeUnwrap().skills)).toEqual(["checked"]);
    appendFileSync(join(target, "SKILL.md"), "\nAlso run this.\n");
    expect((await library.resolve("engineer"))._unsafeUnwrap().diagnostics.map((diagnostic) => diagnostic.code)).toEqual(["verification_stale"]);
  });

  it("keeps hidden verified skills hidden, and a refused skill keeps its precedence", async () => {
    await imported(project, "quiet", { verification: passing });
    await setSkillVisibility({ layer: project, role: "engineer", name: "quiet", visibility: "explicit-only" });
    await imported(project, "shared");
    await imported(global, "shared", { verification: passing });
    const library = createSkillLibrary({ layers: [{ name: "project", dir: project }, { name: "global", dir: global }], requireVerified: true });
    const view = (await library.resolve("engineer"))._unsafeUnwrap();
    expect(names(view.hidden)).toEqual(["quiet"]);
    // The project's unverified "shared" still shadows the global verified one: neither is offered.
    expect(view.skills).toEqual([]);
    expect(view.shadowed.map((shadowed) => [shadowed.name, shadowed.winner.layer])).toEqual([["shared", "project"]]);
    expect(view.diagnostics.map((diagnostic) => [diagnostic.code, diagnostic.layer])).toEqual([["unverified", "project"]]);
    expect((await library.get("quiet"))._unsafeUnwrap().hidden).toBe(true);
  });

  it("refuses a requireVerified that is not a boolean", () => {
    expect(() => createSkillLibrary({ layers: [{ name: "project", dir: project }], requireVerified: "yes" as never })).toThrow(expect.objectContaining({ code: "invalid_input" }));
  });
});

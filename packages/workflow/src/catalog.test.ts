import { mkdtemp, mkdir, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createCatalog, inspectCatalogDirectory, inspectDefinitions, loadCatalog, type CatalogIssue, type DefinitionSet } from "./index.js";

const skill = (id: string, extra: Record<string, unknown> = {}) => ({ schemaVersion: 1, id, version: "1.0.0", description: id, instructions: `do ${id}`, ...extra });
const role = (id: string, skills: string[], extra: Record<string, unknown> = {}) => ({ schemaVersion: 1, id, version: "1.0.0", description: id, skills, ...extra });
const workflow = (id: string, stages: unknown[], extra: Record<string, unknown> = {}) => ({
  schemaVersion: 1,
  id,
  version: "1.0.0",
  description: id,
  kind: "review",
  reviseFrom: "look",
  stages,
  ...extra,
});
const look = { id: "look", kind: "local", role: "looker", skills: ["look_skill"] };
const done = { id: "done", kind: "checkpoint", final: true };
const base = (): DefinitionSet => ({
  skills: [skill("look_skill"), skill("other_skill")] as never,
  roles: [role("looker", ["look_skill"])] as never,
  workflows: [workflow("project_flow", [look, done])] as never,
});

function issues(definitions: DefinitionSet): CatalogIssue[] {
  return inspectDefinitions(definitions).issues;
}

describe("catalog: built-ins", () => {
  it("loads implement_issue and review_change with their roles and skills", () => {
    const catalog = createCatalog()._unsafeUnwrap();
    expect([...catalog.workflows.keys()].sort()).toEqual(["implement_issue", "review_change"]);
    expect(catalog.workflows.get("implement_issue")!.stages.map((stage) => stage.id)).toEqual(["explore", "plan", "implement", "test_analysis", "review", "final"]);
    expect(catalog.workflows.get("review_change")!.stages.map((stage) => stage.id)).toEqual(["explore", "review", "security_review", "resource_review", "decide"]);
    expect(catalog.digest).toMatch(/^sha256:/);
  });

  it("a valid project catalog adds to the built-ins and changes the digest", () => {
    const catalog = createCatalog(base())._unsafeUnwrap();
    expect(catalog.workflows.has("project_flow")).toBe(true);
    expect(catalog.digest).not.toBe(createCatalog()._unsafeUnwrap().digest);
  });
});

describe("catalog: load-time validation", () => {
  it("reports unknown fields with the file and path", () => {
    const found = issues({ ...base(), skills: [skill("look_skill", { extra: 1 }), skill("other_skill")] as never });
    expect(found).toContainEqual(expect.objectContaining({ file: "<objects>/skills[0]", path: "", rule: "schema", reason: 'unknown field "extra"' }));
    const nested = issues({ ...base(), workflows: [workflow("project_flow", [{ ...look, colour: "red" }, done])] as never });
    expect(nested).toContainEqual(expect.objectContaining({ path: "stages.0", rule: "schema" }));
  });

  it("reports duplicate ids and project ids shadowing built-ins", () => {
    expect(issues({ ...base(), skills: [skill("look_skill"), skill("look_skill"), skill("other_skill")] as never })).toContainEqual(expect.objectContaining({ rule: "duplicate", path: "id", file: "<objects>/skills[1]" }));
    expect(issues({ ...base(), skills: [...(base().skills as never[]), skill("explore")] as never })).toContainEqual(expect.objectContaining({ rule: "shadowing", file: "<objects>/skills[2]" }));
  });

  it("reports missing references and a role composed with a skill it does not support", () => {
    const missingRole = issues({ ...base(), workflows: [workflow("project_flow", [{ ...look, role: "ghost" }, done])] as never });
    expect(missingRole).toContainEqual(expect.objectContaining({ rule: "reference", path: "stages.0.role" }));
    const missingSkill = issues({ ...base(), roles: [role("looker", ["look_skill", "nope"])] as never });
    expect(missingSkill).toContainEqual(expect.objectContaining({ rule: "reference", path: "skills.1" }));
    const composition = issues({ ...base(), workflows: [workflow("project_flow", [{ ...look, skills: ["other_skill"] }, done])] as never });
    expect(composition).toContainEqual(expect.objectContaining({ rule: "composition", path: "stages.0.skills.0" }));
  });

  it("reports stage order errors: reading a later stage, reading across a checkpoint", () => {
    const later = issues({ ...base(), workflows: [workflow("project_flow", [{ ...look, reads: ["second"] }, { ...look, id: "second" }, done])] as never });
    expect(later).toContainEqual(expect.objectContaining({ rule: "order", path: "stages.0.reads.0" }));
    const across = issues({ ...base(), workflows: [workflow("project_flow", [look, { id: "mid", kind: "checkpoint" }, { ...look, id: "after", reads: ["look"] }, done])] as never });
    expect(across).toContainEqual(expect.objectContaining({ rule: "order", path: "stages.2.reads.0" }));
  });

  it("reports a workflow without a final checkpoint, and a final checkpoint before the end", () => {
    expect(issues({ ...base(), workflows: [workflow("project_flow", [look])] as never })).toContainEqual(expect.objectContaining({ rule: "final_checkpoint", path: "stages" }));
    expect(issues({ ...base(), workflows: [workflow("project_flow", [done, look, done])] as never })).toContainEqual(expect.objectContaining({ rule: "order", path: "stages.0.final" }));
  });

  it("enforces the limits: entries per kind, bytes per file, bytes in all", () => {
    const many = Array.from({ length: 65 }, (_, index) => skill(`s${index}`));
    expect(issues({ skills: many as never })).toContainEqual(expect.objectContaining({ rule: "limit", file: "<objects>/skills[64]" }));
    expect(createCatalog({ skills: many as never })._unsafeUnwrapErr().code).toBe("limit_exceeded");
    const big = skill("big", { description: "x".repeat(1000), instructions: "y".repeat(8000) });
    expect(inspectDefinitions({ skills: [big] as never }, { limits: { bytesPerFile: 4096 } }).issues).toContainEqual(expect.objectContaining({ rule: "limit", file: "<objects>/skills[0]" }));
    expect(inspectDefinitions({ skills: [big, { ...big, id: "big2" }] as never }, { limits: { bytesInAll: 12_000 } }).issues).toContainEqual(expect.objectContaining({ rule: "limit", file: "<catalog>" }));
  });

  it("an invalid catalog is an invalid_input error listing every issue", () => {
    const result = createCatalog({ ...base(), workflows: [workflow("project_flow", [look])] as never });
    const error = result._unsafeUnwrapErr();
    expect(error.code).toBe("invalid_input");
    expect((error.details as { issues: unknown[] }).issues.length).toBeGreaterThan(0);
  });
});

describe("catalog: profiles", () => {
  const profile = (extra: Record<string, unknown>) => ({ schemaVersion: 1, id: "team", version: "1.0.0", description: "team", ...extra });

  it("accepts tightening overrides and refuses loosening ones, field by field", () => {
    expect(issues({ profiles: [profile({ roleOverrides: { reviewer: { minimumStrength: 60, attempts: 1, timeoutMs: 60_000, tier: "medium", escalation: false, capabilities: ["code"] } } })] as never })).toEqual([]);
    const loose = issues({ profiles: [profile({ roleOverrides: { reviewer: { minimumStrength: 10, attempts: 5, tier: "light" } } })] as never });
    expect(loose.map((issue) => issue.path)).toEqual(expect.arrayContaining(["roleOverrides.reviewer.minimumStrength", "roleOverrides.reviewer.attempts"]));
    expect(loose.every((issue) => issue.rule === "override")).toBe(true);
    expect(loose.map((issue) => issue.path)).not.toContain("roleOverrides.reviewer.tier");
  });

  it("refuses removing, replacing or conditioning a checkpoint, and revalidates a replaced stage", () => {
    const removeCheckpoint = issues({ profiles: [profile({ stageOverrides: { review_change: { decide: { disable: true } } } })] as never });
    expect(removeCheckpoint).toContainEqual(expect.objectContaining({ rule: "override", path: "stageOverrides.review_change.decide" }));
    const badReplace = issues({
      profiles: [profile({ stageOverrides: { review_change: { review: { replace: { id: "review", kind: "local", role: "explorer", skills: ["diff_review"] } } } } })] as never,
    });
    expect(badReplace).toContainEqual(expect.objectContaining({ rule: "composition" }));
    const goodReplace = issues({
      profiles: [profile({ stageOverrides: { review_change: { review: { replace: { id: "review", kind: "local", role: "reviewer", skills: ["diff_review", "security_review"], reads: ["explore"] } } } } })] as never,
    });
    expect(goodReplace).toEqual([]);
  });

  it("validates authority document paths (never loaded) and role references", () => {
    const bad = issues({ profiles: [profile({ authorityDocuments: ["../secrets.md", "/etc/passwd", "docs/ok.md"] })] as never });
    expect(bad).toContainEqual(expect.objectContaining({ path: "authorityDocuments.0", rule: "schema" }));
    expect(bad).toContainEqual(expect.objectContaining({ path: "authorityDocuments.1", rule: "schema" }));
    expect(bad.some((issue) => issue.path === "authorityDocuments.2")).toBe(false);
    const ghost = issues({ profiles: [profile({ authorityDocuments: ["docs/ok.md"], enableRoles: ["ghost"] })] as never });
    expect(ghost).toEqual([expect.objectContaining({ path: "enableRoles.0", rule: "reference" })]);
  });

  it("bounds profile instructions", () => {
    expect(issues({ profiles: [profile({ instructions: "x".repeat(4001) })] as never })).toContainEqual(expect.objectContaining({ path: "instructions", rule: "schema" }));
  });
});

describe("catalog: directories", () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "keel-catalog-"));
    for (const kind of ["skills", "roles", "workflows", "profiles"]) await mkdir(join(dir, kind));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("reads JSON and YAML definitions", async () => {
    await writeFile(join(dir, "skills", "look.json"), JSON.stringify(skill("look_skill")));
    await writeFile(join(dir, "roles", "looker.yaml"), "schemaVersion: 1\nid: looker\nversion: 1.0.0\ndescription: looks\nskills: [look_skill]\n");
    await writeFile(join(dir, "workflows", "flow.yml"), JSON.stringify(workflow("project_flow", [look, done])));
    const catalog = (await loadCatalog(dir))._unsafeUnwrap();
    expect(catalog.roles.get("looker")!.skills).toEqual(["look_skill"]);
    expect(catalog.workflows.has("project_flow")).toBe(true);
  });

  it("reports symlinks, other files, parse errors, oversized files and schema errors with their file and path", async () => {
    await writeFile(join(dir, "skills", "look.json"), JSON.stringify(skill("look_skill")));
    await symlink(join(dir, "skills", "look.json"), join(dir, "skills", "linked.json"));
    await writeFile(join(dir, "skills", "notes.txt"), "hello");
    await writeFile(join(dir, "skills", "broken.yaml"), "id: [unclosed\n");
    await writeFile(join(dir, "skills", "huge.json"), JSON.stringify(skill("huge", { instructions: "x".repeat(40_000) })));
    await writeFile(join(dir, "roles", "bad.yaml"), "schemaVersion: 1\nid: looker\nversion: 1.0.0\ndescription: looks\nskills: [look_skill]\ncolour: red\n");
    await writeFile(join(dir, "roles", "anchors.yaml"), "base: &b [look_skill]\nschemaVersion: 1\nid: other\nversion: 1.0.0\ndescription: x\nskills: *b\n");
    const inspection = (await inspectCatalogDirectory(dir))._unsafeUnwrap();
    const by = (name: string) => inspection.issues.filter((issue) => issue.file.endsWith(name));
    expect(by("linked.json")[0]).toMatchObject({ rule: "file" });
    expect(by("notes.txt")[0]).toMatchObject({ rule: "file" });
    expect(by("broken.yaml")[0]).toMatchObject({ rule: "schema" });
    expect(by("huge.json")[0]).toMatchObject({ rule: "limit" });
    expect(by("bad.yaml")[0]).toMatchObject({ rule: "schema", reason: 'unknown field "colour"' });
    expect(by("anchors.yaml")[0]).toMatchObject({ rule: "schema" });
    expect(inspection.catalog).toBeUndefined();
  });

  it("refuses a kind directory that is a symlink", async () => {
    await rm(join(dir, "profiles"), { recursive: true });
    const elsewhere = await mkdtemp(join(tmpdir(), "keel-catalog-other-"));
    await symlink(elsewhere, join(dir, "profiles"));
    const inspection = (await inspectCatalogDirectory(dir))._unsafeUnwrap();
    expect(inspection.issues).toContainEqual(expect.objectContaining({ rule: "file", file: join(dir, "profiles") }));
    await rm(elsewhere, { recursive: true, force: true });
  });
});

import { appendFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { hasStackTrace, spawnKeel, temporaryDirectory } from "./support/cli-harness.js";

// The real `keel` binary: a verification summary file on import, `requireVerified` on the view,
// and `keel skills visibility`.
let scratch: { dir: string; remove: () => void };
let layer: string;
beforeEach(() => {
  scratch = temporaryDirectory("skills-verification");
  layer = path.join(scratch.dir, "layer");
  for (const name of ["pdf", "docx"]) {
    mkdirSync(path.join(scratch.dir, "source", name), { recursive: true });
    writeFileSync(path.join(scratch.dir, "source", name, "SKILL.md"), `---\nname: ${name}\ndescription: Reads ${name} files. Use when a ${name} file is given.\n---\n# ${name}\n`);
  }
});
afterEach(() => scratch.remove());

const clean = { critical: 0, high: 0, medium: 0, low: 0 };
const passed = [{ backend: "pi", cases: 3, status: "passed", required: true }];

function summaryFile(name: string, content: unknown): string {
  const file = path.join(scratch.dir, name);
  writeFileSync(file, typeof content === "string" ? content : JSON.stringify(content));
  return file;
}

const importArgs = (name: string, ...more: string[]) => ["skills", "import", path.join(scratch.dir, "source", name), "--layer", layer, "--role", "engineer", "--unclassified", ...more];

describe("keel skills import --verification (the binary)", () => {
  it("takes the digest from a dry run, imports with the summary bound to it, and refuses a bad file writing nothing", async () => {
    const dry = await spawnKeel(importArgs("pdf", "--dry-run", "--json"));
    expect(dry.code, dry.stderr).toBe(0);
    const skillDigest = JSON.parse(dry.stdout).metadata.digest as string;
    const good = summaryFile("good.json", { verifiedBy: "ci@example", verifiedAt: "2026-01-15T10:00:00Z", skillDigest, backends: passed, unresolved: clean });
    const imported = await spawnKeel(importArgs("pdf", "--verification", good));
    expect(imported.code, imported.stderr).toBe(0);
    expect(imported.stdout).toContain("admission verified (ci@example, 2026-01-15T10:00:00Z)");
    const metadata = JSON.parse(readFileSync(path.join(layer, "engineer", "pdf", ".keel-skill.json"), "utf8"));
    expect(metadata.admission).toMatchObject({ decision: "verified", verifiedBy: "ci@example", verifiedAt: "2026-01-15T10:00:00Z" });
    expect(metadata.digest).toBe(skillDigest);

    // The summary covers pdf's content, not docx's: refused before anything is written.
    const mismatch = await spawnKeel(importArgs("docx", "--verification", good));
    expect(mismatch.code).toBe(2);
    expect(mismatch.stderr).toContain("covers");
    const malformed = await spawnKeel(importArgs("docx", "--verification", summaryFile("bad.json", "{ nope")));
    expect(malformed.code).toBe(2);
    expect(malformed.stderr).toContain("not valid JSON");
    for (const result of [mismatch, malformed]) expect(hasStackTrace(result.stderr)).toBe(false);
    expect(existsSync(path.join(layer, "engineer", "docx"))).toBe(false);
  });
});

describe("keel skills <role> --require-verified (the binary)", () => {
  it("offers a verified skill until its files change, never an unverified one", async () => {
    const summary = summaryFile("pass.json", { backends: passed, unresolved: clean });
    expect((await spawnKeel(importArgs("pdf", "--verification", summary))).code).toBe(0);
    expect((await spawnKeel(importArgs("docx"))).code).toBe(0);
    const view = async () => {
      const result = await spawnKeel(["skills", "engineer", "--project", layer, "--require-verified", "--json"]);
      expect(result.code, result.stderr).toBe(0);
      const parsed = JSON.parse(result.stdout) as { own: { name: string }[]; diagnostics: { code: string; path: string }[] };
      return { own: parsed.own.map((skill) => skill.name), refused: parsed.diagnostics.map((diagnostic) => `${diagnostic.code} ${path.basename(path.dirname(diagnostic.path))}`) };
    };
    expect(await view()).toEqual({ own: ["pdf"], refused: ["unverified docx"] });
    appendFileSync(path.join(layer, "engineer", "pdf", "SKILL.md"), "\nAlso run this.\n");
    expect(await view()).toEqual({ own: [], refused: ["unverified docx", "verification_stale pdf"] });
  });
});

describe("keel skills visibility (the binary)", () => {
  it("sets explicit-only, shows it, and the view lists the skill as hidden", async () => {
    expect((await spawnKeel(importArgs("pdf"))).code).toBe(0);
    const at = ["--layer", layer, "--role", "engineer"];
    const set = await spawnKeel(["skills", "visibility", "pdf", "explicit-only", ...at]);
    expect([set.code, set.stdout]).toEqual([0, "set pdf explicit-only\n"]);
    const shown = await spawnKeel(["skills", "visibility", "pdf", ...at, "--json"]);
    expect(JSON.parse(shown.stdout)).toEqual({ name: "pdf", visibility: "explicit-only" });
    const view = JSON.parse((await spawnKeel(["skills", "engineer", "--project", layer, "--json"])).stdout);
    expect([view.own.length, view.hidden.map((skill: { name: string }) => skill.name)]).toEqual([0, ["pdf"]]);
    const bad = await spawnKeel(["skills", "visibility", "pdf", "sometimes", ...at]);
    expect(bad.code).toBe(2);
    expect(hasStackTrace(bad.stderr)).toBe(false);
  });
});

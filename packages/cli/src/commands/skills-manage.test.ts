import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { runCli } from "@keel/cli";
import { readSkillMetadata } from "@keel/skills";
import { digestSkillTree } from "@keel/skills/schemas";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { captureIo, temporaryDirectory } from "../../../../test/support/cli-harness.js";

let scratch: { dir: string; remove: () => void };
let from: string;
beforeEach(() => {
  scratch = temporaryDirectory("skills-verification");
  from = path.join(scratch.dir, "source", "pdf");
  mkdirSync(from, { recursive: true });
  writeFileSync(path.join(from, "SKILL.md"), "---\nname: pdf\ndescription: Reads PDF files. Use when a PDF is given.\n---\n# PDF\n");
});
afterEach(() => scratch.remove());

async function keel(...args: string[]) {
  const io = captureIo({ cwd: scratch.dir });
  const code = await runCli(["skills", ...args], io);
  return { code, out: io.out, err: io.err };
}

const clean = { critical: 0, high: 0, medium: 0, low: 0 };
const passed = [{ backend: "pi", cases: 3, status: "passed", required: true }];

function summaryFile(content: unknown, name = "verification.json"): string {
  writeFileSync(path.join(scratch.dir, name), typeof content === "string" ? content : JSON.stringify(content));
  return name;
}

describe("keel skills import --verification", () => {
  it("records the admission and who verified when, in text and in JSON", async () => {
    const skillDigest = (await digestSkillTree(from))._unsafeUnwrap().digest;
    const file = summaryFile({ verifiedBy: "ci@example", verifiedAt: "2026-01-15T10:00:00Z", skillDigest, backends: passed, unresolved: clean });
    const text = await keel("import", "source/pdf", "--layer", "layer", "--role", "engineer", "--unclassified", "--verification", file, "--dry-run");
    expect(text.code).toBe(0);
    expect(text.out).toContain("admission verified (ci@example, 2026-01-15T10:00:00Z)");
    const json = await keel("import", "source/pdf", "--layer", "layer", "--role", "engineer", "--unclassified", "--verification", file, "--json");
    expect(json.code).toBe(0);
    expect(JSON.parse(json.out).metadata.admission).toMatchObject({ decision: "verified", verifiedBy: "ci@example" });
    const stored = (await readSkillMetadata(path.join(scratch.dir, "layer", "engineer", "pdf")))._unsafeUnwrap();
    expect(stored.admission).toMatchObject({ decision: "verified", verifiedAt: "2026-01-15T10:00:00Z" });
  });

  it("without --verification the skill is unverified", async () => {
    const result = await keel("import", "source/pdf", "--layer", "layer", "--role", "engineer", "--unclassified");
    expect(result.out).toContain("admission unverified");
  });

  it("refuses a missing, malformed, refused or mismatched summary and writes nothing", async () => {
    const cases: [string, number, string][] = [
      ["absent.json", 1, "(not_found)"],
      [summaryFile("{ oops", "bad.json"), 2, "not valid JSON"],
      [summaryFile({ backends: passed }, "shape.json"), 2, "unresolved"],
      [summaryFile({ backends: [{ backend: "pi", cases: 3, status: "failed", required: true }], unresolved: clean }, "failed.json"), 2, "not admitted"],
      [summaryFile({ skillDigest: `sha256:${"a".repeat(64)}`, backends: passed, unresolved: clean }, "other.json"), 2, "covers sha256:"],
    ];
    for (const [file, code, text] of cases) {
      const result = await keel("import", "source/pdf", "--layer", "layer", "--role", "engineer", "--unclassified", "--verification", file);
      expect(result.code, file).toBe(code);
      expect(result.err, file).toContain(text);
    }
    expect(existsSync(path.join(scratch.dir, "layer"))).toBe(false);
  });

  it("is an option of import only", async () => {
    const file = summaryFile({ backends: passed, unresolved: clean });
    expect((await keel("withdraw", "pdf", "--layer", "layer", "--role", "engineer", "--verification", file)).code).toBe(2);
    expect((await keel("update", "source", "--layer", "layer", "--role", "engineer", "--unclassified", "--verification", file)).code).toBe(2);
  });
});

describe("keel skills <role> --require-verified", () => {
  it("lists only verified skills and reports the others; with --strict it exits 1", async () => {
    const file = summaryFile({ backends: passed, unresolved: clean });
    expect((await keel("import", "source/pdf", "--layer", "layer", "--role", "engineer", "--unclassified", "--verification", file)).code).toBe(0);
    mkdirSync(path.join(scratch.dir, "layer", "engineer", "notes"));
    writeFileSync(path.join(scratch.dir, "layer", "engineer", "notes", "SKILL.md"), "---\nname: notes\ndescription: Takes notes. Use when notes are asked for.\n---\n");
    const all = JSON.parse((await keel("engineer", "--project", "layer", "--json")).out);
    expect(all.own.map((skill: { name: string }) => skill.name)).toEqual(["notes", "pdf"]);
    const only = await keel("engineer", "--project", "layer", "--json", "--require-verified");
    expect(only.code).toBe(0);
    const view = JSON.parse(only.out);
    expect(view.own.map((skill: { name: string }) => skill.name)).toEqual(["pdf"]);
    expect(view.diagnostics.map((diagnostic: { code: string }) => diagnostic.code)).toEqual(["unverified"]);
    const text = await keel("engineer", "--project", "layer", "--require-verified");
    expect(text.out).toContain("unverified");
    expect((await keel("engineer", "--project", "layer", "--require-verified", "--strict")).code).toBe(1);
  });
});

describe("keel skills visibility", () => {
  it("shows, sets and shows again, in text and JSON; auto is automatic", async () => {
    expect((await keel("import", "source/pdf", "--layer", "layer", "--role", "engineer", "--unclassified")).code).toBe(0);
    const at = ["--layer", "layer", "--role", "engineer"];
    expect(await keel("visibility", "pdf", ...at)).toEqual({ code: 0, out: "pdf automatic\n", err: "" });
    expect((await keel("visibility", "pdf", "explicit-only", ...at)).out).toBe("set pdf explicit-only\n");
    expect((await keel("visibility", "pdf", "explicit-only", ...at)).out).toBe("pdf already explicit-only\n");
    expect(JSON.parse((await keel("visibility", "pdf", ...at, "--json")).out)).toEqual({ name: "pdf", visibility: "explicit-only" });
    const view = JSON.parse((await keel("engineer", "--project", "layer", "--json")).out);
    expect([view.own.length, view.hidden.map((skill: { name: string }) => skill.name)]).toEqual([0, ["pdf"]]);
    expect(JSON.parse((await keel("visibility", "pdf", "auto", ...at, "--json")).out)).toEqual({ name: "pdf", visibility: "automatic", changed: true });
    expect((await keel("visibility", "pdf", ...at)).out).toBe("pdf automatic\n");
  });

  it("a missing skill exits 1 (not_found); bad values and options exit 2", async () => {
    const at = ["--layer", "layer", "--role", "engineer"];
    const missing = await keel("visibility", "absent", ...at);
    expect([missing.code, missing.err.includes("(not_found)")]).toEqual([1, true]);
    for (const args of [["visibility", "pdf", "hidden", ...at], ["visibility", "pdf", "auto", "extra", ...at], ["visibility", ...at], ["visibility", "pdf", "auto", ...at, "--dry-run"], ["visibility", "pdf", "--role", "engineer"]]) {
      expect((await keel(...args)).code, args.join(" ")).toBe(2);
    }
  });
});

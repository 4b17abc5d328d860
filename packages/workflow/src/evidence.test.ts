import { createHash } from "node:crypto";
import { mkdtemp, mkdir, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { intakeEvidence, type EvidenceInput } from "./index.js";
import { cutText } from "./response-bounds.js";
import { EvidenceSchema } from "./schemas.js";
import { makeEngine, reviewTask } from "../../../test/support/workflow-harness.js";

const parse = (input: EvidenceInput) => EvidenceSchema.safeParse(input);

describe("evidence: schema bounds", () => {
  it("bounds each free-text field at 24,000 characters and all text at 48,000", () => {
    expect(parse({ diff: "x".repeat(24_000) }).success).toBe(true);
    expect(parse({ diff: "x".repeat(24_001) }).success).toBe(false);
    expect(parse({ diff: "x".repeat(24_000), context: "y".repeat(24_000) }).success).toBe(true);
    expect(parse({ diff: "x".repeat(24_000), context: "y".repeat(24_000), testOutput: "z" }).success).toBe(false);
  });

  it("allows at most 8 files and 500 lines each, with a valid range and a confined path", () => {
    const file = (path: string, firstLine = 1, lastLine = 10) => ({ path, firstLine, lastLine });
    expect(parse({ files: Array.from({ length: 8 }, (_, index) => file(`f${index}.ts`)) }).success).toBe(true);
    expect(parse({ files: Array.from({ length: 9 }, (_, index) => file(`f${index}.ts`)) }).success).toBe(false);
    expect(parse({ files: [file("a.ts", 1, 500)] }).success).toBe(true);
    expect(parse({ files: [file("a.ts", 1, 501)] }).success).toBe(false);
    expect(parse({ files: [file("a.ts", 10, 9)] }).success).toBe(false);
    for (const path of ["../a.ts", "src/../../a.ts", "/etc/passwd", "C:/x", "a\\b"]) expect(parse({ files: [file(path)] }).success).toBe(false);
    expect(parse({ validationStatus: "maybe" as never }).success).toBe(false);
  });
});

describe("evidence: intake from the source root", () => {
  let root: string;
  let outside: string;
  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), "keel-evidence-"));
    outside = await mkdtemp(join(tmpdir(), "keel-outside-"));
    await mkdir(join(root, "src"));
    await writeFile(join(root, "src", "pager.ts"), Array.from({ length: 20 }, (_, index) => `line ${index + 1}`).join("\n"));
    await writeFile(join(outside, "secret.txt"), "secret");
  });
  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
    await rm(outside, { recursive: true, force: true });
  });

  it("reads the excerpt with the whole file's hash beside it", async () => {
    const snapshot = (await intakeEvidence(EvidenceSchema.parse({ files: [{ path: "src/pager.ts", firstLine: 3, lastLine: 5 }] }), root))._unsafeUnwrap();
    const whole = Array.from({ length: 20 }, (_, index) => `line ${index + 1}`).join("\n");
    expect(snapshot.files).toEqual([{ path: "src/pager.ts", firstLine: 3, lastLine: 5, text: "line 3\nline 4\nline 5", hash: `sha256:${createHash("sha256").update(whole).digest("hex")}` }]);
  });

  it("refuses a symlink leading out, a directory, a missing file and a range past the end", async () => {
    await symlink(join(outside, "secret.txt"), join(root, "src", "link.txt"));
    await symlink(outside, join(root, "out"));
    const read = (path: string, lastLine = 1) => intakeEvidence(EvidenceSchema.parse({ files: [{ path, firstLine: 1, lastLine }] }), root);
    expect((await read("src/link.txt"))._unsafeUnwrapErr().code).toBe("invalid_input");
    expect((await read("out/secret.txt"))._unsafeUnwrapErr().code).toBe("invalid_input");
    expect((await read("src"))._unsafeUnwrapErr().code).toBe("invalid_input");
    expect((await read("src/none.ts"))._unsafeUnwrapErr().code).toBe("not_found");
    expect((await read("src/pager.ts", 21))._unsafeUnwrapErr().code).toBe("invalid_input");
  });

  it("needs a configured source root to select files, and counts excerpts in the 48,000 total", async () => {
    expect((await intakeEvidence(EvidenceSchema.parse({ files: [{ path: "src/pager.ts", firstLine: 1, lastLine: 2 }] }), undefined))._unsafeUnwrapErr().code).toBe("unsupported");
    await writeFile(join(root, "wide.txt"), Array.from({ length: 10 }, () => "w".repeat(3000)).join("\n"));
    const result = await intakeEvidence(EvidenceSchema.parse({ diff: "d".repeat(20_000), context: "c".repeat(20_000), files: [{ path: "wide.txt", firstLine: 1, lastLine: 10 }] }), root);
    expect(result._unsafeUnwrapErr().code).toBe("too_large");
  });

  it("later evidence replaces the fields it gives and keeps the others", async () => {
    const first = (await intakeEvidence(EvidenceSchema.parse({ context: "ctx", diff: "d1" }), root))._unsafeUnwrap();
    const second = (await intakeEvidence(EvidenceSchema.parse({ diff: "d2", validationStatus: "passed" }), root, first))._unsafeUnwrap();
    expect(second).toMatchObject({ context: "ctx", diff: "d2", validationStatus: "passed", files: [] });
  });
});

describe("requests and responses are bounded", () => {
  it("a request over 200,000 bytes is too_large, a malformed one invalid_input", async () => {
    const { engine } = makeEngine();
    const huge = reviewTask("big", { objective: "x".repeat(3000), evidence: { diff: "d".repeat(24_000), context: "é".repeat(24_000) }, scope: Array.from({ length: 64 }, () => "p/".repeat(100) + "x") });
    const big = { ...huge, extra: "e".repeat(200_000) };
    expect((await engine.start(big as never))._unsafeUnwrapErr().code).toBe("too_large");
    expect((await engine.start({ ...reviewTask(), risk: "extreme" } as never))._unsafeUnwrapErr().code).toBe("invalid_input");
    expect((await engine.step("not a run id", { version: 1 }))._unsafeUnwrapErr().code).toBe("invalid_input");
  });

  it("cutText keeps to the byte bound on a character boundary and always says what it cut", () => {
    fc.assert(
      fc.property(fc.string({ unit: "grapheme", maxLength: 400 }), fc.integer({ min: 60, max: 500 }), (text, bound) => {
        fc.pre(!text.includes("\uFFFD"));
        const cut = cutText(text, bound);
        expect(Buffer.byteLength(cut.text, "utf8")).toBeLessThanOrEqual(Math.max(bound, Buffer.byteLength(text, "utf8") <= bound ? 0 : bound));
        if (cut.cut) {
          expect(cut.text).toMatch(/\[… cut by keel: \d+ bytes omitted\]$/);
          expect(cut.text).not.toContain("\uFFFD");
        } else {
          expect(cut.text).toBe(text);
        }
      }),
      { numRuns: 300 },
    );
  });
});

import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, readlinkSync, realpathSync, symlinkSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { faultyIo, snapshotTree } from "./__fixtures__/managed-tree.js";
import { temporaryDirectory, writeSkill } from "./__fixtures__/skill-tree.js";
import { importSkill, readSkillMetadata } from "./skill-import.js";
import { nodeSkillIo, type SkillIo } from "./skill-io.js";
import { createSkillLibrary } from "./skill-library.js";
import { updateLibrary } from "./skill-library-update.js";
import { setSkillVisibility } from "./skill-visibility.js";
import { withdrawSkill } from "./skill-withdraw.js";

let work: { dir: string; cleanup: () => void };
let layer: string;
let role: string;
beforeEach(() => {
  work = temporaryDirectory("keel-swap-");
  layer = join(work.dir, "layer");
  role = join(layer, "engineer");
});
afterEach(() => work.cleanup());

/** A source skill `pdf` whose body and script name `version`. */
function source(version: string, name = "pdf"): string {
  const dir = join(work.dir, "sources", `${name}-${version}-${Math.random().toString(36).slice(2)}`, name);
  writeSkill(dir, { name, body: `# ${name}\n\nversion ${version}\n` });
  mkdirSync(join(dir, "scripts"));
  writeFileSync(join(dir, "scripts", "run.py"), `print("${version}")\n`);
  return dir;
}

/** A clock the test moves. */
function manualClock(start = 1_800_000_000_000) {
  let now = start;
  return { now: () => now, advance: (ms: number) => (now += ms) };
}

const versionsOf = (name: string) => readdirSync(role).filter((entry) => entry.startsWith(`.${name}@`)).sort();
const importPdf = (version: string, extra: Partial<Parameters<typeof importSkill>[0]> = {}) =>
  importSkill({ from: source(version), layer, role: "engineer", routing: "unclassified", overwrite: true, ...extra });

describe("the layout of a managed skill", () => {
  it("is a link in the role directory to a version directory beside it; discovery reports the link's path", async () => {
    const report = (await importPdf("v1"))._unsafeUnwrap();
    expect(report.target).toBe(join(role, "pdf"));
    expect(lstatSync(report.target).isSymbolicLink()).toBe(true);
    expect(versionsOf("pdf")).toEqual([readlinkSync(report.target)]);
    expect(readlinkSync(report.target)).toMatch(/^\.pdf@\d+-[0-9a-f]{8}$/);
    const library = createSkillLibrary({ layers: [{ name: "project", dir: layer }] });
    const view = (await library.resolve("engineer"))._unsafeUnwrap();
    expect(view.diagnostics).toEqual([]);
    const real = realpathSync(role);
    expect(view.own.map((skill) => [skill.name, skill.directory, skill.path])).toEqual([["pdf", join(real, "pdf"), join(real, "pdf", "SKILL.md")]]);
    // The path a view handed out stays valid across a replacement and leads to the new version.
    (await importPdf("v2"))._unsafeUnwrap();
    const body = (await library.readBody(view.own[0]!, { role: "engineer" }))._unsafeUnwrap();
    expect(body.text).toContain("version v2");
  });

  it("a replacement keeps the previous version in place for the grace period, then the next operation removes it", async () => {
    const clock = manualClock();
    (await importPdf("v1", { clock, versionGraceMs: 60_000 }))._unsafeUnwrap();
    const [first] = versionsOf("pdf");
    clock.advance(1_000);
    (await importPdf("v2", { clock, versionGraceMs: 60_000 }))._unsafeUnwrap();
    expect(versionsOf("pdf")).toHaveLength(2);
    expect(readFileSync(join(role, first!, "scripts", "run.py"), "utf8")).toBe('print("v1")\n');
    clock.advance(59_000);
    // 59 s after v2 replaced v1: v1 is kept; a third version replaces v2 now.
    (await importPdf("v3", { clock, versionGraceMs: 60_000 }))._unsafeUnwrap();
    expect(versionsOf("pdf")).toHaveLength(3);
    clock.advance(1_000);
    // v1 was replaced 60 s ago: removed by any managed operation on the role; v2 (replaced 1 s ago) stays.
    (await setSkillVisibility({ layer, role: "engineer", name: "pdf", visibility: "automatic", clock, versionGraceMs: 60_000 }))._unsafeUnwrap();
    expect(versionsOf("pdf")).toHaveLength(2);
    expect(versionsOf("pdf")).not.toContain(first);
    expect(versionsOf("pdf")).toContain(readlinkSync(join(role, "pdf")));
    expect(readFileSync(join(role, "pdf", "scripts", "run.py"), "utf8")).toBe('print("v3")\n');
  });

  it("refuses a grace period that is not a non-negative integer", async () => {
    for (const versionGraceMs of [-1, 1.5, Number.NaN, "10" as never]) {
      expect((await importPdf("v1", { versionGraceMs }))._unsafeUnwrapErr().code).toBe("invalid_input");
    }
    expect(existsSync(layer)).toBe(false);
  });
});

describe("a skill installed before versions (a plain directory)", () => {
  it("keeps working, and the next managed update makes it a link (the old tree retired as a version)", async () => {
    const legacy = join(role, "pdf");
    writeSkill(legacy, { body: "legacy body\n" });
    const library = createSkillLibrary({ layers: [{ name: "project", dir: layer }] });
    expect((await library.resolve("engineer"))._unsafeUnwrap().own.map((skill) => skill.name)).toEqual(["pdf"]);
    expect((await setSkillVisibility({ layer, role: "engineer", name: "pdf", visibility: "explicit-only" })).isOk()).toBe(true);
    const report = (await importPdf("v2"))._unsafeUnwrap();
    expect(report.replaced).toBe(true);
    expect(lstatSync(legacy).isSymbolicLink()).toBe(true);
    expect(versionsOf("pdf")).toHaveLength(2);
    const retired = versionsOf("pdf").find((entry) => entry !== readlinkSync(legacy))!;
    expect(readFileSync(join(role, retired, "SKILL.md"), "utf8")).toContain("legacy body");
    expect((await readSkillMetadata(legacy))._unsafeUnwrap().name).toBe("pdf");
    const view = (await library.resolve("engineer"))._unsafeUnwrap();
    expect(view.hidden.map((skill) => skill.name)).toEqual(["pdf"]);
  });

  it("a failed migration puts the directory back", async () => {
    const legacy = join(role, "pdf");
    writeSkill(legacy, { body: "legacy body\n" });
    const before = snapshotTree(layer);
    const io = faultyIo({ method: "rename", when: (path) => path.includes(".keel-link.") });
    expect((await importPdf("v2", { io }))._unsafeUnwrapErr().code).toBe("io_failed");
    expect(io.fired()).toBe(1);
    expect(snapshotTree(layer)).toEqual(before);
  });
});

describe("failures after the swap", () => {
  it("a failed fsync after the link was renamed in restores the previous link", async () => {
    (await importPdf("v1"))._unsafeUnwrap();
    const before = snapshotTree(layer);
    const io = faultyIo({ method: "syncDirectory", when: (path) => path === role, nth: 2 });
    expect((await importPdf("v2", { io }))._unsafeUnwrapErr().code).toBe("io_failed");
    expect(io.fired()).toBe(1);
    expect(snapshotTree(layer)).toEqual(before);
  });

  it("when the undo fails too, nothing is deleted and the error names the version kept", async () => {
    (await importPdf("v1"))._unsafeUnwrap();
    const io = faultyIo({ method: "rename", when: (path) => path.includes(".keel-link.") }, { method: "unlink", when: (path) => path.includes(".keel-link.") });
    const error = (await importPdf("v2", { io }))._unsafeUnwrapErr();
    expect(error.code).toBe("io_failed");
    const details = error.details as { restored: boolean; version: string };
    expect(details.restored).toBe(false);
    expect(readFileSync(join(details.version, "scripts", "run.py"), "utf8")).toBe('print("v2")\n');
    // The skill itself was never touched: still v1.
    expect(readFileSync(join(role, "pdf", "scripts", "run.py"), "utf8")).toBe('print("v1")\n');
    // The next operation sweeps the stray link away.
    (await importPdf("v3"))._unsafeUnwrap();
    expect(readdirSync(role).filter((entry) => entry.startsWith(".keel-"))).toEqual([]);
  });
});

describe("discovery of managed links", () => {
  it("still refuses a link that leaves the layer, managed-looking or not", async () => {
    const outside = join(work.dir, "outside");
    writeSkill(join(outside, "pdf"));
    writeSkill(join(outside, "csv"));
    mkdirSync(role, { recursive: true });
    symlinkSync(join(outside, "pdf"), join(role, ".pdf@1-aaaaaaaa"));
    symlinkSync(".pdf@1-aaaaaaaa", join(role, "pdf"));
    symlinkSync(join(outside, "csv"), join(role, "csv"));
    const view = (await createSkillLibrary({ layers: [{ name: "project", dir: layer }] }).resolve("engineer"))._unsafeUnwrap();
    expect(view.skills).toEqual([]);
    expect(view.diagnostics.map((diagnostic) => diagnostic.code)).toEqual(["symlink_escape", "symlink_escape"]);
    // An import never writes through such a link: it is not a managed skill's.
    expect((await importPdf("v1"))._unsafeUnwrapErr().code).toBe("conflict");
  });

  it("a link from another role to a managed skill is the same skill, kept once", async () => {
    (await importPdf("v1"))._unsafeUnwrap();
    mkdirSync(join(layer, "planner"));
    symlinkSync(join("..", "engineer", "pdf"), join(layer, "planner", "pdf"));
    const view = (await createSkillLibrary({ layers: [{ name: "project", dir: layer }] }).resolve("engineer"))._unsafeUnwrap();
    expect(view.skills.map((skill) => skill.role)).toEqual(["engineer"]);
    expect(view.diagnostics.map((diagnostic) => diagnostic.code)).toEqual(["duplicate_path"]);
  });
});

describe("staging a managed skill", () => {
  it("links to the skill's stable path (the current version after a replacement), or copies its current version", async () => {
    (await importPdf("v1"))._unsafeUnwrap();
    const library = createSkillLibrary({ layers: [{ name: "project", dir: layer }] });
    const view = (await library.resolve("engineer"))._unsafeUnwrap();
    const linked = (await library.stage(view, join(work.dir, "linked"), { method: "symlink" }))._unsafeUnwrap();
    const copied = (await library.stage(view, join(work.dir, "copied"), { method: "copy" }))._unsafeUnwrap();
    expect([linked.skills[0]!.action, copied.skills[0]!.action]).toEqual(["linked", "copied"]);
    expect(lstatSync(join(copied.skills[0]!.target, "SKILL.md")).isFile()).toBe(true);
    expect(readFileSync(join(copied.skills[0]!.target, "scripts", "run.py"), "utf8")).toBe('print("v1")\n');
    (await importPdf("v2"))._unsafeUnwrap();
    expect(readFileSync(join(linked.skills[0]!.target, "scripts", "run.py"), "utf8")).toBe('print("v2")\n');
    // Staging again finds the link already there: unchanged.
    const again = (await library.stage((await library.resolve("engineer"))._unsafeUnwrap(), join(work.dir, "linked"), { method: "symlink" }))._unsafeUnwrap();
    expect(again.skills[0]!.action).toBe("unchanged");
  });
});

describe("what an interrupted operation left is finished or undone by the next one", () => {
  it("a staging is removed, a new link whose skill is absent is renamed in, a stray link removed, a withdrawal undone", async () => {
    (await importPdf("v1"))._unsafeUnwrap();
    (await importSkill({ from: source("v1", "csv"), layer, role: "engineer", routing: "unclassified" }))._unsafeUnwrap();
    (await importSkill({ from: source("v1", "doc"), layer, role: "engineer", routing: "unclassified" }))._unsafeUnwrap();
    const csvVersion = readlinkSync(join(role, "csv"));
    const docVersion = readlinkSync(join(role, "doc"));
    // A power cut during an import (staging only), between a migration's two renames (csv absent,
    // its new link beside it), after a new link was made (pdf still linked), in a withdrawal (doc
    // renamed away, its version still here).
    mkdirSync(join(role, ".keel-staging.pdf.01ABC"));
    writeFileSync(join(role, ".keel-staging.pdf.01ABC", "SKILL.md"), "half");
    symlinkSync(csvVersion, join(role, ".keel-link.csv.01ABD"));
    writeFileSync(join(role, ".keel-skip"), "not ours");
    // csv's link is the one cut away:
    await nodeSkillIo.unlink(join(role, "csv"));
    symlinkSync(readlinkSync(join(role, "pdf")), join(role, ".keel-link.pdf.01ABE"));
    await nodeSkillIo.rename(join(role, "doc"), join(role, ".keel-withdrawing.doc.01ABF"));
    (await setSkillVisibility({ layer, role: "engineer", name: "pdf", visibility: "automatic" }))._unsafeUnwrap();
    expect(readdirSync(role).filter((entry) => entry.startsWith(".keel-"))).toEqual([".keel-skip"]);
    expect(readlinkSync(join(role, "csv"))).toBe(csvVersion);
    expect(readlinkSync(join(role, "doc"))).toBe(docVersion);
    const view = (await createSkillLibrary({ layers: [{ name: "project", dir: layer }] }).resolve("engineer"))._unsafeUnwrap();
    expect(view.skills.map((skill) => skill.name)).toEqual(["csv", "doc", "pdf"]);
  });
});

describe("withdrawing a managed skill", () => {
  it("moves its version with its metadata to the trash and leaves no link", async () => {
    (await importPdf("v1"))._unsafeUnwrap();
    const report = (await withdrawSkill({ layer, role: "engineer", name: "pdf" }))._unsafeUnwrap();
    expect(existsSync(join(role, "pdf"))).toBe(false);
    expect(lstatSync(report.trash).isDirectory()).toBe(true);
    expect(readFileSync(join(report.trash, "scripts", "run.py"), "utf8")).toBe('print("v1")\n');
    expect(existsSync(join(report.trash, ".keel-skill.json"))).toBe(true);
    expect(readdirSync(role).filter((entry) => entry.startsWith(".keel-"))).toEqual([]);
  });

  it("a refused move of the version puts the link back", async () => {
    (await importPdf("v1"))._unsafeUnwrap();
    const before = snapshotTree(layer);
    const io = faultyIo({ method: "rename", when: (path) => path.includes("/.pdf@") });
    expect((await withdrawSkill({ layer, role: "engineer", name: "pdf", io }))._unsafeUnwrapErr().code).toBe("io_failed");
    expect(io.fired()).toBe(1);
    expect(snapshotTree(layer)).toEqual(before);
  });
});

describe("the role lock", () => {
  it("an empty lock directory (what a power cut can leave) is free", async () => {
    mkdirSync(join(layer, ".keel", "locks", "engineer"), { recursive: true });
    (await importPdf("v1", { lockWaitMs: 0 }))._unsafeUnwrap();
    expect(existsSync(join(layer, ".keel"))).toBe(false);
  });
});

/** A `SkillIo` that records every call that succeeded, in the order they finished. */
function recordingIo(): SkillIo & { calls: { method: string; args: string[] }[] } {
  const calls: { method: string; args: string[] }[] = [];
  const io = Object.fromEntries(
    (Object.keys(nodeSkillIo) as (keyof SkillIo)[]).map((method) => [
      method,
      async (...args: unknown[]) => {
        const result = await (nodeSkillIo[method] as (...inner: unknown[]) => Promise<unknown>)(...args);
        calls.push({ method, args: args.filter((arg) => typeof arg === "string") as string[] });
        return result;
      },
    ]),
  ) as unknown as SkillIo;
  return Object.assign(io, { calls });
}

/**
 * Every name created or renamed into a directory is made durable by an fsync of that directory
 * later in the same operation (files are fsynced by `writeFile` itself). Exempt: the lock's own
 * tokens, renamed inside the lock directory (a lock lost to a power cut is free, as it should be).
 */
function expectDurable(calls: readonly { method: string; args: string[] }[]): void {
  const creating = new Set(["mkdir", "rename", "symlink", "writeFile"]);
  for (const [index, call] of calls.entries()) {
    if (!creating.has(call.method)) continue;
    const path = call.method === "rename" || call.method === "symlink" ? call.args[1]! : call.args[0]!;
    if (/[\\/]\.keel[\\/]locks[\\/][^\\/]+[\\/]/.test(path)) continue;
    const synced = calls.slice(index + 1).some((later) => later.method === "syncDirectory" && later.args[0] === dirname(path));
    expect(synced, `${call.method} ${call.args.join(" → ")} is not followed by an fsync of ${dirname(path)}`).toBe(true);
  }
}

describe("every write of the skills layer is durable", () => {
  it("import (new, replacing, migrating), visibility, library update and withdrawal fsync each directory they change", async () => {
    const operations: [string, (io: SkillIo) => Promise<{ isOk(): boolean }>][] = [
      ["import into a new layer", async (io) => importPdf("v1", { io })],
      ["replace", async (io) => importPdf("v2", { io })],
      ["visibility", async (io) => setSkillVisibility({ layer, role: "engineer", name: "pdf", visibility: "explicit-only", io })],
      [
        "library update",
        async (io) => {
          writeSkill(join(work.dir, "library", "skills", "csv"));
          return updateLibrary({ source: join(work.dir, "library"), layer, role: "engineer", routing: "unclassified", apply: true, io });
        },
      ],
      ["withdraw", async (io) => withdrawSkill({ layer, role: "engineer", name: "pdf", io })],
      [
        "migrate a plain directory",
        async (io) => {
          writeSkill(join(role, "pdf"));
          return importPdf("v3", { io });
        },
      ],
    ];
    for (const [what, operation] of operations) {
      const io = recordingIo();
      expect((await operation(io)).isOk(), what).toBe(true);
      expect(io.calls.some((call) => call.method === "syncDirectory"), what).toBe(true);
      expectDurable(io.calls);
    }
  });
});

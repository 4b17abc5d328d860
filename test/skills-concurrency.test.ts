import { cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { readSkillMetadata } from "@keel/skills";
import { digestSkillTree } from "@keel/skills/schemas";
import { afterAll, describe, expect, it } from "vitest";
import { sharedFixtures } from "./support/shared-fixtures.js";
import { startWorker, type Worker } from "./support/store-fs-child.js";

const made: string[] = [];
afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

const { dir: real, available } = sharedFixtures("skills", "real");

async function runTogether(workers: Worker[]): Promise<unknown[]> {
  try {
    await Promise.all(workers.map((worker) => worker.waitFor(/^loaded$/)));
    for (const worker of workers) worker.child.stdin!.write("go\n");
    const exits = await Promise.all(workers.map((worker) => worker.exited));
    workers.forEach((worker, index) => expect(exits[index]!.code, worker.stderr()).toBe(0));
    return workers.map((worker) => JSON.parse(worker.lines.find((line) => line.startsWith("result "))!.slice("result ".length)) as unknown);
  } finally {
    for (const worker of workers) worker.child.kill("SIGKILL");
  }
}

type ImportResult = { ok: { name: string; digest: string } } | { code: string };
type UpdateResult = { ok: { name: string; action: string; done: boolean }[] } | { code: string };

describe.skipIf(!available)("@keel/skills: an import and a library update of the same skill in two processes", () => {
  it("one wins, the other gets a typed error (or reports the conflict), and the skill is never half-written", async () => {
    const outcomes: string[] = [];
    for (let round = 0; round < 3; round++) {
      const dir = mkdtempSync(path.join(tmpdir(), "keel-skills-race-"));
      made.push(dir);
      const layer = path.join(dir, "layer");
      const library = path.join(dir, "checkout");
      for (const name of ["webapp-testing", "internal-comms"]) cpSync(path.join(real, name), path.join(library, "skills", name), { recursive: true });
      const local = path.join(dir, "local", "webapp-testing");
      cpSync(path.join(real, "webapp-testing"), local, { recursive: true });
      mkdirSync(path.join(local, "scripts"));
      for (let index = 0; index < 40; index++) writeFileSync(path.join(local, "scripts", `step-${index}.py`), `print(${index})\n`.repeat(200));
      const localDigest = (await digestSkillTree(local))._unsafeUnwrap().digest;
      const upstreamDigest = (await digestSkillTree(path.join(library, "skills", "webapp-testing")))._unsafeUnwrap().digest;

      const [imported, updated] = (await runTogether([
        startWorker("test/support/skills-manage-worker.ts", ["import", layer, "engineer", local]),
        startWorker("test/support/skills-manage-worker.ts", ["update", layer, "engineer", library]),
      ])) as [ImportResult, UpdateResult];

      const target = path.join(layer, "engineer", "webapp-testing");
      const onDisk = (await digestSkillTree(target))._unsafeUnwrap().digest;
      expect((await readSkillMetadata(target))._unsafeUnwrap().digest).toBe(onDisk);
      const updateWrote = "ok" in updated && updated.ok.some((entry) => entry.name === "webapp-testing" && entry.done);
      if (onDisk === localDigest) {
        expect("ok" in imported).toBe(true);
        expect(updateWrote).toBe(false);
        if (!("ok" in updated)) expect(["conflict", "unavailable"]).toContain(updated.code);
        else expect(updated.ok.find((entry) => entry.name === "webapp-testing")?.action).toBe("conflict");
        outcomes.push("import won" + ("ok" in updated ? " (update reported the conflict)" : ` (update: ${updated.code})`));
      } else {
        expect(onDisk).toBe(upstreamDigest);
        expect(updateWrote).toBe(true);
        expect("code" in imported && ["conflict", "unavailable"].includes(imported.code)).toBe(true);
        outcomes.push(`update won (import: ${"code" in imported ? imported.code : "?"})`);
      }
      // Nothing half-done is left: no staging, no backup, no lock.
      expect(readdirSync(path.join(layer, "engineer")).filter((name) => name.startsWith(".keel-") && name !== ".keel-library.json")).toEqual([]);
      expect(readdirSync(layer).filter((name) => name === ".keel")).toEqual([]);
    }
    expect(outcomes).toHaveLength(3);
    console.log(outcomes.join("\n"));
  });
});

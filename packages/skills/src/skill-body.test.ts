import { execFileSync } from "node:child_process";
import { mkdirSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createEventBus, type KeelEventMap } from "@keel/core";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { temporaryDirectory, writeSkill } from "./__fixtures__/skill-tree.js";
import { createSkillLibrary, type SkillLibrary } from "./skill-library.js";

let root = "";
let cleanup = () => {};
let library: SkillLibrary;
let reads: KeelEventMap["agent.io.read"][] = [];
beforeEach(() => {
  const made = temporaryDirectory();
  root = realpathSync(made.dir);
  cleanup = made.cleanup;
  reads = [];
  const events = createEventBus();
  events.on("agent.io.read", (event) => reads.push(event));
  library = createSkillLibrary({ layers: [{ name: "project", dir: join(root, "project") }], events, limits: { maxFileBytes: 1024 } });
});
afterEach(() => cleanup());

describe("readBody", () => {
  it("reads the body after the frontmatter on demand and records the read", async () => {
    writeSkill(join(root, "project/engineer/build"), { body: "# Build\n\nRun make.\n" });
    const view = (await library.resolve("engineer"))._unsafeUnwrap();
    const skill = view.skills[0]!;
    expect(reads).toEqual([]);
    const body = (await library.readBody(skill, { role: "engineer", missionId: "m-1" }))._unsafeUnwrap();
    expect(body).toEqual({ name: "build", path: skill.path, text: "# Build\n\nRun make.\n", bytes: skill.bytes });
    expect(reads).toEqual([
      { type: "agent.io.read", at: expect.any(Number), role: "engineer", missionId: "m-1", path: skill.path, bytes: skill.bytes, skill: "build" },
    ]);
    await library.readBody(skill, { role: "reviewer" });
    expect(reads[1]).toMatchObject({ role: "reviewer", missionId: null });
  });

  it("answers not_found for a removed file and too_large past the cap, emitting nothing", async () => {
    const path = writeSkill(join(root, "project/engineer/build"));
    const view = (await library.resolve("engineer"))._unsafeUnwrap();
    writeFileSync(path, `---\nname: build\ndescription: d\n---\n${"x".repeat(2000)}`);
    expect((await library.readBody(view.skills[0]!, { role: "engineer" }))._unsafeUnwrapErr().code).toBe("too_large");
    rmSync(join(root, "project/engineer/build"), { recursive: true });
    expect((await library.readBody(view.skills[0]!, { role: "engineer" }))._unsafeUnwrapErr().code).toBe("not_found");
    expect(reads).toEqual([]);
  });

  it("refuses paths that are not a SKILL.md inside the library's layers, and bad contexts", async () => {
    writeSkill(join(root, "outside/escaped"));
    mkdirSync(join(root, "project/engineer/link"), { recursive: true });
    symlinkSync(join(root, "outside/escaped/SKILL.md"), join(root, "project/engineer/link/SKILL.md"));
    writeFileSync(join(root, "project/engineer/notes.txt"), "secret");
    const cases = [
      { name: "x", path: join(root, "outside/escaped/SKILL.md") },
      { name: "x", path: join(root, "project/engineer/link/SKILL.md") },
      { name: "x", path: join(root, "project/engineer/notes.txt") },
      { name: "x", path: "relative/SKILL.md" },
      { name: "", path: join(root, "project/engineer/link/SKILL.md") },
    ];
    for (const skill of cases) expect((await library.readBody(skill, { role: "engineer" }))._unsafeUnwrapErr().code).toBe("invalid_input");
    writeSkill(join(root, "project/engineer/build"));
    const good = { name: "build", path: join(root, "project/engineer/build/SKILL.md") };
    expect((await library.readBody(good, { role: "../x" }))._unsafeUnwrapErr().code).toBe("invalid_input");
    expect((await library.readBody(good, { role: "engineer", missionId: "a b" }))._unsafeUnwrapErr().code).toBe("invalid_input");
    expect(reads).toEqual([]);
  });

  it("does not hang on a FIFO named SKILL.md", async () => {
    mkdirSync(join(root, "project/engineer/fifo"), { recursive: true });
    execFileSync("mkfifo", [join(root, "project/engineer/fifo/SKILL.md")]);
    const result = await library.readBody({ name: "fifo", path: join(root, "project/engineer/fifo/SKILL.md") }, { role: "engineer" });
    expect(result._unsafeUnwrapErr().code).toBe("not_found");
  });
});

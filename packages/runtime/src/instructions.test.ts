import { mkdir, mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { KeelError } from "@keel/core";
import { createKeel } from "@keel/runtime";
import { createMemoryStore } from "@keel/store";
import { describe, expect, it } from "vitest";
import { createFakeBackend } from "../../../test/support/runtime-fake-backend.js";

/** A repository with instructions at its root and in a package below it; the turn runs in the package. */
async function repository(): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), "keel-instructions-"));
  await mkdir(join(root, ".git"));
  await mkdir(join(root, "packages", "app"), { recursive: true });
  await writeFile(join(root, "AGENTS.md"), "Use pnpm, never npm.\n");
  await writeFile(join(root, "packages", "app", "AGENTS.md"), "This package is ESM only.\n");
  return join(root, "packages", "app");
}

describe("project instructions in the prompt", () => {
  it("puts them, general to specific, into fresh turns of a backend that loads none, not into resumed ones", async () => {
    const cwd = await repository();
    const backend = createFakeBackend({ instructions: "prompt" });
    const keel = createKeel({ store: createMemoryStore(), backends: [backend], policy: "rolling", cwd });
    const first = (await keel.runRoleTurn({ missionId: "m1", role: "engineer", prompt: "Add the flag.", objective: "Ship" }))._unsafeUnwrap();
    expect(first.plan.action).toBe("fresh");
    expect(first.warnings).toEqual([]);
    const prompt = backend.requests[0]!.prompt;
    expect(prompt).toContain("## Project instructions");
    expect(prompt.indexOf("Use pnpm, never npm.")).toBeGreaterThan(-1);
    expect(prompt.indexOf("Use pnpm, never npm.")).toBeLessThan(prompt.indexOf("This package is ESM only."));
    const second = (await keel.runRoleTurn({ missionId: "m1", role: "engineer", prompt: "Test it.", objective: "Ship" }))._unsafeUnwrap();
    expect(second.plan.action).toBe("resumed");
    expect(backend.requests[1]!.prompt).not.toContain("Use pnpm");
    await keel.close();
  });

  it("adds nothing for a backend that loads them itself, or when switched off", async () => {
    const cwd = await repository();
    const native = createFakeBackend({ id: "native" });
    const prompting = createFakeBackend({ id: "prompting", instructions: "prompt" });
    const keel = createKeel({ store: createMemoryStore(), backends: [native], cwd });
    (await keel.runRoleTurn({ missionId: "m1", role: "engineer", prompt: "Go.", objective: "O" }))._unsafeUnwrap();
    expect(native.requests[0]!.prompt).not.toContain("Project instructions");
    await keel.close();
    const off = createKeel({ store: createMemoryStore(), backends: [prompting], cwd, instructions: false });
    (await off.runRoleTurn({ missionId: "m1", role: "engineer", prompt: "Go.", objective: "O" }))._unsafeUnwrap();
    expect(prompting.requests[0]!.prompt).not.toContain("Project instructions");
    await off.close();
  });

  it("refuses bad instruction options with invalid_input", () => {
    expect(() => createKeel({ store: createMemoryStore(), instructions: { fileNames: [] } })).toThrowError(KeelError);
    try {
      createKeel({ store: createMemoryStore(), instructions: { fileNames: [""] } });
      expect.unreachable();
    } catch (error) {
      expect(KeelError.is(error, "invalid_input")).toBe(true);
    }
  });
});

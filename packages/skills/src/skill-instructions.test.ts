import { mkdirSync, realpathSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { loadProjectContextFiles } from "@mariozechner/pi-coding-agent";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { temporaryDirectory } from "./__fixtures__/skill-tree.js";
import { discoverInstructions, renderInstructions } from "./skill-instructions.js";

let work: { dir: string; cleanup: () => void };
let root: string;
const write = (path: string, text: string) => {
  mkdirSync(join(path, ".."), { recursive: true });
  writeFileSync(path, text);
};

beforeEach(() => {
  work = temporaryDirectory("keel-instructions-");
  root = realpathSync(work.dir);
  write(join(root, "agent", "AGENTS.md"), "agent-wide rules\n");
  write(join(root, "outer", "AGENTS.md"), "above the repository\n");
  mkdirSync(join(root, "outer", "repo", ".git"), { recursive: true });
  write(join(root, "outer", "repo", "CLAUDE.md"), "repository rules\n");
  write(join(root, "outer", "repo", "packages", "AGENTS.md"), "packages rules\n");
  write(join(root, "outer", "repo", "packages", "CLAUDE.md"), "not read: AGENTS.md comes first\n");
  mkdirSync(join(root, "outer", "repo", "packages", "app", "src"), { recursive: true });
});
afterEach(() => work.cleanup());

const cwd = () => join(root, "outer", "repo", "packages", "app", "src");

describe("discoverInstructions", () => {
  it("finds the same files in the same order as pi's resource loader (trusting what is outside the repository)", async () => {
    const pi = loadProjectContextFiles({ cwd: cwd(), agentDir: join(root, "agent") });
    const keel = (await discoverInstructions({ cwd: cwd(), agentDir: join(root, "agent"), trustOutsideRepository: true }))._unsafeUnwrap();
    expect(keel.files.map((file) => [file.path, file.content])).toEqual(pi.map((file) => [file.path, file.content]));
    expect(keel.files.map((file) => file.scope)).toEqual(["agent", "outside", "repository", "repository"]);
    expect(keel.repositoryRoot).toBe(join(root, "outer", "repo"));
  });

  it("by default reads only from the repository root down, and says what it left out", async () => {
    const keel = (await discoverInstructions({ cwd: cwd(), agentDir: join(root, "agent") }))._unsafeUnwrap();
    expect(keel.files.map((file) => file.content)).toEqual(["agent-wide rules\n", "repository rules\n", "packages rules\n"]);
    expect(keel.skipped).toEqual([{ path: join(root, "outer", "AGENTS.md"), reason: "untrusted" }]);
    const only = (await discoverInstructions({ cwd: cwd(), fileNames: ["CLAUDE.md"] }))._unsafeUnwrap();
    expect(only.files.map((file) => file.content)).toEqual(["repository rules\n", "not read: AGENTS.md comes first\n"]);
  });

  it("the worktree case: a linked worktree inside its main checkout stops at its own root (pi also loads the main checkout's copy)", async () => {
    const main = join(root, "main");
    mkdirSync(join(main, ".git"), { recursive: true });
    write(join(main, "AGENTS.md"), "the rules\n");
    const worktree = join(main, ".worktrees", "feature");
    write(join(worktree, ".git"), `gitdir: ${join(main, ".git", "worktrees", "feature")}\n`);
    write(join(worktree, "AGENTS.md"), "the rules\n");
    mkdirSync(join(worktree, "src"));
    const pi = loadProjectContextFiles({ cwd: join(worktree, "src"), agentDir: join(root, "no-agent") });
    expect(pi.map((file) => file.path)).toEqual([join(main, "AGENTS.md"), join(worktree, "AGENTS.md")]);
    const keel = (await discoverInstructions({ cwd: join(worktree, "src") }))._unsafeUnwrap();
    expect(keel.repositoryRoot).toBe(worktree);
    expect(keel.files.map((file) => file.path)).toEqual([join(worktree, "AGENTS.md")]);
  });

  it("uses one real file once, however it is reached (pi reads a linked copy twice)", async () => {
    symlinkSync(join(root, "agent", "AGENTS.md"), join(root, "outer", "repo", "packages", "app", "AGENTS.md"));
    const keel = (await discoverInstructions({ cwd: cwd(), agentDir: join(root, "agent") }))._unsafeUnwrap();
    expect(keel.files.map((file) => file.content)).toEqual(["agent-wide rules\n", "repository rules\n", "packages rules\n"]);
    expect(keel.skipped).toContainEqual({ path: join(root, "outer", "repo", "packages", "app", "AGENTS.md"), reason: "duplicate" });
    expect(loadProjectContextFiles({ cwd: cwd(), agentDir: join(root, "agent") }).filter((file) => file.content === "agent-wide rules\n")).toHaveLength(2);
  });

  it("caps each file and the total, dropping the most general first", async () => {
    write(join(root, "outer", "repo", "packages", "app", "AGENTS.md"), "x".repeat(200));
    const capped = (await discoverInstructions({ cwd: cwd(), maxFileBytes: 100 }))._unsafeUnwrap();
    expect(capped.skipped).toContainEqual({ path: join(root, "outer", "repo", "packages", "app", "AGENTS.md"), reason: "too_large" });
    const budget = (await discoverInstructions({ cwd: cwd(), maxTotalBytes: 210 }))._unsafeUnwrap();
    expect(budget.files.map((file) => file.path)).toEqual([join(root, "outer", "repo", "packages", "app", "AGENTS.md")]);
    expect(budget.skipped.filter((file) => file.reason === "over_budget")).toHaveLength(2);
    expect((await discoverInstructions({ cwd: cwd(), fileNames: ["../x"] }))._unsafeUnwrapErr().code).toBe("invalid_input");
  });
});

describe("renderInstructions", () => {
  it("tags each file with its path, in order", () => {
    const text = renderInstructions([
      { path: "/r/AGENTS.md", content: "general\n" },
      { path: '/r/a "b"/AGENTS.md', content: "specific" },
    ])._unsafeUnwrap();
    expect(text).toBe(
      [
        "<project_instructions>",
        "Project-specific instructions, general to specific; a later file overrides an earlier one.",
        '<instructions path="/r/AGENTS.md">',
        "general",
        "</instructions>",
        '<instructions path="/r/a &quot;b&quot;/AGENTS.md">',
        "specific",
        "</instructions>",
        "</project_instructions>",
      ].join("\n"),
    );
    expect(renderInstructions([])._unsafeUnwrap()).toBe("");
    expect(renderInstructions([{ path: "", content: "x" }])._unsafeUnwrapErr().code).toBe("invalid_input");
  });
});

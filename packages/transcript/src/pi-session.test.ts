import { copyFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { buildSessionContext, convertToLlm, SessionManager } from "@mariozechner/pi-coding-agent";
import { createMemoryStore } from "@keel/store";
import { afterAll, describe, expect, it } from "vitest";
import { sharedFixtures } from "../../../test/support/shared-fixtures.js";
import { exportPiSession } from "./pi-session-export.js";
import { importPiSession } from "./pi-session-import.js";
import { importPiSessionToStore } from "./pi-session-store.js";
import { openTranscript } from "./transcript-open.js";

const { dir: fixtures, available: haveFixtures } = sharedFixtures("sessions", "pi");
// Without the fixtures, one placeholder name so that the skipped cases still show in the report.
const fixtureFiles = haveFixtures ? readdirSync(fixtures).filter((name) => name.endsWith(".jsonl")).sort() : ["the pi fixtures"];

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});
function tempDir(): string {
  const dir = mkdtempSync(path.join(tmpdir(), "keel-pi-"));
  dirs.push(dir);
  return dir;
}

/** pi's own view of a file: SessionManager.open (on a copy: pi rewrites files it migrates) + buildSessionContext + convertToLlm. */
function piContext(file: string) {
  const copy = path.join(tempDir(), "session.jsonl");
  copyFileSync(file, copy);
  const manager = SessionManager.open(copy);
  const context = manager.buildSessionContext();
  return { manager, messages: convertToLlm(context.messages), model: context.model, thinkingLevel: context.thinkingLevel };
}

function piContextOfText(text: string) {
  const file = path.join(tempDir(), "session.jsonl");
  writeFileSync(file, text);
  return piContext(file);
}

/** A pi session written by pi itself with every entry type, two compactions, a branch summary and labels. */
function piWrittenSession(): string {
  const dir = tempDir();
  const manager = SessionManager.create("/home/user/proj", dir);
  const usage = { input: 10, output: 5, cacheRead: 0, cacheWrite: 0, totalTokens: 15, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };
  const assistant = (text: string) => ({ role: "assistant" as const, content: [{ type: "text" as const, text }], api: "openai-completions" as const, provider: "fake", model: "fake-model", usage, stopReason: "stop" as const, timestamp: 5 });
  manager.appendModelChange("fake", "fake-model");
  manager.appendThinkingLevelChange("medium");
  const u1 = manager.appendMessage({ role: "user", content: [{ type: "text", text: "first question" }], timestamp: 1 });
  manager.appendMessage(assistant("first answer"));
  manager.appendMessage({ role: "assistant", content: [{ type: "toolCall", id: "c1", name: "read", arguments: { path: "a.txt" } }], api: "openai-completions", provider: "fake", model: "fake-model", usage, stopReason: "toolUse", timestamp: 6 });
  manager.appendMessage({ role: "toolResult", toolCallId: "c1", toolName: "read", content: [{ type: "text", text: "file a" }], isError: false, timestamp: 7 });
  manager.appendCustomEntry("ext-state", { counter: 1 });
  manager.appendCustomMessageEntry("ext-note", "a note for the model", true, { extra: 1 });
  const kept = manager.appendMessage({ role: "user", content: "second question", timestamp: 8 });
  manager.appendMessage(assistant("second answer"));
  manager.appendCompaction("SUMMARY ONE", kept, 1234, { readFiles: ["a.txt"], modifiedFiles: [] }, false);
  manager.appendMessage({ role: "bashExecution", command: "ls", output: "a.txt\n", exitCode: 0, cancelled: false, truncated: false, timestamp: 9 } as never);
  manager.appendMessage({ role: "bashExecution", command: "secret", output: "hidden", exitCode: 1, cancelled: false, truncated: false, excludeFromContext: true, timestamp: 10 } as never);
  const kept2 = manager.appendMessage({ role: "user", content: "third question", timestamp: 11 });
  manager.appendMessage(assistant("third answer"));
  manager.appendLabelChange(u1, "start");
  manager.appendSessionInfo("demo");
  manager.appendCompaction("SUMMARY TWO", kept2, 2345, undefined, true);
  manager.appendMessage({ role: "user", content: "fourth", timestamp: 12 });
  manager.branchWithSummary(kept, "explored something else", { readFiles: ["b.txt"] });
  manager.appendMessage(assistant("after the branch"));
  return readFileSync(manager.getSessionFile() as string, "utf8");
}

describe("importPiSession matches pi's own SessionManager", () => {
  it.skipIf(!haveFixtures).each(fixtureFiles)("builds the context pi builds from %s", (name) => {
    const file = path.join(fixtures, name);
    const imported = importPiSession(readFileSync(file, "utf8"))._unsafeUnwrap();
    expect(imported.diagnostics).toEqual([]);
    const keel = imported.buildContext()._unsafeUnwrap();
    const pi = piContext(file);
    expect(keel.messages.length).toBeGreaterThan(0);
    expect(keel.messages).toEqual(pi.messages);
    expect(keel.model).toEqual(pi.model);
    expect(keel.thinkingLevel).toBe(pi.thinkingLevel);
    expect(imported.tree().size).toBe(pi.manager.getEntries().length);
  });

  it.skipIf(!haveFixtures)("migrates a v1 file as pi does: ids chained in file order", () => {
    const file = path.join(fixtures, "large-session.v1.jsonl");
    const imported = importPiSession(readFileSync(file, "utf8"))._unsafeUnwrap();
    expect(imported.header.version).toBe(1);
    const entries = imported.entries;
    expect(entries[0]?.parentId).toBeNull();
    for (let index = 1; index < entries.length; index++) expect(entries[index]?.parentId).toBe(entries[index - 1]?.id);
    expect(new Set(entries.map((entry) => entry.id)).size).toBe(entries.length);
    // Repeatable: the same file gives the same ids.
    expect(importPiSession(readFileSync(file, "utf8"))._unsafeUnwrap().entries.map((entry) => entry.id)).toEqual(entries.map((entry) => entry.id));
  });

  it("maps every entry type of a file pi wrote and builds the same context at every entry", () => {
    const text = piWrittenSession();
    const imported = importPiSession(text)._unsafeUnwrap();
    expect(imported.diagnostics).toEqual([]);
    const types = new Set(imported.entries.map((entry) => entry.type));
    expect([...types].sort()).toEqual(["branch_summary", "compaction", "custom", "custom_message", "label", "message", "model_change", "session_info", "thinking_change"]);
    const piEntries = JSON.parse(`[${text.trim().split("\n").slice(1).join(",")}]`);
    for (const entry of imported.entries) {
      const pi = buildSessionContext(piEntries, entry.id);
      const keel = imported.buildContext(entry.id)._unsafeUnwrap();
      expect(keel.messages, `at ${entry.type} ${entry.id}`).toEqual(convertToLlm(pi.messages));
      expect(keel.model).toEqual(pi.model);
      expect(keel.thinkingLevel).toBe(pi.thinkingLevel);
    }
    // The leaf is on the branch summary's branch (off `kept`, before both compactions).
    const atLeaf = imported.buildContext()._unsafeUnwrap();
    expect(atLeaf.compactionId).toBeNull();
    expect(JSON.stringify(atLeaf.messages)).toContain("explored something else");
    const fourth = imported.entries.find((entry) => entry.type === "message" && (entry["message"] as { content: unknown }).content === "fourth")!;
    const context = imported.buildContext(fourth.id)._unsafeUnwrap();
    expect(context.compactionId).not.toBeNull();
    expect(JSON.stringify(context.messages)).toContain("SUMMARY TWO");
    expect(JSON.stringify(context.messages)).not.toContain("hidden");
    expect(imported.entries.find((entry) => entry.type === "compaction" && entry["summary"] === "SUMMARY TWO")?.["source"]).toBe("hook");
    expect(imported.tree().label(imported.entries.find((entry) => entry.type === "message")!.id)).toBe("start");
  });

  it("keeps unknown entry types and message roles, and ignores them in the context as pi does", () => {
    const text = piWrittenSession().trimEnd().split("\n");
    const last = JSON.parse(text[text.length - 1] as string) as { id: string };
    text.push(JSON.stringify({ type: "future_thing", id: "f1", parentId: last.id, timestamp: "2030-01-01T00:00:00.000Z", payload: { deep: [1, 2] } }));
    text.push(JSON.stringify({ type: "message", id: "f2", parentId: "f1", timestamp: "2030-01-01T00:00:00.000Z", message: { role: "hologram", content: "x" } }));
    const joined = `${text.join("\n")}\n`;
    const imported = importPiSession(joined)._unsafeUnwrap();
    expect(imported.tree().get("f1")).toMatchObject({ type: "future_thing", payload: { deep: [1, 2] } });
    expect(imported.tree().get("f2")).toBeDefined();
    expect(imported.buildContext()._unsafeUnwrap().messages).toEqual(piContextOfText(joined).messages);
    expect(exportPiSession(imported)._unsafeUnwrap()).toContain('"future_thing"');
  });
});

describe("exportPiSession", () => {
  it.skipIf(!haveFixtures).each(fixtureFiles)("writes v3 that pi opens to the same context (%s)", (name) => {
    const imported = importPiSession(readFileSync(path.join(fixtures, name), "utf8"))._unsafeUnwrap();
    const exported = exportPiSession(imported)._unsafeUnwrap();
    expect(JSON.parse(exported.split("\n")[0] as string)).toMatchObject({ type: "session", version: 3, id: imported.header.id });
    const pi = piContextOfText(exported);
    expect(pi.messages).toEqual(imported.buildContext()._unsafeUnwrap().messages);
    expect(importPiSession(exported)._unsafeUnwrap().buildContext()._unsafeUnwrap()).toEqual(imported.buildContext()._unsafeUnwrap());
  });

  it("exports a Keel transcript with branches, resumed by pi at the chosen leaf", async () => {
    const store = createMemoryStore();
    const transcript = (await openTranscript({ store, sessionId: "k1" }))._unsafeUnwrap();
    (await transcript.append({ type: "model_change", provider: "fake", modelId: "fake-model" }))._unsafeUnwrap();
    (await transcript.append({ type: "thinking_change", thinkingLevel: "low" }))._unsafeUnwrap();
    const question = (await transcript.append({ type: "message", message: { role: "user", content: "q", timestamp: 1 } }))._unsafeUnwrap();
    const answer = (await transcript.append({ type: "message", message: { role: "assistant", content: [{ type: "text", text: "a1" }], provider: "fake", model: "fake-model", timestamp: 2 } }))._unsafeUnwrap();
    (await transcript.append({ type: "message", message: { role: "user", content: "follow-up", timestamp: 3 } }))._unsafeUnwrap();
    (await transcript.branch(question.id))._unsafeUnwrap();
    (await transcript.append({ type: "message", message: { role: "assistant", content: [{ type: "text", text: "a2" }], provider: "fake", model: "fake-model", timestamp: 4 } }))._unsafeUnwrap();
    (await transcript.append({ type: "compaction", summary: "S", firstKeptEntryId: question.id, tokensBefore: 3, tokensAfter: 1, source: "summarizer" }))._unsafeUnwrap();
    for (const leaf of [transcript.leafId() as string, answer.id]) {
      const exported = exportPiSession(transcript, { leafId: leaf, cwd: "/tmp/x" })._unsafeUnwrap();
      const pi = piContextOfText(exported);
      const keel = transcript.buildContext(leaf)._unsafeUnwrap();
      expect(pi.messages).toEqual(keel.messages);
      expect(pi.model).toEqual(keel.model);
      expect(pi.thinkingLevel).toBe(keel.thinkingLevel);
      expect(pi.manager.getLeafId()).toBe(leaf);
    }
    expect(exportPiSession(transcript, { leafId: "ghost" })._unsafeUnwrapErr().code).toBe("not_found");
  });

  it("imports a file into a store and reopens it with the same context", async () => {
    const text = piWrittenSession();
    const store = createMemoryStore();
    const { transcript, diagnostics } = (await importPiSessionToStore({ store, text, sessionId: "imported" }))._unsafeUnwrap();
    expect(diagnostics).toEqual([]);
    const reopened = (await openTranscript({ store, sessionId: "imported", create: false }))._unsafeUnwrap();
    expect(reopened.buildContext()._unsafeUnwrap()).toEqual(importPiSession(text)._unsafeUnwrap().buildContext()._unsafeUnwrap());
    expect(reopened.leafId()).toBe(transcript.leafId());
    expect((await importPiSessionToStore({ store, text, sessionId: "imported" }))._unsafeUnwrapErr().code).toBe("conflict");
  });
});

describe("bad pi session files", () => {
  const header = JSON.stringify({ type: "session", version: 3, id: "abc", timestamp: "2026-01-01T00:00:00.000Z", cwd: "/x" });
  const entry = (id: string, parentId: string | null, text = id) =>
    JSON.stringify({ type: "message", id, parentId, timestamp: "2026-01-01T00:00:00.000Z", message: { role: "user", content: text, timestamp: 1 } });

  it("reports a torn last line with its number and keeps everything before it", () => {
    const text = `${header}\n${entry("a", null)}\n${entry("b", "a").slice(0, 30)}`;
    const imported = importPiSession(text)._unsafeUnwrap();
    expect(imported.diagnostics).toEqual([expect.objectContaining({ line: 3, code: "torn_last_line" })]);
    expect(imported.entries.map((item) => item.id)).toEqual(["a"]);
    expect(importPiSession(text, { strict: true }).isOk()).toBe(true);
  });

  it("reports a line that is not JSON, a blank line, a second header and a missing parent, or refuses them when strict", () => {
    const text = `${header}\n${entry("a", null)}\nnot json\n\n${header}\n${entry("c", "ghost")}\n`;
    const imported = importPiSession(text)._unsafeUnwrap();
    expect(imported.diagnostics.map((item) => [item.line, item.code])).toEqual([
      [3, "not_json"],
      [4, "blank_line"],
      [5, "second_header"],
      [6, "missing_parent"],
    ]);
    expect(imported.tree().get("c")?.parentId).toBeNull();
    const strict = importPiSession(text, { strict: true })._unsafeUnwrapErr();
    expect(strict.code).toBe("corrupt");
    expect(strict.details["line"]).toBe(3);
  });

  it("refuses a cycle, a duplicate id with different content, an unknown version and a bad header", () => {
    const cycle = importPiSession(`${header}\n${entry("a", "b")}\n${entry("b", "a")}\n`)._unsafeUnwrapErr();
    expect(cycle.code).toBe("corrupt");
    expect(cycle.details["line"]).toBe(2);
    const duplicate = importPiSession(`${header}\n${entry("a", null, "one")}\n${entry("a", null, "two")}\n`)._unsafeUnwrapErr();
    expect([duplicate.code, duplicate.details["line"]]).toEqual(["corrupt", 3]);
    const same = importPiSession(`${header}\n${entry("a", null)}\n${entry("a", null)}\n`)._unsafeUnwrap();
    expect(same.diagnostics).toEqual([expect.objectContaining({ line: 3, code: "duplicate_id" })]);
    expect(importPiSession(`${header.replace('"version":3', '"version":4')}\n`)._unsafeUnwrapErr().code).toBe("unsupported");
    expect(importPiSession("")._unsafeUnwrapErr().code).toBe("corrupt");
    expect(importPiSession("{not json\n")._unsafeUnwrapErr().code).toBe("corrupt");
    expect(importPiSession(`${entry("a", null)}\n`)._unsafeUnwrapErr().code).toBe("corrupt");
    expect(importPiSession(42 as never)._unsafeUnwrapErr().code).toBe("invalid_input");
    const invalid = importPiSession(`${header}\n${JSON.stringify({ type: "model_change", id: "m", parentId: null, timestamp: "t" })}\n`)._unsafeUnwrap();
    expect(invalid.diagnostics).toEqual([expect.objectContaining({ line: 2, code: "invalid_entry" })]);
  });
});

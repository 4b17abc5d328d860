import { describe, expect, it } from "vitest";
import { validateBackendTurnRequest as validateTurnRequest } from "@keel/backend";
import { promptArgument } from "./index.js";

const base = { prompt: "hello", cwd: "/work/repo", timeoutMs: 1000 };

describe("validateTurnRequest", () => {
  it("accepts a minimal and a full request, and process.env as env", () => {
    expect(validateTurnRequest(base)._unsafeUnwrap()).toEqual(base);
    const full = { ...base, model: "opus", threadId: "ses_abc-123", skillPaths: ["/skills/a"], env: { KEEL_X: "1" } };
    expect(validateTurnRequest(full)._unsafeUnwrap()).toEqual(full);
    expect(validateTurnRequest({ ...base, env: process.env }).isOk()).toBe(true);
  });

  it.each([
    ["an empty prompt", { ...base, prompt: "" }],
    ["a relative cwd", { ...base, cwd: "repo" }],
    ["a zero timeout", { ...base, timeoutMs: 0 }],
    ["a fractional timeout", { ...base, timeoutMs: 1.5 }],
    ["a thread id that looks like a flag", { ...base, threadId: "--help" }],
    ["a thread id with whitespace", { ...base, threadId: "a b" }],
    ["a model that looks like a flag", { ...base, model: "-m" }],
    ["a relative skill path", { ...base, skillPaths: ["skills/a"] }],
    ["a bad environment name", { ...base, env: { "A=B": "1" } }],
    ["a NUL in the prompt", { ...base, prompt: "a\0b" }],
    ["an unknown key", { ...base, extra: 1 }],
    ["not an object", "prompt"],
  ])("refuses %s with invalid_input", (_what, request) => {
    const error = validateTurnRequest(request)._unsafeUnwrapErr();
    expect(error.code).toBe("invalid_input");
    expect(Array.isArray(error.details.issues)).toBe(true);
  });
});

describe("promptArgument", () => {
  it("keeps a prompt from being read as a flag or a pi file reference", () => {
    expect(promptArgument("--version")).toBe(" --version");
    expect(promptArgument("@file.md")).toBe(" @file.md");
    expect(promptArgument("plain -- text")).toBe("plain -- text");
  });
});

import { KeelError } from "@keel/core";
import { describe, expect, it } from "vitest";
import { backendError, isTransientFailure, withBackendContext } from "./index.js";

describe("isTransientFailure: what the CLIs and providers say when a failure is transient", () => {
  it.each([
    'API Error: 529 {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}',
    "unexpected status 503 Service Unavailable: upstream overloaded",
    "[API Error: 429 Resource exhausted]",
    "stream error: exceeded retry limit, last status: 500 Internal Server Error",
    'APIError: {"statusCode":502}',
    "Rate limit reached for requests",
    "429 Too Many Requests",
    "HTTP 504 Gateway Timeout",
  ])("transient: %s", (message) => {
    expect(isTransientFailure(message)).toBe(true);
  });

  it.each([
    "API Error: 401 invalid x-api-key",
    "Model not found: nonexistent/nonexistent.",
    "Reached maximum number of turns (2)",
    "No conversation found with session ID: abc",
    "wrote 500 lines to out.txt",
    "",
  ])("not transient: %s", (message) => {
    expect(isTransientFailure(message)).toBe(false);
  });

  it("matches any of several texts (in-band error, stderr, stray output)", () => {
    expect(isTransientFailure("exited with code 1", "", "Error: 503 Service Unavailable")).toBe(true);
  });
});

describe("backendError and withBackendContext", () => {
  it("give every error the details the port promises", () => {
    const error = backendError("backend_failed", "codex", "codex failed", { threadId: "t1", exitCode: 1, stderr: " boom \n", retryable: true });
    expect(error).toMatchObject({ code: "backend_failed", retryable: true });
    expect(error.details).toEqual({ backend: "codex", threadId: "t1", resumeFailed: false, exitCode: 1, stderr: "boom" });
    const wrapped = withBackendContext(new KeelError("timeout", "ran too long"), "pi", "s1");
    expect(wrapped).toMatchObject({ code: "timeout", message: "ran too long", retryable: true });
    expect(wrapped.details).toMatchObject({ backend: "pi", threadId: "s1", resumeFailed: false });
  });
});

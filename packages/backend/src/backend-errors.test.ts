import { KeelError } from "@keel/core";
import { describe, expect, it } from "vitest";
import { backendError, withBackendContext } from "./index.js";

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

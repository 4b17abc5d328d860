import { describe, expect, it } from "vitest";
import { isTransientFailure } from "./index.js";

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
    // pi 0.73.1: the provider SDK's "<status> <message>", whatever the provider's words.
    "500 fake-server-fault-5001",
    "529 fake-busy-5291",
    // Codex 0.171.0 replaces a 5xx's message with its own.
    "We’re currently experiencing high demand, which may cause temporary errors.",
    "The server had an error while processing your request. Sorry about that!",
  ])("transient: %s", (message) => {
    expect(isTransientFailure(message)).toBe(true);
  });

  it.each([
    "API Error: 401 invalid x-api-key",
    "Model not found: nonexistent/nonexistent.",
    "Reached maximum number of turns (2)",
    "No conversation found with session ID: abc",
    "wrote 500 lines to out.txt",
    "400 fake-bad-request-7731",
    "5000 files checked",
    "kept a temporary file",
    "",
  ])("not transient: %s", (message) => {
    expect(isTransientFailure(message)).toBe(false);
  });

  it("matches any of several texts (in-band error, stderr, stray output)", () => {
    expect(isTransientFailure("exited with code 1", "", "Error: 503 Service Unavailable")).toBe(true);
  });
});

// A provider error as pi, Codex and OpenCode really report it: their stdout, exit code and stderr
// recorded from the real CLIs (test/real-clis, pnpm test:clis) against the fake provider
// answering 400, 500 and 529, replayed through each parser and the shared outcome decision.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { createCodexParser } from "./codex/index.js";
import { decideTurnOutcome, type StreamParser } from "./kit/index.js";
import { createOpenCodeParser } from "./opencode/index.js";
import { createPiParser } from "./pi/index.js";

interface Recording {
  cli: string;
  create: () => StreamParser;
  /** Exit code and stderr of the recorded run. */
  exitCode: number;
  stderr: string;
}

const recordings: Recording[] = [
  { cli: "pi", create: createPiParser, exitCode: 0, stderr: "" },
  { cli: "codex", create: createCodexParser, exitCode: 1, stderr: "Reading additional input from stdin...\n" },
  { cli: "opencode", create: createOpenCodeParser, exitCode: 1, stderr: "" },
];

/** The provider's message in each recording (what the fake provider was scripted to answer). */
const PROVIDER_MESSAGES = { 400: "fake-bad-request-7731", 500: "fake-server-fault-5001", 529: "fake-busy-5291" } as const;

function replay({ cli, create, exitCode, stderr }: Recording, status: keyof typeof PROVIDER_MESSAGES) {
  const parser = create();
  for (const line of readFileSync(new URL(`./${cli}/__fixtures__/${cli}.provider-${status}.jsonl`, import.meta.url), "utf8").split("\n")) parser.push(line);
  return decideTurnOutcome(parser.findings(), { exitCode, signal: null, stderr }, { backend: cli, resumeThreadId: null, resumeFailure: /$^/ })._unsafeUnwrapErr();
}

describe.each(recordings)("$cli: a provider error, in the real CLI's words", (recording) => {
  it("a 400 is backend_failed, not retryable, with the provider's message", () => {
    const error = replay(recording, 400);
    expect({ code: error.code, retryable: error.retryable }).toEqual({ code: "backend_failed", retryable: false });
    expect(error.message).toContain(PROVIDER_MESSAGES[400]);
  });

  it.each([500, 529] as const)("a %i is backend_failed and retryable", (status) => {
    const error = replay(recording, status);
    expect({ code: error.code, retryable: error.retryable }).toEqual({ code: "backend_failed", retryable: true });
    // Codex 0.171.0 replaces a 500's message with its own ("high demand … temporary errors").
    if (!(recording.cli === "codex" && status === 500)) expect(error.message).toContain(PROVIDER_MESSAGES[status]);
  });
});

import type { Backend, TurnRequest, TurnResult } from "@keel/backends";
import { UsageSchema, type KeelError } from "@keel/core";
import type { Result } from "neverthrow";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { waitForProcessesToExit } from "./process-probe.js";

/**
 * What the suite asks a backend to play:
 *
 * - `success` — an ordinary turn.
 * - `unknown_events` — the same turn with event types the adapter does not know mixed in.
 * - `in_band_error` — the CLI reports an error in its stream and exits 0.
 * - `garbage` — the CLI prints something that is not its promised format and exits 0.
 * - `hang` — the CLI prints its first event (with the thread id, where it has one), starts a
 *   child process and never finishes.
 */
export type BackendConformanceScenario = "success" | "unknown_events" | "in_band_error" | "garbage" | "hang";

/** One isolated instance of the backend under test, made by {@link BackendConformanceTarget.setup}. */
export interface BackendConformanceHarness {
  /** The backend under test. */
  backend: Backend;
  /** An absolute, existing working directory for its turns. */
  cwd: string;
  /**
   * The request fields that make the backend play `scenario` — e.g. an environment variable read
   * by a fake CLI, or a prompt a scripted backend reacts to. Merged over the suite's request.
   */
  scenario(scenario: BackendConformanceScenario): Partial<TurnRequest>;
  /**
   * Pids of the processes the backend has started so far (the CLI and its children), for the
   * process-group checks. Omit for a backend that starts no process.
   */
  spawnedPids?(): Promise<readonly number[]>;
  /** Releases what `setup` made (directories, servers). */
  cleanup?(): Promise<void>;
}

/** A backend adapter to validate with {@link describeBackendConformance}. */
export interface BackendConformanceTarget {
  /** Name shown in the test titles. */
  name: string;
  /** Whether the backend resumes threads (must match its `capabilities.resume`). */
  resumable: boolean;
  /** Makes a fresh, isolated harness; called before every test. */
  setup(): BackendConformanceHarness | Promise<BackendConformanceHarness>;
  /** A thread id the backend has never seen (default `keel-conformance-missing-thread`). */
  unknownThreadId?: string;
  /**
   * Turn timeout of the `hang` tests (default 2500 ms): long enough for the CLI to start and
   * print its first event on a loaded machine.
   */
  hangTimeoutMs?: number;
}

const PROMPT = "Summarize the README in one sentence.";

function expectOk(result: Result<TurnResult, KeelError>): TurnResult {
  if (result.isErr()) {
    throw new Error(`expected a successful turn, got ${result.error.code}: ${result.error.message}`);
  }
  return result.value;
}

function expectCode(result: Result<TurnResult, KeelError>, code: KeelError["code"]): KeelError {
  if (result.isOk()) throw new Error(`expected ${code}, got a successful turn: ${JSON.stringify(result.value)}`);
  expect(result.error.code, result.error.message).toBe(code);
  expect(result.error.details.backend).toBeTypeOf("string");
  return result.error;
}

/**
 * The conformance suite every Backend adapter runs (one call in its test file). It checks, through
 * the public port only: capabilities, a fresh turn (text, thread id, usage non-negative or
 * `null`), resume of the returned thread, `resume_failed` for a gone thread (or `unsupported` on
 * a fresh-only backend), unknown events ignored, in-band errors as `backend_failed` despite exit
 * code 0, garbage as `corrupt`, `timeout` killing the whole process group while keeping the thread
 * id, `aborted` (idempotent, also before the start and after the end), `invalid_input`, and
 * independent concurrent turns.
 */
export function describeBackendConformance(target: BackendConformanceTarget): void {
  const unknownThreadId = target.unknownThreadId ?? "keel-conformance-missing-thread";
  const hangTimeoutMs = target.hangTimeoutMs ?? 2500;

  describe(`Backend conformance: ${target.name}`, () => {
    let harness: BackendConformanceHarness;
    beforeEach(async () => {
      harness = await target.setup();
    });
    afterEach(async () => {
      await harness.cleanup?.();
    });

    const request = (scenario: BackendConformanceScenario, extra: Partial<TurnRequest> = {}): TurnRequest => {
      const played = harness.scenario(scenario);
      const env = { ...played.env, ...extra.env };
      return {
        prompt: PROMPT,
        cwd: harness.cwd,
        timeoutMs: 60_000,
        ...played,
        ...extra,
        ...(Object.keys(env).length > 0 ? { env } : {}),
      };
    };
    const expectProcessesGone = async (): Promise<void> => {
      if (!harness.spawnedPids) return;
      const alive = await waitForProcessesToExit(await harness.spawnedPids());
      expect(alive, "processes left running after the turn ended").toEqual([]);
    };

    it("declares an id and capabilities", () => {
      expect(harness.backend.id).toMatch(/\S/);
      expect(harness.backend.capabilities.resume).toBe(target.resumable);
      expect(["native", "staged", "prompt"]).toContain(harness.backend.capabilities.skills);
      expect(["full", "partial", "none"]).toContain(harness.backend.capabilities.usage);
    });

    it("runs a fresh turn: text, thread id, usage non-negative or null", async () => {
      const result = expectOk(await harness.backend.runTurn(request("success")));
      expect(result.text).toBeTypeOf("string");
      expect(UsageSchema.safeParse(result.usage).success, JSON.stringify(result.usage)).toBe(true);
      expect(result.durationMs).toBeGreaterThanOrEqual(0);
      if (result.exitCode !== null) expect(result.exitCode).toBe(0);
      if (target.resumable) expect(result.threadId).toMatch(/\S/);
      else expect(result.threadId).toBeNull();
      if (harness.backend.capabilities.usage === "none") {
        expect(Object.values(result.usage).every((value) => value === null)).toBe(true);
      }
    });

    if (target.resumable) {
      it("resumes the thread it returned", async () => {
        const first = expectOk(await harness.backend.runTurn(request("success")));
        const second = expectOk(await harness.backend.runTurn(request("success", { prompt: "And the license?", threadId: first.threadId! })));
        expect(second.threadId).toBe(first.threadId);
      });

      it("classifies a gone thread as resume_failed", async () => {
        const error = expectCode(await harness.backend.runTurn(request("success", { threadId: unknownThreadId })), "resume_failed");
        expect(error.details.resumeFailed).toBe(true);
        expect(error.details.threadId).toBe(unknownThreadId);
        await expectProcessesGone();
      });
    } else {
      it("refuses to resume a thread: unsupported", async () => {
        expectCode(await harness.backend.runTurn(request("success", { threadId: unknownThreadId })), "unsupported");
      });
    }

    it("ignores unknown event types", async () => {
      const plain = expectOk(await harness.backend.runTurn(request("success")));
      const mixed = expectOk(await harness.backend.runTurn(request("unknown_events")));
      expect(mixed.text).toBe(plain.text);
      expect(mixed.usage).toEqual(plain.usage);
    });

    it("reports an in-band error as backend_failed, even with exit code 0", async () => {
      expectCode(await harness.backend.runTurn(request("in_band_error")), "backend_failed");
    });

    it("reports output that breaks the promised format as corrupt", async () => {
      expectCode(await harness.backend.runTurn(request("garbage")), "corrupt");
    });

    it("times out: kills what it started (the whole process group) and keeps the thread id", async () => {
      const error = expectCode(await harness.backend.runTurn(request("hang", { timeoutMs: hangTimeoutMs })), "timeout");
      if (target.resumable) expect(error.details.threadId).toMatch(/\S/);
      await expectProcessesGone();
    });

    it("aborts: idempotent, before the start, during the run and after the end", async () => {
      const controller = new AbortController();
      const running = harness.backend.runTurn(request("hang"), controller.signal);
      await new Promise((resolve) => setTimeout(resolve, 300));
      controller.abort();
      controller.abort();
      expectCode(await running, "aborted");
      await expectProcessesGone();

      const early = new AbortController();
      early.abort();
      expectCode(await harness.backend.runTurn(request("success"), early.signal), "aborted");

      const late = new AbortController();
      const finished = await harness.backend.runTurn(request("success"), late.signal);
      late.abort();
      late.abort();
      expectOk(finished);
    });

    it("answers an invalid request with invalid_input", async () => {
      const base = request("success");
      const invalid: unknown[] = [
        { ...base, cwd: "relative/dir" },
        { ...base, timeoutMs: 0 },
        { ...base, prompt: "" },
        { ...base, threadId: "--no-such-flag" },
        { ...base, unexpected: true },
      ];
      for (const bad of invalid) expectCode(await harness.backend.runTurn(bad as TurnRequest), "invalid_input");
    });

    it("runs concurrent turns independently", async () => {
      const [a, b] = await Promise.all([harness.backend.runTurn(request("success")), harness.backend.runTurn(request("success"))]);
      const first = expectOk(a);
      const second = expectOk(b);
      if (target.resumable) expect(first.threadId).not.toBe(second.threadId);
    });
  });
}

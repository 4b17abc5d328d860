import type { Backend, BackendTurnRequest, BackendTurnResult } from "@keel/backend";
import { UsageSchema, type KeelError, type Usage } from "@keel/core";
import type { Result } from "neverthrow";
import { afterEach, beforeEach, expect } from "vitest";
import { waitForProcessesToExit } from "./process-probe.js";

/**
 * What the suite asks a backend to play:
 *
 * - `success` — an ordinary turn.
 * - `unknown_events` — the same turn with event types the adapter does not know mixed in.
 * - `in_band_error` — the CLI reports an error in its stream and exits 0.
 * - `transient_error` — the provider fails in a way the CLI marks as transient (429, 5xx, 529,
 *   overloaded).
 * - `garbage` — the CLI prints something that is not its promised format and exits 0.
 * - `hang` — the CLI prints its first event (with the thread id, where it has one), starts a
 *   child process and never finishes.
 * - `tool_read` — the agent reads the file {@link BackendConformanceTarget.toolReadPath} with a
 *   tool call.
 */
export type BackendConformanceScenario = "success" | "unknown_events" | "in_band_error" | "transient_error" | "garbage" | "hang" | "tool_read";

/** Every scenario, in the order above. */
export const BACKEND_CONFORMANCE_SCENARIOS: readonly BackendConformanceScenario[] = [
  "success",
  "unknown_events",
  "in_band_error",
  "transient_error",
  "garbage",
  "hang",
  "tool_read",
];

/** One isolated instance of the backend under test, made by {@link BackendConformanceTarget.setup}. */
export interface BackendConformanceHarness {
  /** The backend under test. */
  backend: Backend;
  /** An absolute, existing working directory for its turns. */
  cwd: string;
  /**
   * The request fields that make the backend play `scenario` — e.g. an environment variable read
   * by a fake CLI, or a prompt a fake provider reacts to. Merged over the suite's request.
   */
  scenario(scenario: BackendConformanceScenario): Partial<BackendTurnRequest>;
  /**
   * Pids of the processes the backend has started so far (the CLI and its children), for the
   * process-group checks. Omit for a backend that starts no process.
   */
  spawnedPids?(): Promise<readonly number[]>;
  /** Releases what `setup` made (directories, servers). */
  cleanup?(): Promise<void>;
}

/** A backend adapter to validate with `describeBackendConformance` (or one behaviour's suite). */
export interface BackendConformanceTarget {
  /** Name shown in the test titles. */
  name: string;
  /** Whether the backend resumes threads (must match its `capabilities.resume`). */
  resumable: boolean;
  /** Makes a fresh, isolated harness; called before every test. */
  setup(): BackendConformanceHarness | Promise<BackendConformanceHarness>;
  /**
   * The scenarios the harness can play (default all but `transient_error` and `tool_read`). A
   * real CLI cannot print garbage on demand: leave `garbage` out and its test is not declared.
   */
  scenarios?: readonly BackendConformanceScenario[];
  /** A thread id the backend has never seen (default `keel-conformance-missing-thread`). */
  unknownThreadId?: string;
  /**
   * Turn timeout of the `hang` tests (default 2500 ms): long enough for the CLI to start and
   * print its first event on a loaded machine.
   */
  hangTimeoutMs?: number;
  /** Turn timeout of every other test (default 60,000 ms; a real CLI may need more). */
  turnTimeoutMs?: number;
  /**
   * The exact usage a `success` turn reports — `fresh` for a new thread, `resumed` for the next
   * turn of that thread (each turn's own figure, never a running total). Without it the `usage`
   * behaviour only checks the shape.
   */
  expectedUsage?: { fresh: Usage; resumed?: Usage };
  /** The file (relative to `cwd`, created by `setup`) that the `tool_read` scenario reads. */
  toolReadPath?: string;
  /**
   * How the backend reports tool calls: `counted` (default) when it sees every tool call of its
   * agent, so a turn that made none reports 0; `unknown` when it cannot see them (an API, a CLI
   * whose stream is not known to show them): a `success` turn must then report `toolCalls: null`,
   * never 0.
   */
  toolCalls?: "counted" | "unknown";
}

/**
 * The behaviours of the suite, each a function of its own (`describeFreshTurn`, …), selected
 * by {@link BackendConformanceFilters}: `capabilities`, `fresh`, `resume` (also `unsupported`
 * on a fresh-only backend), `resume_failure`, `timeout`, `abort`, `garbage` (unknown events,
 * in-band errors, a broken format, invalid input), `errors` (transient provider errors),
 * `usage`, `tools` (file accesses and tool calls) and `concurrency`.
 */
export type BackendBehaviour =
  | "capabilities"
  | "fresh"
  | "resume"
  | "resume_failure"
  | "timeout"
  | "abort"
  | "garbage"
  | "errors"
  | "usage"
  | "tools"
  | "concurrency";

/** Which behaviours to run: `only` (default all), minus `skip`. */
export interface BackendConformanceFilters {
  /** Run only these behaviours. */
  only?: readonly BackendBehaviour[];
  /** Do not run these behaviours. */
  skip?: readonly BackendBehaviour[];
}

const PROMPT = "Summarize the README in one sentence.";
const DEFAULT_SCENARIOS: readonly BackendConformanceScenario[] = ["success", "unknown_events", "in_band_error", "garbage", "hang"];

/** Whether the target can play `scenario`. */
export function canPlay(target: BackendConformanceTarget, scenario: BackendConformanceScenario): boolean {
  return (target.scenarios ?? DEFAULT_SCENARIOS).includes(scenario);
}

/** The harness of the running test, plus request and assertion helpers (internal to the suite). */
export interface SuiteContext {
  harness(): BackendConformanceHarness;
  request(scenario: BackendConformanceScenario, extra?: Partial<BackendTurnRequest>): BackendTurnRequest;
  expectProcessesGone(): Promise<void>;
  /** Runs a fresh `success` turn, then resumes its thread with a follow-up prompt; both must succeed. */
  freshThenResumed(): Promise<{ first: BackendTurnResult; second: BackendTurnResult }>;
}

/** Registers `beforeEach`/`afterEach` for a fresh harness per test, and returns the helpers. */
export function useHarness(target: BackendConformanceTarget): SuiteContext {
  let current: BackendConformanceHarness | undefined;
  beforeEach(async () => {
    current = await target.setup();
  });
  afterEach(async () => {
    await current?.cleanup?.();
    current = undefined;
  });
  const harness = () => {
    if (!current) throw new Error("the harness is only available inside a test");
    return current;
  };
  return {
    harness,
    request(scenario, extra = {}) {
      const played = harness().scenario(scenario);
      const env = { ...played.env, ...extra.env };
      return {
        prompt: PROMPT,
        cwd: harness().cwd,
        timeoutMs: target.turnTimeoutMs ?? 60_000,
        ...played,
        ...extra,
        ...(Object.keys(env).length > 0 ? { env } : {}),
      };
    },
    async freshThenResumed() {
      const { backend } = harness();
      const first = expectOk(await backend.runTurn(this.request("success")));
      const resume = { prompt: "And the license?", threadId: first.threadId!, ...(first.resumeState ? { resumeState: first.resumeState } : {}) };
      const second = expectOk(await backend.runTurn(this.request("success", resume)));
      return { first, second };
    },
    async expectProcessesGone() {
      const probe = harness().spawnedPids;
      if (!probe) return;
      const alive = await waitForProcessesToExit(await probe());
      expect(alive, "processes left running after the turn ended").toEqual([]);
    },
  };
}

/** The value of a successful turn, or a thrown assertion naming the error. */
export function expectOk(result: Result<BackendTurnResult, KeelError>): BackendTurnResult {
  if (result.isErr()) throw new Error(`expected a successful turn, got ${result.error.code}: ${result.error.message}`);
  return result.value;
}

/** The error of a failed turn, asserted to have `code` and the backend details. */
export function expectCode(result: Result<BackendTurnResult, KeelError>, code: KeelError["code"]): KeelError {
  if (result.isOk()) throw new Error(`expected ${code}, got a successful turn: ${JSON.stringify(result.value)}`);
  expect(result.error.code, result.error.message).toBe(code);
  expect(result.error.details.backend).toBeTypeOf("string");
  return result.error;
}

/** Asserts the shape every successful turn has: text, usage schema, duration, exit code, file accesses, tool calls (a count, or `null` when unknown). */
export function expectTurnShape(result: BackendTurnResult): void {
  expect(result.text).toBeTypeOf("string");
  expect(UsageSchema.safeParse(result.usage).success, JSON.stringify(result.usage)).toBe(true);
  expect(result.durationMs).toBeGreaterThanOrEqual(0);
  if (result.exitCode !== null) expect(result.exitCode).toBe(0);
  expect(Array.isArray(result.fileAccess)).toBe(true);
  expect(result.toolCalls === null || (Number.isSafeInteger(result.toolCalls) && result.toolCalls >= 0)).toBe(true);
}

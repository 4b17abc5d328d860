import { describe } from "vitest";
import type { BackendBehaviour, BackendConformanceFilters, BackendConformanceTarget } from "./backend-target.js";
import { describeAbort, describeTimeout } from "./spec/interruption.js";
import { describeCapabilities, describeConcurrency, describeFreshTurn } from "./spec/fresh-turn.js";
import { describeGarbage, describeProviderErrors } from "./spec/garbage.js";
import { describeResume, describeResumeFailure } from "./spec/resume.js";
import { describeToolCalls, describeUsage } from "./spec/usage.js";

/** Every behaviour's suite, in the order they run. */
const BEHAVIOURS: readonly [BackendBehaviour, (target: BackendConformanceTarget) => void][] = [
  ["capabilities", describeCapabilities],
  ["fresh", describeFreshTurn],
  ["resume", describeResume],
  ["resume_failure", describeResumeFailure],
  ["timeout", describeTimeout],
  ["abort", describeAbort],
  ["garbage", describeGarbage],
  ["errors", describeProviderErrors],
  ["usage", describeUsage],
  ["tools", describeToolCalls],
  ["concurrency", describeConcurrency],
];

/**
 * The conformance suite every Backend adapter runs (one call in its test file), split per
 * behaviour the way langgraphjs's checkpoint-validation splits per method. Through the public
 * port only, it checks: capabilities; a fresh turn (text, thread id, usage non-negative or
 * `null`, file accesses, tool calls); resume of the returned thread (or `unsupported` on a
 * fresh-only backend); `resume_failed` for a gone thread; `timeout` killing the whole process
 * group while keeping the thread id; `aborted` (idempotent, also before the start and after the
 * end); unknown events ignored, in-band errors `backend_failed` despite exit code 0, garbage
 * `corrupt`, `invalid_input`; transient provider errors retryable; the exact per-turn usage; the
 * file a tool call read; independent concurrent turns.
 *
 * Behaviours whose scenario the target cannot play (see `BackendConformanceTarget.scenarios`),
 * or that need what it does not declare (`expectedUsage`, `toolReadPath`), are not declared at
 * all; `filters` picks behaviours by name.
 *
 * @example
 * ```ts
 * describeBackendConformance(target, { skip: ["garbage"] });
 * ```
 */
export function describeBackendConformance(target: BackendConformanceTarget, filters: BackendConformanceFilters = {}): void {
  const selected = BEHAVIOURS.filter(
    ([name]) => (filters.only === undefined || filters.only.includes(name)) && !(filters.skip ?? []).includes(name),
  );
  describe(`Backend conformance: ${target.name}`, () => {
    for (const [, declare] of selected) declare(target);
  });
}

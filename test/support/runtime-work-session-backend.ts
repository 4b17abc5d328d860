import { newId, type ManualClock, type Usage } from "@keel/core";
import type { Backend, BackendTurnRequest, BackendTurnResult } from "@keel/backend";
import { okAsync } from "neverthrow";

/**
 * A backend double that reports tool calls as the real-CLI adapters do (a `toolCalls` list on the
 * turn result) and takes time: each turn advances the manual clock by `minutes`.
 */
export function createToolBackend(options: {
  clock: ManualClock;
  /** Tool calls of turn n (1-based); `null` reports them unknown (an adapter that cannot see them). */
  toolCalls?: (turn: number) => number | null;
  /** Minutes each turn takes (default 1). */
  minutes?: number;
  /** Usage of turn n; `null` reports none. */
  usage?: (turn: number) => Usage | null;
}): Backend & { requests: BackendTurnRequest[] } {
  const requests: BackendTurnRequest[] = [];
  return {
    id: "tools",
    capabilities: { resume: true, skills: "prompt", usage: "full" },
    requests,
    runTurn(request) {
      requests.push(request);
      const turn = requests.length;
      options.clock.advance((options.minutes ?? 1) * 60_000);
      const calls = options.toolCalls ? options.toolCalls(turn) : 1;
      const usage: Usage | null = options.usage
        ? options.usage(turn)
        : { inputUncached: 100, cacheRead: 0, cacheWrite: 0, output: 10, reasoning: null, costUsd: null };
      const result = {
        text: `Decision: turn ${turn}`,
        threadId: request.threadId ?? newId(),
        usage: usage ?? { inputUncached: null, cacheRead: null, cacheWrite: null, output: null, reasoning: null, costUsd: null },
        durationMs: (options.minutes ?? 1) * 60_000,
        exitCode: 0,
        fileAccess: [],
        toolCalls: calls,
      };
      return okAsync(result satisfies BackendTurnResult);
    },
  };
}

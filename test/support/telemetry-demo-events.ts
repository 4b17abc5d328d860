import { emptyUsage, type KeelEvent, type RoleSessionTurnEvent, type SessionAction } from "@keel/core";

/** The roles of a round, in order (the reviewer spelled with a capital, as some hosts do). */
export const DEMO_ROLES = ["planner", "engineer", "Reviewer"] as const;

/** What the demo emits per policy. */
export interface DemoOptions {
  policies?: readonly string[];
  rounds?: number;
  /** Rolling rotates after this many turns of a role. */
  maxTurns?: number;
  /** Verdict of a round under a policy. */
  verdict?: (policy: string, round: number) => string;
}

function actionOf(policy: string, turn: number, maxTurns: number): { action: SessionAction; reason: string } {
  if (policy === "fresh") return { action: "fresh", reason: "policy_fresh" };
  if (turn === 1) return { action: "fresh", reason: "first_turn" };
  if (policy === "rolling" && (turn - 1) % maxTurns === 0) return { action: "rotated", reason: "max_turns" };
  return { action: "resumed", reason: "resumed" };
}

/**
 * A scripted mission under several policies, shaped like `keel demo`: one mission id per policy
 * (`demo-<policy>`), rounds of planner → engineer → Reviewer, reads with repeats, one verdict
 * per round. Fresh turns resend the whole context (bigger prompts); resumed turns send a delta.
 */
export function demoEvents(options: DemoOptions = {}): KeelEvent[] {
  const policies = options.policies ?? ["fresh", "mission", "rolling"];
  const rounds = options.rounds ?? 4;
  const maxTurns = options.maxTurns ?? 3;
  const verdict = options.verdict ?? ((_policy: string, round: number) => (round % 2 === 0 ? "approve" : "revise"));
  const events: KeelEvent[] = [];
  let at = 1_700_000_000_000;
  for (const policy of policies) {
    const missionId = `demo-${policy}`;
    for (let round = 1; round <= rounds; round++) {
      for (const role of DEMO_ROLES) {
        const { action, reason } = actionOf(policy, round, maxTurns);
        const promptBytes = action === "resumed" ? 800 + round * 10 : 4_000 + round * 500;
        at += 1_000;
        for (const path of ["README.md", `src/${role.toLowerCase()}.ts`]) {
          if (path === "README.md" && role !== "engineer" && round > 1) continue;
          events.push({ type: "agent.io.read", at, role, missionId, path, bytes: 1_200, skill: null });
        }
        const turn: RoleSessionTurnEvent = {
          type: "role.session.turn",
          at: at + 500,
          missionId,
          role,
          policy,
          action,
          rotationReason: reason,
          backend: "scripted",
          model: "demo-model",
          promptBytes,
          usage: { ...emptyUsage(), inputUncached: Math.ceil(promptBytes / 3), cacheRead: action === "resumed" ? 2_000 : 0, output: 300 },
          wallMs: 1_000,
          capsulePath: `missions/${missionId}/role-sessions/${role}`,
          threadId: `${policy}-${role}-${round}`,
          turn: round,
        };
        events.push(turn);
      }
      at += 100;
      events.push({
        type: "round.review.completed",
        at,
        missionId,
        round,
        verdict: verdict(policy, round),
        reviewerPromptBytes: 1_000,
        policy,
      });
    }
  }
  return events;
}

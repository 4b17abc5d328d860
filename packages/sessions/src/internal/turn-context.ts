import type { Clock, EventBus, KeelError } from "@keel/core";
import type { KeelStore } from "@keel/store";
import type { LeaseKeeper } from "@keel/store/kit";
import type { Capsule } from "../capsule-schema.js";
import type { DocMemo } from "./doc-memo.js";
import type { SessionLimits, SessionPolicy } from "../session-policy.js";
import type { SessionWarning, WarningTarget } from "../turn-types.js";

/** Everything a turn needs from its `createRoleSessions` instance. */
export interface TurnContext {
  store: KeelStore;
  events: EventBus;
  clock: Clock;
  policy: SessionPolicy;
  limits: SessionLimits;
  /** Holds the per mission-and-role leases. */
  leaseKeeper: LeaseKeeper;
  /** Capsule paths this instance has read or written: a later miss is worth a warning. */
  knownCapsules: Set<string>;
  /** Turn numbers of `fresh`-policy turns, which keep no capsule (per process). */
  freshTurns: Map<string, number>;
  /**
   * Capsules this instance wrote or validated, by capsule path: the next turn's read of the same
   * document (same version and time) skips validating it again. Read-only: plans get copies.
   */
  capsules: DocMemo<Capsule>;
  /** Mission checkpoints this instance validated, by mission id (same use as `capsules`). */
  checkpoints: DocMemo<true>;
}

/** Collects a turn's warnings and emits each as a `role.session.warning` event. */
export interface WarningSink {
  warnings: SessionWarning[];
  warn(target: WarningTarget, operation: SessionWarning["operation"], error: Pick<KeelError, "code" | "message">): void;
}

/** Creates the {@link WarningSink} of one turn. */
export function createWarningSink(context: TurnContext, missionId: string, role: string): WarningSink {
  const warnings: SessionWarning[] = [];
  return {
    warnings,
    warn(target, operation, error) {
      warnings.push({ target, operation, code: error.code, message: error.message });
      context.events.emit({ type: "role.session.warning", missionId, role, target, operation, code: error.code, message: error.message });
    },
  };
}

import { digest } from "@keel/core";

/** The store key of a role's capsule: `["missions", missionId, "role-sessions", role]`. */
export function capsuleKey(missionId: string, role: string): string[] {
  return ["missions", missionId, "role-sessions", role];
}

/** The store key of a mission's checkpoint: `["missions", missionId, "checkpoint"]`. */
export function checkpointKey(missionId: string): string[] {
  return ["missions", missionId, "checkpoint"];
}

/** The store key of a role's handoff: `["missions", missionId, "handoffs", role]`. */
export function handoffKey(missionId: string, role: string): string[] {
  return ["missions", missionId, "handoffs", role];
}

/** A key as a path (`missions/m1/role-sessions/engineer`): the `capsulePath` of plans and events. */
export function keyText(key: readonly string[]): string {
  return key.join("/");
}

/**
 * The lease that serializes one role's turns in one mission: `role-session.<mission>.<role>`,
 * or, when that would be ambiguous (a `.` inside a name) or longer than a safe name allows,
 * `role-session.<first 40 hex digits of the sha256 of both names>`.
 */
export function roleLeaseName(missionId: string, role: string): string {
  const readable = `role-session.${missionId}.${role}`;
  if (readable.length <= 128 && !missionId.includes(".") && !role.includes(".")) return readable;
  return `role-session.${digest([missionId, role]).slice("sha256:".length, "sha256:".length + 40)}`;
}

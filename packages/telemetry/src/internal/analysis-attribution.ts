/** The fields of a turn that attribution reads. */
export interface AttributionTurn {
  missionId: string;
  role: string;
  policy: string;
  at: number;
}

/**
 * Decides which policy a read or a verdict belongs to. A mission run under one policy (the
 * usual case: `keel demo` uses one mission id per policy) gives that policy. When one mission id
 * was run under several policies, the event goes to the policy of the turn it happened in: the
 * first turn of that mission (and role, when given and known) that ended at or after it, else
 * the last one before it. Independent of the order the turns were given in.
 *
 * @returns the policy, or `null` when the mission has no turns.
 */
export type PolicyAttribution = (missionId: string | null, role: string | null, at: number) => string | null;

const byTime = (left: AttributionTurn, right: AttributionTurn): number =>
  left.at - right.at || compareText(left.policy, right.policy) || compareText(left.role, right.role);

/** Plain code-unit comparison: deterministic, locale-free. */
export function compareText(left: string, right: string): number {
  return left < right ? -1 : left > right ? 1 : 0;
}

/** Builds a {@link PolicyAttribution} over the given turns. */
export function createPolicyAttribution(turns: readonly AttributionTurn[]): PolicyAttribution {
  const byMission = new Map<string, AttributionTurn[]>();
  for (const turn of turns) {
    const list = byMission.get(turn.missionId);
    if (list) list.push(turn);
    else byMission.set(turn.missionId, [turn]);
  }
  const single = new Map<string, string | null>();
  for (const [missionId, list] of byMission) {
    list.sort(byTime);
    const policies = new Set(list.map((turn) => turn.policy));
    single.set(missionId, policies.size === 1 ? (list[0]?.policy ?? null) : null);
  }
  return (missionId, role, at) => {
    if (missionId === null) return null;
    const list = byMission.get(missionId);
    if (!list) return null;
    const only = single.get(missionId);
    if (only) return only;
    const sameRole = role === null ? [] : list.filter((turn) => turn.role === role);
    const candidates = sameRole.length > 0 ? sameRole : list;
    const during = candidates.find((turn) => turn.at >= at) ?? candidates.at(-1);
    return during?.policy ?? null;
  };
}

import { capsuleKey, checkpointKey, handoffKey, workSessionKey } from "@keel/sessions/schemas";

/** A document key with what the listing said about it (`null` when unknown). */
export interface DocumentKey {
  key: string[];
  version: number | null;
  bytes: number | null;
}

/** The documents of one role of a mission. */
export interface RoleKeys {
  role: string;
  capsule: DocumentKey | null;
  handoff: DocumentKey | null;
}

/** The documents of one mission. */
export interface MissionKeys {
  id: string;
  checkpoint: DocumentKey | null;
  roles: RoleKeys[];
  /** The mission's work-sessions document. */
  workSessions: DocumentKey | null;
  other: DocumentKey[];
}

/** Document keys sorted into what `keel inspect` shows. */
export interface ClassifiedKeys {
  missions: MissionKeys[];
  /** Budget ledger documents (`["budget", <root>]`, the budget package's default prefix). */
  ledgers: DocumentKey[];
  other: DocumentKey[];
}

/** The key prefix of budget ledgers (`createBudget`'s default `keyPrefix`). */
export const BUDGET_PREFIX = "budget";

const sameKey = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((segment, index) => segment === b[index]);
const byText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/**
 * Sorts document keys into missions (checkpoint, capsules and handoffs by role, other mission
 * documents), budget ledgers and everything else, using the sessions package's own key
 * functions. Every key lands in exactly one place; the output is sorted by name. Pure.
 */
export function classifyKeys(documents: readonly DocumentKey[]): ClassifiedKeys {
  const missions = new Map<string, { checkpoint: DocumentKey | null; roles: Map<string, RoleKeys>; workSessions: DocumentKey | null; other: DocumentKey[] }>();
  const ledgers: DocumentKey[] = [];
  const other: DocumentKey[] = [];
  const missionOf = (id: string) => {
    let mission = missions.get(id);
    if (!mission) {
      mission = { checkpoint: null, roles: new Map(), workSessions: null, other: [] };
      missions.set(id, mission);
    }
    return mission;
  };
  const roleOf = (mission: ReturnType<typeof missionOf>, role: string) => {
    let found = mission.roles.get(role);
    if (!found) {
      found = { role, capsule: null, handoff: null };
      mission.roles.set(role, found);
    }
    return found;
  };
  for (const document of documents) {
    const [first, missionId, , role] = document.key;
    if (first === "missions" && missionId !== undefined) {
      const mission = missionOf(missionId);
      if (sameKey(document.key, checkpointKey(missionId))) mission.checkpoint = document;
      else if (sameKey(document.key, workSessionKey(missionId))) mission.workSessions = document;
      else if (role !== undefined && sameKey(document.key, capsuleKey(missionId, role))) roleOf(mission, role).capsule = document;
      else if (role !== undefined && sameKey(document.key, handoffKey(missionId, role))) roleOf(mission, role).handoff = document;
      else mission.other.push(document);
    } else if (first === BUDGET_PREFIX && document.key.length === 2) {
      ledgers.push(document);
    } else {
      other.push(document);
    }
  }
  const keyOrder = (a: DocumentKey, b: DocumentKey) => byText(a.key.join("/"), b.key.join("/"));
  return {
    missions: [...missions.entries()]
      .sort(([a], [b]) => byText(a, b))
      .map(([id, mission]) => ({
        id,
        checkpoint: mission.checkpoint,
        roles: [...mission.roles.values()].sort((a, b) => byText(a.role, b.role)),
        workSessions: mission.workSessions,
        other: mission.other.sort(keyOrder),
      })),
    ledgers: ledgers.sort(keyOrder),
    other: other.sort(keyOrder),
  };
}

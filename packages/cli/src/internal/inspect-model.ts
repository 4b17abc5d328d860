import type { BudgetDimension } from "@keel/budget";
import type { ScopeLimit } from "@keel/budget/schemas";
import type { Capsule, HandoffRecord, MissionCheckpoint } from "@keel/sessions";
import type { WorkSessionsInspection } from "./inspect-work-sessions.js";
import type { QuarantineEntry } from "@keel/store";

/**
 * One document as `keel inspect` read it: its value checked against its package's schema
 * (`ok`), or why it could not be used (`corrupt`: unreadable on disk, or not the shape its key
 * promises). A document that does not exist is `null` where it is expected.
 */
export type DocumentSection<T> =
  | { status: "ok"; key: string; version: number; updatedAt: string; value: T }
  | { status: "corrupt"; key: string; code: string; message: string };

/** A role of a mission: its capsule and its handoff. */
export interface RoleInspection {
  role: string;
  capsule: DocumentSection<Capsule> | null;
  handoff: DocumentSection<HandoffRecord> | null;
}

/** A document the inspector has no reader for: listed, not interpreted. */
export interface OtherDocument {
  key: string;
  /** Known when the store's listing worked; `null` when keys came from the directory walk. */
  version: number | null;
  bytes: number | null;
}

/** A mission: its checkpoint, its roles, and the rest of its documents (hygiene, …). */
export interface MissionInspection {
  id: string;
  checkpoint: DocumentSection<MissionCheckpoint> | null;
  roles: RoleInspection[];
  /** The mission's work sessions (open ones, the last closed ones, the audit cadence), or `null` when none was ever opened. */
  workSessions: DocumentSection<WorkSessionsInspection> | null;
  otherDocuments: OtherDocument[];
}

/** One scope of a budget ledger, as `BudgetScope.snapshot()` reports it. */
export interface BudgetScopeInspection {
  scope: string;
  parents: string[];
  limits: Partial<Record<BudgetDimension, ScopeLimit>>;
  reserved: Record<BudgetDimension, number>;
  settled: Record<BudgetDimension, number>;
  overrun: Record<BudgetDimension, number>;
  /** `null` per dimension when nothing limits it. */
  remaining: Record<BudgetDimension, number | null>;
  openReservations: number;
}

/** A budget ledger (`["budget", <root>]`): one root scope and every scope below it. */
export type LedgerInspection =
  | { status: "ok"; key: string; root: string; version: number; updatedAt: string; scopes: BudgetScopeInspection[] }
  | { status: "corrupt"; key: string; root: string; code: string; message: string };

/** A log of the store. Event logs (every record an event) are counted by event type. */
export type LogInspection =
  | {
      status: "ok";
      key: string;
      lastSeq: number;
      kind: "events" | "records";
      /** Records read (at most the inspector's cap). */
      records: number;
      /** True when the log holds more records than were read. */
      truncated: boolean;
      /** For an event log: how many events of each type, by type. */
      types: Record<string, number>;
    }
  | { status: "corrupt"; key: string; code: string; message: string };

/** Something the store or the inspector noticed while reading (a backup served, a listing that failed). */
export interface InspectionWarning {
  type: string;
  location: string;
  message: string;
}

/** Everything `keel inspect` found in a filesystem store: the document `--json` prints. */
export interface StoreInspection {
  /** The store directory (absolute). */
  dir: string;
  /** The on-disk layout version from the store marker. */
  layout: number;
  /** `list`: keys from the store's listing; `directory`: the listing failed on a damaged document, keys were found by walking the directory. */
  keysFrom: "list" | "directory";
  missions: MissionInspection[];
  budgets: LedgerInspection[];
  logs: LogInspection[];
  /** Documents outside missions and budgets. */
  otherDocuments: OtherDocument[];
  /** Damaged documents the store moved into its quarantine (kept, with the reason), oldest first. */
  quarantined: QuarantineEntry[];
  warnings: InspectionWarning[];
}

/** How many documents, ledgers and logs of an inspection are damaged. Pure. */
export function countDamaged(inspection: StoreInspection): number {
  const sections = inspection.missions.flatMap((mission) => [mission.checkpoint, mission.workSessions, ...mission.roles.flatMap((role) => [role.capsule, role.handoff])]);
  return [...sections, ...inspection.budgets, ...inspection.logs].filter((section) => section?.status === "corrupt").length;
}

import type { WorkSessionView } from "@keel/sessions";
import { DEFAULT_WORK_SESSION_LIMITS, WorkSessionsDocSchema, auditOf, viewOf, type WorkSessionsDoc } from "@keel/sessions/schemas";
import { paint, type CliIo } from "../cli-io.js";
import type { DocumentSection } from "./inspect-model.js";
import { formatCount, isoTime, plural, printable } from "./inspect-text.js";
import type { TreeNode } from "./inspect-tree.js";

/** At most this many closed sessions are shown in the tree (`--json` has them all). */
const CLOSED_SHOWN = 5;

/** How an unknown figure reads: never as 0. */
const NO_DATA = "no data";

/** The work sessions of a mission as `keel inspect` shows them. */
export interface WorkSessionsInspection {
  /** The sessions open now. */
  open: WorkSessionView[];
  /** The closed sessions the document keeps, newest last. */
  closed: WorkSessionView[];
  /** Sessions ever closed. */
  closedCount: number;
  /** The audit cadence at the default of 3 sessions (the host's setting is not stored). */
  audit: { due: boolean; closedSinceAudit: number; every: number; lastAuditAt: number | null };
}

/** The schema `readSection` checks the document with. */
export { WorkSessionsDocSchema };

/** What the inspection keeps of a valid work-sessions document. Pure. */
export function workSessionsInspection(doc: WorkSessionsDoc): WorkSessionsInspection {
  return {
    open: doc.open.map(viewOf),
    closed: doc.closed.map(viewOf),
    closedCount: doc.closedCount,
    audit: auditOf(doc, { ...DEFAULT_WORK_SESSION_LIMITS }),
  };
}

const known = (value: number | null) => (value === null ? NO_DATA : formatCount(value));

function sessionLine(session: WorkSessionView): string {
  const scope = session.role === null ? "mission-wide" : `role ${printable(session.role)}`;
  const model = session.model === null ? "backend default" : printable(session.model);
  const state = session.closedAt === null ? `open since ${isoTime(session.openedAt)}` : `closed ${isoTime(session.closedAt)}`;
  const unknownTools = session.turnsWithoutToolCalls > 0 ? ` (${plural(session.turnsWithoutToolCalls, "turn")} unreported)` : "";
  const unknownUsage = session.turnsWithoutUsage > 0 ? ` (${plural(session.turnsWithoutUsage, "turn")} without usage)` : "";
  return (
    `work session ${printable(session.sessionId)} ${state}, ${scope}, model ${model}: ` +
    `${plural(session.turns, "turn")}, ${plural(session.tasks, "task")}, tokens ${known(session.tokens)}${unknownUsage}, ` +
    `tool calls ${formatCount(session.toolCalls)}${unknownTools}, ${formatCount(Math.round(session.activeMinutes * 10) / 10)} active minutes, ` +
    `checkpoint counter ${formatCount(session.checkpointCounter)}, ${plural(session.modelMismatch.turns, "model mismatch", "model mismatches")}`
  );
}

/** The tree node of a mission's work sessions. Pure. */
export function workSessionsNode(style: Pick<CliIo, "color">, section: DocumentSection<WorkSessionsInspection> | null): TreeNode {
  if (!section) return { label: `work sessions: ${paint(style, "dim", "none (no work session was ever opened: no figures)")}` };
  if (section.status === "corrupt") {
    return { label: `work sessions ${paint(style, "red", `CORRUPT (${section.code})`)} ${paint(style, "dim", printable(section.key))}: ${printable(section.message)}` };
  }
  const value = section.value;
  const audit = value.audit.due
    ? paint(style, "yellow", `audit due (${value.audit.closedSinceAudit} sessions closed since the last, cadence ${value.audit.every})`)
    : `no audit due (${value.audit.closedSinceAudit} of ${value.audit.every} sessions closed since the last)`;
  const children: TreeNode[] = [
    ...(value.open.length === 0 ? [{ label: "no work session open: no_session (budgeted turns are refused)" }] : value.open.map((session) => ({ label: sessionLine(session) }))),
    ...value.closed.slice(-CLOSED_SHOWN).map((session) => ({ label: sessionLine(session) })),
    { label: `${plural(value.closedCount, "closed session")}, ${audit}${value.audit.lastAuditAt === null ? "" : `, last audit ${isoTime(value.audit.lastAuditAt)}`}` },
  ];
  return { label: `work sessions v${section.version} ${paint(style, "dim", printable(section.key))}`, children };
}

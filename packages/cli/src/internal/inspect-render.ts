import type { ScopeLimit } from "@keel/budget/schemas";
import type { Capsule, HandoffRecord, MissionCheckpoint } from "@keel/sessions";
import { paint, type CliIo } from "../cli-io.js";
import { shownDimensions } from "./inspect-budget.js";
import type {
  BudgetScopeInspection,
  DocumentSection,
  LedgerInspection,
  LogInspection,
  MissionInspection,
  OtherDocument,
  StoreInspection,
} from "./inspect-model.js";
import { formatCount, isoTime, plural, printable, shortText } from "./inspect-text.js";
import { renderTree, type TreeNode } from "./inspect-tree.js";
import { workSessionsNode } from "./inspect-work-sessions.js";

type Style = Pick<CliIo, "color">;

/** At most this many entries of a list are shown in the tree (`--json` has them all). */
const MAX_SHOWN = 50;

function corruptNode(style: Style, what: string, section: { key: string; code: string; message: string }): TreeNode {
  return { label: `${what} ${paint(style, "red", `CORRUPT (${section.code})`)} ${paint(style, "dim", printable(section.key))}: ${printable(section.message)}` };
}

function nullable(value: string | null): string {
  return value === null ? "none" : shortText(value, 80);
}

function capsuleNode(style: Style, section: DocumentSection<Capsule> | null): TreeNode {
  if (!section) return { label: `capsule: ${paint(style, "dim", "none")}` };
  if (section.status === "corrupt") return corruptNode(style, "capsule", section);
  const capsule = section.value;
  const { thread, counters } = capsule;
  const children: TreeNode[] = [
    { label: `thread: backend ${printable(thread.backend)}, model ${nullable(thread.model)}, branch ${nullable(thread.branch)}, thread ${nullable(thread.threadId)}` },
    {
      label: `counters: ${plural(counters.turnsSinceRotation, "turn")} since rotation, ${plural(counters.totalTurns, "turn")} in all, ${plural(counters.rotations, "rotation")}, ${plural(counters.resumeFailures, "resume failure")}, ${formatCount(counters.observedInputTokens)} input tokens observed`,
    },
    {
      label: `objective revision ${shortText(String(capsule.objectiveRevision), 40)}, checkpoint ${capsule.checkpoint ? `v${capsule.checkpoint.version}` : "none"}, ${plural(capsule.openCheckpointItems.length, "open item")}, ${plural(capsule.referencedPaths.length, "referenced path")}, ${plural(capsule.inspectedPaths.length, "inspected path")}`,
    },
  ];
  if (capsule.lastFailure) {
    const failure = capsule.lastFailure;
    children.push({ label: `${paint(style, "yellow", "last failure")}: ${printable(failure.code)} at ${isoTime(failure.at)}: ${shortText(failure.message, 120)}` });
  }
  return { label: `capsule v${section.version} ${paint(style, "dim", printable(section.key))}, updated ${isoTime(capsule.updatedAt)}`, children };
}

function handoffNode(style: Style, section: DocumentSection<HandoffRecord> | null): TreeNode {
  if (!section) return { label: `handoff: ${paint(style, "dim", "none")}` };
  if (section.status === "corrupt") return corruptNode(style, "handoff", section);
  const handoff = section.value;
  return {
    label: `handoff revision ${handoff.revision}, written ${isoTime(handoff.writtenAt)}: ${formatCount(handoff.done.length)} done, ${formatCount(handoff.inFlight.length)} in flight, ${plural(handoff.nextSteps.length, "next step")}, ${plural(handoff.warnings.length, "warning")}`,
    children: handoff.inFlight.slice(0, MAX_SHOWN).map((task) => ({ label: `in flight: ${shortText(task.task, 80)} (${shortText(task.state, 60)})` })),
  };
}

function checkpointNode(style: Style, section: DocumentSection<MissionCheckpoint> | null): TreeNode {
  if (!section) return { label: `checkpoint: ${paint(style, "dim", "none")}` };
  if (section.status === "corrupt") return corruptNode(style, "checkpoint", section);
  const checkpoint = section.value;
  const roles = Object.entries(checkpoint.roles).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const state = checkpoint.placeholder ? "placeholder (no role has written to it)" : `${plural(roles.length, "role")}`;
  return {
    label: `checkpoint v${section.version}: ${state}, updated ${isoTime(checkpoint.updatedAt)}`,
    children: roles.slice(0, MAX_SHOWN).map(([role, entry]) => ({
      label: `${printable(role)}: ${plural(entry.openItems.length, "open item")} (turn ${entry.turn})`,
    })),
  };
}

function otherNodes(documents: readonly OtherDocument[]): TreeNode[] {
  const shown = documents.slice(0, MAX_SHOWN).map((document) => ({
    label: `${printable(document.key)}${document.version === null ? "" : ` v${document.version}`}${document.bytes === null ? "" : `, ${formatCount(document.bytes)} bytes`}`,
  }));
  return documents.length > MAX_SHOWN ? [...shown, { label: `… and ${formatCount(documents.length - MAX_SHOWN)} more (see --json)` }] : shown;
}

function missionNode(style: Style, mission: MissionInspection): TreeNode {
  const children: TreeNode[] = [checkpointNode(style, mission.checkpoint), workSessionsNode(style, mission.workSessions)];
  for (const role of mission.roles) {
    children.push({ label: `role ${paint(style, "bold", printable(role.role))}`, children: [capsuleNode(style, role.capsule), handoffNode(style, role.handoff)] });
  }
  if (mission.otherDocuments.length > 0) {
    children.push({ label: `other documents (${formatCount(mission.otherDocuments.length)})`, children: otherNodes(mission.otherDocuments) });
  }
  return { label: `mission ${paint(style, "bold", printable(mission.id))}`, children };
}

/** Where a limit comes from: its level, and the ancestor scope that declared it when that is not the level's name. */
function limitOrigin(limit: ScopeLimit, scope: string): string {
  if (limit.source === limit.scope || limit.scope === scope) return printable(limit.source);
  return `${printable(limit.source)} of ${printable(limit.scope)}`;
}

function scopeNode(scope: BudgetScopeInspection): TreeNode {
  const parents = scope.parents.length > 0 ? ` (parents ${scope.parents.map(printable).join(", ")})` : "";
  return {
    label: `scope ${printable(scope.scope)}${parents}: ${plural(scope.openReservations, "open reservation")}`,
    children: shownDimensions(scope).map((dimension) => {
      const limit = scope.limits[dimension];
      const remaining = scope.remaining[dimension];
      const parts = [
        limit ? `limit ${formatCount(limit.limit)} (${limitOrigin(limit, scope.scope)})` : "no limit",
        `reserved ${formatCount(scope.reserved[dimension])}`,
        `settled ${formatCount(scope.settled[dimension])}`,
        ...(scope.overrun[dimension] > 0 ? [`overrun ${formatCount(scope.overrun[dimension])}`] : []),
        `remaining ${remaining === null ? "unlimited" : formatCount(remaining)}`,
      ];
      return { label: `${dimension}: ${parts.join(" · ")}` };
    }),
  };
}

function ledgerNode(style: Style, ledger: LedgerInspection): TreeNode {
  if (ledger.status === "corrupt") return corruptNode(style, `ledger ${printable(ledger.root)}`, ledger);
  return {
    label: `ledger ${paint(style, "bold", printable(ledger.root))} v${ledger.version} ${paint(style, "dim", printable(ledger.key))}, updated ${printable(ledger.updatedAt)}`,
    children: ledger.scopes.map(scopeNode),
  };
}

function logNode(style: Style, log: LogInspection): TreeNode {
  if (log.status === "corrupt") return corruptNode(style, "log", log);
  const more = log.truncated ? ` (first ${formatCount(log.records)} read)` : "";
  if (log.kind === "records") return { label: `${printable(log.key)}: ${plural(log.records, "record")}, last seq ${log.lastSeq}${more}` };
  const types = Object.entries(log.types).sort(([, a], [, b]) => b - a);
  return {
    label: `${printable(log.key)}: ${plural(log.records, "event")}, last seq ${log.lastSeq}${more}`,
    children: types.slice(0, MAX_SHOWN).map(([type, count]) => ({ label: `${formatCount(count)} ${printable(type)}` })),
  };
}

/** Builds the tree `keel inspect` prints. Pure. */
export function inspectionTree(inspection: StoreInspection, style: Style): TreeNode {
  const children: TreeNode[] = [
    { label: paint(style, "bold", `missions (${formatCount(inspection.missions.length)})`), children: inspection.missions.map((mission) => missionNode(style, mission)) },
    { label: paint(style, "bold", `budgets (${plural(inspection.budgets.length, "ledger")})`), children: inspection.budgets.map((ledger) => ledgerNode(style, ledger)) },
    { label: paint(style, "bold", `logs (${formatCount(inspection.logs.length)})`), children: inspection.logs.map((log) => logNode(style, log)) },
  ];
  if (inspection.otherDocuments.length > 0) {
    children.push({ label: paint(style, "bold", `other documents (${formatCount(inspection.otherDocuments.length)})`), children: otherNodes(inspection.otherDocuments) });
  }
  if (inspection.quarantined.length > 0) {
    children.push({
      label: paint(style, "yellow", `quarantined (${formatCount(inspection.quarantined.length)})`),
      children: inspection.quarantined.map((entry) => ({
        label: `${printable(entry.key.join("/"))}: ${printable(entry.reason)}`,
        children: [{ label: `kept in ${printable(entry.location)}${entry.at ? ` since ${printable(entry.at)}` : ""}` }],
      })),
    });
  }
  if (inspection.warnings.length > 0) {
    children.push({
      label: paint(style, "yellow", `warnings (${formatCount(inspection.warnings.length)})`),
      children: inspection.warnings.map((warning) => ({ label: `${printable(warning.type)}: ${printable(warning.message)}` })),
    });
  }
  return { label: `Keel store ${printable(inspection.dir)} (layout ${inspection.layout})`, children };
}

/** The text `keel inspect` prints: the tree, one line per node, ending in a newline. Pure. */
export function renderInspection(inspection: StoreInspection, style: Style): string {
  return `${renderTree(inspectionTree(inspection, style)).join("\n")}\n`;
}

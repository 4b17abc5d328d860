import type { WorkSessionAnalysis } from "./work-session-analysis.js";
import { formatCount, sanitizeText } from "./internal/format.js";
import { renderTextTable, type TextColumn } from "./internal/text-table.js";

/** How a figure that is unknown reads in a report: never as 0. */
export const NO_DATA = "no data";

const plain = (text: string) => text;

const COLUMNS: TextColumn[] = [
  { header: "session", align: "left" },
  { header: "mission", align: "left" },
  { header: "role", align: "left" },
  { header: "model", align: "left" },
  { header: "state", align: "left" },
  { header: "turns", align: "right" },
  { header: "tasks", align: "right" },
  { header: "hours", align: "right" },
  { header: "tokens", align: "right" },
  { header: "tool calls", align: "right" },
  { header: "model mismatches", align: "right" },
];

const known = (value: number | null): string => (value === null ? NO_DATA : formatCount(value));

/**
 * The work-session section of the terminal report: a row per session (turns, tasks, hours,
 * tokens, tool calls, model mismatches over its own window), "this session", the turns outside
 * any session, the token window over the last N sessions and the audits due. An unknown figure
 * reads `no data`, distinct from `0`; no session reads `no_session`.
 */
export function renderWorkSessionReport(analysis: WorkSessionAnalysis): string {
  const lines = ["Work sessions:"];
  if (analysis.sessions.length === 0) {
    lines.push(`  ${NO_DATA}: no work session was opened in these events`);
  } else {
    const rows = analysis.sessions.map((session) => [
      sanitizeText(session.sessionId),
      sanitizeText(session.missionId),
      sanitizeText(session.role ?? "(mission)"),
      sanitizeText(session.model ?? "(default)"),
      session.state,
      formatCount(session.turns),
      formatCount(session.tasks),
      formatCount(session.hours),
      known(session.tokens),
      known(session.toolCalls),
      formatCount(session.modelMismatches),
    ]);
    lines.push(...renderTextTable(COLUMNS, rows, { header: plain, first: plain }).map((line) => `  ${line}`));
  }
  const current = analysis.thisSession;
  lines.push(
    current.state === "open"
      ? `  this session: ${sanitizeText(current.session.sessionId)}, ${formatCount(current.session.turns)} turns, tokens ${known(current.session.tokens)}`
      : "  this session: no_session (none is open; no figure is given for it)",
  );
  const outside = analysis.outsideSessions;
  const withoutUsage = outside.turnsWithoutUsage > 0 ? ` (${formatCount(outside.turnsWithoutUsage)} turn${outside.turnsWithoutUsage === 1 ? "" : "s"} without usage)` : "";
  lines.push(`  outside any session: ${formatCount(outside.turns)} turns, tokens ${outside.turns === 0 ? "0" : known(outside.tokens)}${withoutUsage}`);
  const window = analysis.tokenWindow;
  lines.push(
    window.sessions === 0
      ? `  token window (last ${window.requested} sessions): no_session`
      : `  token window (last ${window.sessions} of ${window.requested} sessions): tokens ${known(window.tokens)}`,
  );
  const due = analysis.audits.filter((audit) => audit.due);
  lines.push(due.length === 0 ? "  audits due: none" : `  audits due: ${due.map((audit) => sanitizeText(audit.missionId)).join(", ")}`);
  return `${lines.join("\n")}\n`;
}

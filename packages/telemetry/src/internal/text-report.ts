import type { EventAnalysis } from "../analysis-types.js";
import { formatReasons, formatVerdicts, plural, policyCountCells, roleCountCells, sanitizeText } from "./format.js";
import { renderTextTable, type TextColumn, type TextStyle } from "./text-table.js";

const ESCAPE = "\u001b[";
const paint = (code: string) => (text: string) => `${ESCAPE}${code}m${text}${ESCAPE}0m`;
const plain = (text: string) => text;

interface Palette extends TextStyle {
  title(text: string): string;
  good(text: string): string;
  bad(text: string): string;
  dim(text: string): string;
}

function paletteOf(color: boolean): Palette {
  if (!color) return { header: plain, first: plain, title: plain, good: plain, bad: plain, dim: plain };
  return { header: paint("1"), first: paint("36"), title: paint("1;4"), good: paint("32"), bad: paint("31"), dim: paint("2") };
}

const POLICY_COLUMNS: TextColumn[] = [
  { header: "policy", align: "left" },
  { header: "turns", align: "right" },
  { header: "fresh/resumed/rotated", align: "right" },
  { header: "prompt bytes", align: "right" },
  { header: "reviewer prompt bytes", align: "right" },
  { header: "input tokens", align: "right" },
  { header: "repeated reads", align: "right" },
  { header: "verdicts", align: "left" },
];

const ROLE_COLUMNS: TextColumn[] = [
  { header: "policy", align: "left" },
  { header: "role", align: "left" },
  { header: "turns", align: "right" },
  { header: "fresh/resumed/rotated", align: "right" },
  { header: "prompt bytes", align: "right" },
  { header: "input tokens", align: "right" },
  { header: "reads", align: "right" },
  { header: "repeated reads", align: "right" },
];

function agreementLines(analysis: EventAnalysis, palette: Palette): string[] {
  const { matchedRounds, agreeingRounds, rounds } = analysis.verdictAgreement;
  if (matchedRounds === 0) return ["Reviewer verdicts: no round was reviewed under two or more policies."];
  const summary = `Reviewer verdicts agree on ${agreeingRounds} of ${matchedRounds} matched rounds.`;
  const lines = [agreeingRounds === matchedRounds ? palette.good(summary) : palette.bad(summary)];
  for (const round of rounds) {
    const verdicts = Object.entries(round.verdicts)
      .map(([policy, verdict]) => `${sanitizeText(policy)}=${sanitizeText(verdict)}`)
      .join(" ");
    const mark = round.agree ? palette.good("agree ") : palette.bad("differ");
    lines.push(`  round ${round.round}: ${mark}  ${verdicts}`);
  }
  return lines;
}

/** The terminal report: a policy comparison table, rotations, verdict agreement, a per-role table. */
export function renderTextReport(analysis: EventAnalysis, color: boolean): string {
  const palette = paletteOf(color);
  const turns = analysis.policies.reduce((total, policy) => total + policy.turns, 0);
  const lines = [
    palette.title("Keel session report"),
    palette.dim(`${plural(analysis.policies.length, "policy", "policies")}, ${plural(turns, "turn")}, ${plural(analysis.events, "event")}`),
    "",
  ];
  if (analysis.policies.length === 0) {
    lines.push("No role turns were recorded.");
    return `${lines.join("\n")}\n`;
  }
  const policyRows = analysis.policies.map((policy) => [
    sanitizeText(policy.policy),
    ...policyCountCells(policy),
    sanitizeText(formatVerdicts(policy.verdicts)),
  ]);
  lines.push(...renderTextTable(POLICY_COLUMNS, policyRows, palette), "");
  lines.push("Rotations by reason:");
  for (const policy of analysis.policies) {
    lines.push(`  ${palette.first(sanitizeText(policy.policy))}: ${sanitizeText(formatReasons(policy.rotations))}`);
  }
  lines.push("", ...agreementLines(analysis, palette), "");
  const roleRows = analysis.policies.flatMap((policy) =>
    policy.roles.map((role) => [
      sanitizeText(policy.policy),
      sanitizeText(role.role),
      ...roleCountCells(role),
    ]),
  );
  lines.push("Per role:", ...renderTextTable(ROLE_COLUMNS, roleRows, palette));
  if (analysis.unattributedEvents > 0) {
    lines.push("", palette.dim(`${analysis.unattributedEvents} reads or verdicts had no mission with recorded turns and were not counted.`));
  }
  return `${lines.join("\n")}\n`;
}

import type { EventAnalysis } from "../analysis-types.js";
import { escapeHtml as escape, formatActions, formatCount, formatReasons, formatVerdicts, plural } from "./format.js";
import { ACTION_COLORS, actionsChart, inputTokensChart, policyColor, promptBytesChart } from "./svg-charts.js";

const STYLE = `
:root { color-scheme: light; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; margin: 24px; color: #111827; background: #ffffff; }
h1 { font-size: 22px; margin: 0 0 4px; }
h2 { font-size: 17px; margin: 28px 0 8px; }
p.meta { color: #4b5563; margin: 0 0 16px; }
table { border-collapse: collapse; margin: 8px 0 16px; }
th, td { padding: 4px 10px; border-bottom: 1px solid #e5e7eb; text-align: right; white-space: nowrap; }
th { background: #f3f4f6; font-weight: 600; }
td.name, th.name { text-align: left; white-space: normal; }
td.agree { color: #047857; } td.differ { color: #b91c1c; }
.legend { display: flex; flex-wrap: wrap; gap: 16px; margin: 4px 0 8px; }
.legend span { display: inline-flex; align-items: center; gap: 6px; }
.legend i { display: inline-block; width: 14px; height: 14px; border-radius: 3px; }
svg.chart { display: block; max-width: 100%; height: auto; background: #fafafa; border: 1px solid #e5e7eb; }
svg .grid { stroke: #e5e7eb; } svg .axis { stroke: #6b7280; }
svg .tick, svg .axis-label, svg .empty { font-size: 12px; fill: #374151; }
svg .bar-label { font-size: 11px; }
`;

function table(headers: readonly string[], rows: readonly (readonly string[])[], textColumns: readonly number[] = [0]): string {
  const cell = (tag: "th" | "td", text: string, index: number) =>
    `<${tag}${textColumns.includes(index) ? ' class="name"' : ""}>${escape(text)}</${tag}>`;
  const head = `<tr>${headers.map((header, index) => cell("th", header, index)).join("")}</tr>`;
  const body = rows.map((row) => `<tr>${row.map((text, index) => cell("td", text, index)).join("")}</tr>`).join("");
  return `<table><thead>${head}</thead><tbody>${body}</tbody></table>`;
}

function legend(analysis: EventAnalysis, actionsOnly: boolean): string {
  const policies = (actionsOnly ? [] : analysis.policies).map(
    (policy, position) => `<span><i style="background:${policyColor(position)}"></i>${escape(policy.policy)}</span>`,
  );
  const actions = actionsOnly
    ? Object.entries(ACTION_COLORS).map(([action, color]) => `<span><i style="background:${color}"></i>${escape(action)}</span>`)
    : [];
  return `<div class="legend">${[...policies, ...actions].join("")}</div>`;
}

function summaryTable(analysis: EventAnalysis): string {
  return table(
    ["policy", "turns", "fresh/resumed/rotated", "prompt bytes", "reviewer prompt bytes", "input tokens", "repeated reads", "verdicts", "rotations"],
    analysis.policies.map((policy) => [
      policy.policy,
      formatCount(policy.turns),
      formatActions(policy.actions),
      formatCount(policy.promptBytes),
      formatCount(policy.reviewerPromptBytes),
      formatCount(policy.inputTokens),
      formatCount(policy.repeatedReads),
      formatVerdicts(policy.verdicts),
      formatReasons(policy.rotations),
    ]),
    [0, 7, 8],
  );
}

function roleTable(analysis: EventAnalysis): string {
  return table(
    ["policy", "role", "turns", "fresh/resumed/rotated", "prompt bytes", "input tokens", "reads", "repeated reads"],
    analysis.policies.flatMap((policy) =>
      policy.roles.map((role) => [
        policy.policy,
        role.role,
        formatCount(role.turns),
        formatActions(role.actions),
        formatCount(role.promptBytes),
        formatCount(role.inputTokens),
        formatCount(role.reads),
        formatCount(role.repeatedReads),
      ]),
    ),
    [0, 1],
  );
}

function agreementSection(analysis: EventAnalysis): string {
  const { matchedRounds, agreeingRounds, rounds } = analysis.verdictAgreement;
  if (matchedRounds === 0) return "<p>No round was reviewed under two or more policies.</p>";
  const policies = analysis.policies.map((policy) => policy.policy);
  const head = `<tr><th>round</th>${policies.map((policy) => `<th class="name">${escape(policy)}</th>`).join("")}<th>agreement</th></tr>`;
  const body = rounds
    .map((round) => {
      const cells = policies.map((policy) => `<td class="name">${escape(round.verdicts[policy] ?? "-")}</td>`).join("");
      const mark = round.agree ? '<td class="agree">agree</td>' : '<td class="differ">differ</td>';
      return `<tr class="round" data-round="${round.round}" data-agree="${round.agree}"><td>${round.round}</td>${cells}${mark}</tr>`;
    })
    .join("");
  return `<p>Verdicts agree on ${agreeingRounds} of ${matchedRounds} matched rounds.</p><table><thead>${head}</thead><tbody>${body}</tbody></table>`;
}

function repeatedReadsSection(analysis: EventAnalysis): string {
  const rows = analysis.policies.flatMap((policy) =>
    policy.repeatedReadPaths.slice(0, 20).map((read) => [policy.policy, read.role, read.missionId, read.path, formatCount(read.reads)]),
  );
  if (rows.length === 0) return "<p>No path was read twice by the same role in the same mission.</p>";
  return table(["policy", "role", "mission", "path", "reads"], rows, [0, 1, 2, 3]);
}

/** A self-contained HTML page: no scripts, no network, no external assets; every text escaped. */
export function renderHtmlReport(analysis: EventAnalysis, title: string): string {
  const turns = analysis.policies.reduce((total, policy) => total + policy.turns, 0);
  return [
    "<!DOCTYPE html>",
    '<html lang="en"><head><meta charset="utf-8">',
    `<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">`,
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    `<title>${escape(title)}</title><style>${STYLE}</style></head><body>`,
    `<h1>${escape(title)}</h1>`,
    `<p class="meta">${plural(analysis.policies.length, "policy", "policies")}, ${plural(turns, "turn")}, ${plural(analysis.events, "event")}.</p>`,
    '<section id="summary"><h2>Policies</h2>',
    analysis.policies.length === 0 ? "<p>No role turns were recorded.</p>" : summaryTable(analysis),
    "</section>",
    '<section id="prompt-bytes"><h2>Prompt bytes per turn</h2>',
    legend(analysis, false),
    promptBytesChart(analysis),
    "</section>",
    '<section id="input-tokens"><h2>Input tokens per turn (dashed lines: rotations)</h2>',
    legend(analysis, false),
    inputTokensChart(analysis),
    "</section>",
    '<section id="actions"><h2>Session actions per role</h2>',
    legend(analysis, true),
    actionsChart(analysis),
    "</section>",
    '<section id="roles"><h2>Per role</h2>',
    roleTable(analysis),
    "</section>",
    '<section id="verdicts"><h2>Reviewer verdicts across policies</h2>',
    agreementSection(analysis),
    "</section>",
    '<section id="repeated-reads"><h2>Repeated reads</h2>',
    repeatedReadsSection(analysis),
    "</section>",
    "</body></html>",
    "",
  ].join("\n");
}

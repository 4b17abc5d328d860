import type { EventAnalysis } from "../analysis-types.js";
import { escapeHtml as escape, formatCount, formatReasons, formatVerdicts, plural, policyCountCells, roleCountCells } from "./format.js";
import { headlineOf } from "./report-headline.js";
import { ACTIONS, POLICY_COLORS, POLICY_COLORS_DARK, actionMarker, actionsChart, inputTokensChart, policyClass, promptBytesChart } from "./svg-charts.js";

const policyRules = (colors: readonly string[]) => colors.map((color, position) => `.${policyClass(position)} { color: ${color}; }`).join("\n");

const STYLE = `
:root { color-scheme: light dark; --bg: #ffffff; --fg: #111827; --muted: #4b5563; --line: #e5e7eb; --head: #f3f4f6;
  --panel: #fafafa; --grid: #e5e7eb; --axis: #6b7280; --agree: #047857; --differ: #b91c1c; --headline: #eff6ff; --accent: ${POLICY_COLORS[0]}; --on-solid: #ffffff; }
${policyRules(POLICY_COLORS)}
@media (prefers-color-scheme: dark) {
  :root { --bg: #0f172a; --fg: #e5e7eb; --muted: #9ca3af; --line: #334155; --head: #1e293b;
    --panel: #111c33; --grid: #273449; --axis: #94a3b8; --agree: #34d399; --differ: #f87171; --headline: #172554; --accent: ${POLICY_COLORS_DARK[0]}; --on-solid: #0f172a; }
${policyRules(POLICY_COLORS_DARK)}
}
* { box-sizing: border-box; }
html { background: var(--bg); }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; margin: 0; padding: 20px 24px 32px; color: var(--fg); background: var(--bg); width: 100%; }
h1 { font-size: 22px; margin: 0 0 4px; }
h2 { font-size: 17px; margin: 28px 0 6px; }
p.meta { color: var(--muted); margin: 0 0 12px; }
p.headline { font-size: 15px; margin: 0 0 16px; padding: 12px 16px; background: var(--headline); border-left: 4px solid var(--accent); border-radius: 4px; max-width: 120ch; }
p.note { color: var(--muted); margin: 0 0 6px; }
.wide { width: 100%; overflow-x: auto; }
table { border-collapse: collapse; margin: 6px 0 14px; }
table.full { width: 100%; }
th, td { padding: 4px 10px; border-bottom: 1px solid var(--line); text-align: right; white-space: nowrap; }
th { background: var(--head); font-weight: 600; white-space: normal; vertical-align: bottom; }
td.name, th.name { text-align: left; white-space: normal; }
td.agree { color: var(--agree); } td.differ { color: var(--differ); font-weight: 600; }
.legend { display: flex; flex-wrap: wrap; gap: 6px 18px; margin: 4px 0 8px; }
.legend span { display: inline-flex; align-items: center; gap: 6px; }
.legend svg { width: 30px; height: 14px; }
.legend .key-title { color: var(--muted); font-size: 12px; text-transform: uppercase; letter-spacing: 0.04em; }
.legend .key-title + span { margin-left: -8px; }
.legend .swatch { stroke: currentColor; stroke-width: 3; }
.legend .glyph { fill: var(--fg); }
svg.chart { display: block; width: 100%; height: auto; }
svg text { fill: var(--fg); }
svg .plot-area { fill: var(--panel); stroke: var(--line); }
svg .grid { stroke: var(--grid); } svg .axis { stroke: var(--axis); }
svg .tick, svg .axis-label, svg .empty { font-size: 12px; fill: var(--muted); }
svg .panel-title { font-size: 14px; font-weight: 600; }
svg text.policy-label { fill: currentColor; font-weight: 600; }
svg .series-line { opacity: 0.85; }
svg .point { stroke: var(--bg); stroke-width: 1.2; }
svg .bar { stroke: currentColor; stroke-width: 1.5; }
svg .bar.action-fresh { fill: currentColor; }
svg .bar.action-resumed { fill: currentColor; fill-opacity: 0.35; }
svg .bar.action-rotated { fill: var(--bg); stroke-width: 2; stroke-dasharray: 4 2; }
svg .bar-label { font-size: 11px; font-weight: 600; }
svg .bar-label.action-fresh { fill: var(--on-solid); }
`;

function table(headers: readonly string[], rows: readonly (readonly string[])[], textColumns: readonly number[] = [0], klass = ""): string {
  const cell = (tag: "th" | "td", text: string, index: number) =>
    `<${tag}${textColumns.includes(index) ? ' class="name"' : ""}>${escape(text)}</${tag}>`;
  const head = `<tr>${headers.map((header, index) => cell("th", header, index)).join("")}</tr>`;
  const body = rows.map((row) => `<tr>${row.map((text, index) => cell("td", text, index)).join("")}</tr>`).join("");
  return `<div class="wide"><table${klass === "" ? "" : ` class="${klass}"`}><thead>${head}</thead><tbody>${body}</tbody></table></div>`;
}

const glyph = (body: string, klass = ""): string =>
  `<svg class="key${klass}" viewBox="0 0 30 14" width="30" height="14" aria-hidden="true" xmlns="http://www.w3.org/2000/svg">${body}</svg>`;

/** The key of a chart: a line per policy in its colour, then the encoding of the actions. */
function legend(analysis: EventAnalysis, kind: "markers" | "bars"): string {
  const policies = analysis.policies.map(
    (policy, position) =>
      `<span class="${policyClass(position)}">${glyph('<line class="swatch" x1="2" x2="28" y1="7" y2="7"/>')}${escape(policy.policy)}</span>`,
  );
  const actions = ACTIONS.map((action) =>
    kind === "markers"
      ? `<span>${glyph(`<path class="glyph" transform="translate(15 7)" d="${actionMarker(action, 10)}"/>`)}${action}</span>`
      : `<span>${glyph(`<rect class="bar action-${action}" x="8" y="1" width="14" height="12" style="stroke:var(--fg);fill:${action === "rotated" ? "var(--bg)" : "var(--fg)"}"/>`)}${action}</span>`,
  );
  return `<div class="legend"><span class="key-title">policies</span>${policies.join("")}<span class="key-title">actions</span>${actions.join("")}</div>`;
}

const keepCounts = (text: string): string => text.replace(/ (\d)/g, "\u00a0$1");

function summaryTable(analysis: EventAnalysis): string {
  return table(
    ["policy", "turns", "fresh/resumed/rotated", "prompt bytes", "reviewer prompt bytes", "input tokens", "repeated reads", "verdicts", "rotations"],
    analysis.policies.map((policy) => [
      policy.policy,
      ...policyCountCells(policy),
      // Wrapped between items only: `approve 6,` / `request_changes 2`, never before a count.
      keepCounts(formatVerdicts(policy.verdicts)),
      keepCounts(formatReasons(policy.rotations)),
    ]),
    [0, 7, 8],
    "full",
  );
}

function roleTable(analysis: EventAnalysis): string {
  return table(
    ["policy", "role", "turns", "fresh/resumed/rotated", "prompt bytes", "input tokens", "reads", "repeated reads"],
    analysis.policies.flatMap((policy) =>
      policy.roles.map((role) => [
        policy.policy,
        role.role,
        ...roleCountCells(role),
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
    `<p class="headline" id="headline">${escape(headlineOf(analysis))}</p>`,
    '<section id="summary"><h2>Policies</h2>',
    analysis.policies.length === 0 ? "<p>No role turns were recorded.</p>" : summaryTable(analysis),
    "</section>",
    '<section id="prompt-bytes"><h2>Prompt bytes per turn</h2>',
    '<p class="note">One panel per role, one line per policy; the marker shows what the session did on that turn. Policies sit side by side at each turn, so equal values stay visible.</p>',
    legend(analysis, "markers"),
    promptBytesChart(analysis),
    "</section>",
    '<section id="input-tokens"><h2>Input tokens per turn</h2>',
    '<p class="note">Observed input tokens (cached reads included); turns whose backend reported no usage are left out. Dashed lines mark rotations.</p>',
    legend(analysis, "markers"),
    inputTokensChart(analysis),
    "</section>",
    '<section id="actions"><h2>Session actions per role</h2>',
    legend(analysis, "bars"),
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

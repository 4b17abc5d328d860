import type { SessionAction } from "@keel/core";
import type { EventAnalysis, TurnPoint } from "../analysis-types.js";
import { amountAxis, dodgeOffsets, linearScale, niceAxis, type NiceAxis } from "./chart-scale.js";
import { escapeHtml as escape, formatCount } from "./format.js";

/**
 * The colours of the policies on a light page, in the order the analysis lists them (cycled past
 * eight): blue, orange and green first, which colour-blind readers tell apart.
 */
export const POLICY_COLORS = ["#1d4ed8", "#c2410c", "#047857", "#a21caf", "#0e7490", "#b45309", "#be123c", "#4b5563"] as const;

/** The same colours, lightened for a dark page (`prefers-color-scheme: dark`). */
export const POLICY_COLORS_DARK = ["#60a5fa", "#fb923c", "#34d399", "#e879f9", "#22d3ee", "#fbbf24", "#fb7185", "#9ca3af"] as const;

/** The session actions, in stacking and legend order. */
export const ACTIONS: readonly SessionAction[] = ["fresh", "resumed", "rotated"];

/** The colour of the policy at that position (light page). */
export function policyColor(position: number): string {
  return POLICY_COLORS[position % POLICY_COLORS.length] ?? "#4b5563";
}

/** The CSS class that colours an element (through `color`/`currentColor`) as the policy at that position. */
export function policyClass(position: number): string {
  return `policy-${position % POLICY_COLORS.length}`;
}

/**
 * The marker of a session action, as an SVG path centred on 0,0: a circle for `fresh`, a square
 * for `resumed`, a triangle pointing up for `rotated`. Same area, different shape.
 */
export function actionMarker(action: SessionAction, size = 9): string {
  const r = size / 2;
  if (action === "fresh") return `M${-r} 0a${r} ${r} 0 1 0 ${size} 0a${r} ${r} 0 1 0 ${-size} 0z`;
  const s = round1(r * 0.9);
  if (action === "resumed") return `M${-s} ${-s}h${2 * s}v${2 * s}h${-2 * s}z`;
  const t = round1(r * 1.25);
  return `M0 ${-t}L${t} ${round1(t * 0.8)}H${-t}z`;
}

const WIDTH = 1200;
const COLUMNS = 3;
const GAP = 24;
const PANEL_HEIGHT = 250;
const PANEL = { top: 30, right: 14, bottom: 42, left: 70 };

function round1(value: number): number {
  return Math.round(value * 10) / 10;
}

interface PanelBox {
  /** Plot area, in SVG units. */
  left: number;
  top: number;
  width: number;
  height: number;
}

/** The plot areas of `count` panels laid out in rows of up to three, and the SVG's height. */
function layout(count: number): { boxes: PanelBox[]; height: number } {
  const columns = Math.max(1, Math.min(COLUMNS, count));
  const panelWidth = (WIDTH - GAP * (columns - 1)) / columns;
  const boxes = Array.from({ length: count }, (_, at) => {
    const column = at % columns;
    const row = Math.floor(at / columns);
    return {
      left: round1(column * (panelWidth + GAP) + PANEL.left),
      top: row * (PANEL_HEIGHT + GAP) + PANEL.top,
      width: round1(panelWidth - PANEL.left - PANEL.right),
      height: PANEL_HEIGHT - PANEL.top - PANEL.bottom,
    };
  });
  return { boxes, height: Math.ceil(count / columns) * (PANEL_HEIGHT + GAP) - GAP };
}

function svg(chart: string, title: string, height: number, body: string): string {
  return (
    `<svg class="chart" data-chart="${chart}" role="img" aria-label="${escape(title)}" viewBox="0 0 ${WIDTH} ${height}" ` +
    `width="${WIDTH}" height="${height}" xmlns="http://www.w3.org/2000/svg">${body}</svg>`
  );
}

function empty(chart: string, title: string, message: string): string {
  return svg(chart, title, 120, `<text class="empty" x="${WIDTH / 2}" y="60" text-anchor="middle">${escape(message)}</text>`);
}

/** Grid, tick labels and axis titles of one panel; `xTicks` are [value, x] pairs. */
function panelFrame(box: PanelBox, title: string, yAxis: NiceAxis, y: (value: number) => number, xTicks: readonly (readonly [string, number])[], xLabel: string, yLabel: string | undefined): string {
  const bottom = box.top + box.height;
  const right = round1(box.left + box.width);
  const parts = [`<rect class="plot-area" x="${box.left}" y="${box.top}" width="${box.width}" height="${box.height}"/>`];
  for (const tick of yAxis.ticks) {
    const at = round1(y(tick));
    parts.push(
      `<line class="grid" x1="${box.left}" x2="${right}" y1="${at}" y2="${at}"/>`,
      `<text class="tick y-tick" data-value="${tick}" x="${round1(box.left - 6)}" y="${at}" text-anchor="end" dominant-baseline="middle">${escape(formatCount(tick))}</text>`,
    );
  }
  for (const [label, x] of xTicks) {
    parts.push(`<text class="tick x-tick" x="${round1(x)}" y="${bottom + 16}" text-anchor="middle">${escape(label)}</text>`);
  }
  const middle = round1(box.top + box.height / 2);
  parts.push(
    `<line class="axis" x1="${box.left}" x2="${right}" y1="${bottom}" y2="${bottom}"/>`,
    `<text class="panel-title" x="${box.left}" y="${box.top - 10}">${escape(title)}</text>`,
    `<text class="axis-label" x="${round1(box.left + box.width / 2)}" y="${bottom + 34}" text-anchor="middle">${escape(xLabel)}</text>`,
  );
  if (yLabel !== undefined) {
    const x = round1(box.left - PANEL.left + 12);
    parts.push(`<text class="axis-label" x="${x}" y="${middle}" text-anchor="middle" transform="rotate(-90 ${x} ${middle})">${escape(yLabel)}</text>`);
  }
  return parts.join("");
}

function panelOpen(chart: string, role: string, box: PanelBox, yAxis: NiceAxis, xMin: number, xMax: number): string {
  return (
    `<g class="panel" data-chart="${chart}" data-role="${escape(role)}" data-y-min="${yAxis.min}" data-y-max="${yAxis.max}" ` +
    `data-x-min="${xMin}" data-x-max="${xMax}">`
  );
}

const byText = (left: string, right: string): number => (left < right ? -1 : left > right ? 1 : 0);

/** The roles that have at least one turn, sorted by name regardless of case (locale-free). */
function rolesOf(analysis: EventAnalysis): string[] {
  return [...new Set(analysis.policies.flatMap((policy) => policy.roles.filter((role) => role.turns > 0).map((role) => role.role)))].sort(
    (left, right) => byText(left.toLowerCase(), right.toLowerCase()) || byText(left, right),
  );
}

interface Plotted {
  point: TurnPoint;
  /** The point's position among its role's turns under its policy (1-based). */
  k: number;
  value: number;
}

function pointTitle(policy: string, { point, k, value }: Plotted, unit: string): string {
  return escape(
    `${policy} · ${point.role} turn ${k} (policy turn ${point.index}, ${point.missionId}): ${formatCount(value)} ${unit}, ${point.action} (${point.rotationReason})`,
  );
}

/** The x ticks of a panel whose turns run 1..maxK: every turn up to twelve, else nice steps. */
function turnTicks(maxK: number): number[] {
  if (maxK <= 12) return Array.from({ length: maxK }, (_, at) => at + 1);
  const axis = niceAxis(1, maxK, 6, true);
  return [1, ...axis.ticks.filter((tick) => tick > 1 && tick <= maxK)];
}

/**
 * A per-turn measure as small multiples, one panel per role (x: the role's turn under the policy,
 * y: shared across panels, from the data's range), one line per policy, one marker per turn
 * shaped by its action. Series sit side by side (a fixed offset per policy) and earlier lines are
 * drawn wider underneath, so equal values never hide a policy.
 */
function turnChart(
  analysis: EventAnalysis,
  chart: string,
  title: string,
  yLabel: string,
  unit: string,
  value: (point: TurnPoint) => number | null,
  rotationMarkers: boolean,
): string {
  const roles = rolesOf(analysis);
  const series = analysis.policies.map((policy, position) => {
    const byRole = new Map<string, Plotted[]>();
    const seen = new Map<string, number>();
    for (const point of policy.series) {
      const k = (seen.get(point.role) ?? 0) + 1;
      seen.set(point.role, k);
      const measured = value(point);
      if (measured === null) continue;
      const list = byRole.get(point.role) ?? [];
      list.push({ point, k, value: measured });
      byRole.set(point.role, list);
    }
    return { name: policy.policy, position, byRole, turns: policy.series, seen };
  });
  const values = series.flatMap((line) => [...line.byRole.values()].flat().map((plotted) => plotted.value));
  if (values.length === 0) return empty(chart, title, "No turns with data were recorded.");
  const yAxis = amountAxis(values, 5, true);
  const { boxes, height } = layout(roles.length);
  const count = series.length;
  const parts: string[] = [];
  roles.forEach((role, at) => {
    const box = boxes[at] as PanelBox;
    const maxK = Math.max(1, ...series.map((line) => line.seen.get(role) ?? 0));
    const stepWidth = maxK > 1 ? box.width / maxK : box.width / 2;
    const offsets = dodgeOffsets(count, 10, stepWidth * 0.6);
    const spread = offsets.length > 0 ? Math.max(...offsets) : 0;
    const inset = spread + 10;
    const x = linearScale([1, maxK], [box.left + inset, box.left + box.width - inset]);
    const y = linearScale([yAxis.min, yAxis.max], [box.top + box.height, box.top]);
    const ticks = turnTicks(maxK).map((tick) => [String(tick), x(tick)] as const);
    parts.push(
      panelOpen(chart, role, box, yAxis, 1, maxK),
      panelFrame(box, role, yAxis, y, ticks, `turn of ${role}`, at % COLUMNS === 0 ? yLabel : undefined),
    );
    series.forEach((line) => {
      const points = line.byRole.get(role) ?? [];
      const dx = offsets[line.position] ?? 0;
      const color = policyColor(line.position);
      const klass = policyClass(line.position);
      if (rotationMarkers) {
        let k = 0;
        for (const point of line.turns) {
          if (point.role !== role) continue;
          k++;
          if (point.action !== "rotated") continue;
          const at = round1(x(k) + dx);
          parts.push(
            `<g class="rotation-marker ${klass}" color="${color}" data-chart="${chart}" data-policy="${escape(line.name)}" data-role="${escape(role)}" ` +
              `data-index="${point.index}" data-reason="${escape(point.rotationReason)}"><title>${escape(`${line.name}: ${role} rotated at its turn ${k} (${point.rotationReason})`)}</title>` +
              `<line x1="${at}" x2="${at}" y1="${box.top}" y2="${box.top + box.height}" stroke="currentColor" stroke-dasharray="4 3" opacity="0.6"/></g>`,
          );
        }
      }
      if (points.length === 0) return;
      const coordinates = points.map((plotted) => [round1(x(plotted.k) + dx), round1(y(plotted.value))] as const);
      const width = Math.max(2, 2 + 2 * (count - 1 - line.position));
      const markers = points
        .map((plotted, index) => {
          const [cx, cy] = coordinates[index] as readonly [number, number];
          return (
            `<path class="point action-${plotted.point.action}" data-chart="${chart}" data-policy="${escape(line.name)}" data-index="${plotted.point.index}" ` +
            `data-role="${escape(role)}" data-k="${plotted.k}" data-action="${plotted.point.action}" data-value="${plotted.value}" ` +
            `transform="translate(${cx} ${cy})" d="${actionMarker(plotted.point.action)}" fill="currentColor"><title>${pointTitle(line.name, plotted, unit)}</title></path>`
          );
        })
        .join("");
      parts.push(
        `<g class="series ${klass}" color="${color}" data-chart="${chart}" data-policy="${escape(line.name)}" data-role="${escape(role)}" data-dx="${round1(dx)}">` +
          `<polyline class="series-line" points="${coordinates.map(([cx, cy]) => `${cx},${cy}`).join(" ")}" fill="none" stroke="currentColor" ` +
          `stroke-width="${width}" stroke-linejoin="round" stroke-linecap="round"/>${markers}</g>`,
      );
    });
    parts.push("</g>");
  });
  return svg(chart, title, height, parts.join(""));
}

/** Prompt bytes per turn: one panel per role, one line per policy, one `path.point` per turn. */
export function promptBytesChart(analysis: EventAnalysis): string {
  return turnChart(analysis, "prompt-bytes", "Prompt bytes per turn, by role and policy", "prompt bytes", "bytes", (point) => point.promptBytes, false);
}

/**
 * Observed input tokens per turn: one panel per role, one line per policy (turns without usage
 * are left out), with a `rotation-marker` at every rotated turn.
 */
export function inputTokensChart(analysis: EventAnalysis): string {
  return turnChart(analysis, "input-tokens", "Input tokens per turn, by role and policy, with rotations", "input tokens", "input tokens", (point) => point.inputTokens, true);
}

/**
 * Turns per role (one panel each) and policy (one bar each, in the policy's colour), stacked by
 * action: `fresh` solid, `resumed` pale, `rotated` outlined and dashed; one `rect.bar` per
 * non-zero segment, its count written inside when it fits.
 */
export function actionsChart(analysis: EventAnalysis): string {
  const title = "Session actions per role and policy";
  const roles = rolesOf(analysis);
  const maxTurns = Math.max(0, ...analysis.policies.flatMap((policy) => policy.roles.map((role) => role.turns)));
  if (roles.length === 0 || maxTurns === 0) return empty("actions", title, "No turns were recorded.");
  const yAxis = niceAxis(0, maxTurns, 4, true);
  const { boxes, height } = layout(roles.length);
  const count = analysis.policies.length;
  const parts: string[] = [];
  roles.forEach((roleName, at) => {
    const box = boxes[at] as PanelBox;
    const y = linearScale([yAxis.min, yAxis.max], [box.top + box.height, box.top]);
    const slot = box.width / count;
    const barWidth = Math.min(56, slot * 0.7);
    const centre = (position: number) => box.left + (position + 0.5) * slot;
    parts.push(panelOpen("actions", roleName, box, yAxis, 0, count - 1), panelFrame(box, roleName, yAxis, y, [], "policy", at % COLUMNS === 0 ? "turns" : undefined));
    analysis.policies.forEach((policy, position) => {
      const klass = policyClass(position);
      const color = policyColor(position);
      const short = policy.policy.length > 12 ? `${policy.policy.slice(0, 11)}…` : policy.policy;
      parts.push(
        `<text class="tick x-tick policy-label ${klass}" color="${color}" fill="currentColor" x="${round1(centre(position))}" y="${box.top + box.height + 16}" text-anchor="middle">${escape(short)}</text>`,
      );
      const role = policy.roles.find((candidate) => candidate.role === roleName);
      if (!role || role.turns === 0) return;
      let base = 0;
      const segments: string[] = [];
      for (const action of ACTIONS) {
        const value = role.actions[action];
        if (value === 0) continue;
        const top = y(base + value);
        const segmentHeight = y(base) - top;
        base += value;
        const left = round1(centre(position) - barWidth / 2);
        const label = escape(`${policy.policy} / ${roleName}: ${value} ${action}`);
        segments.push(
          `<rect class="bar action-${action}" data-chart="actions" data-policy="${escape(policy.policy)}" data-role="${escape(roleName)}" ` +
            `data-action="${action}" data-value="${value}" x="${left + 1}" y="${round1(top) + 1}" width="${round1(barWidth - 2)}" ` +
            `height="${Math.max(0, round1(segmentHeight) - 2)}"><title>${label}</title></rect>`,
        );
        if (segmentHeight >= 16) {
          segments.push(
            `<text class="bar-label action-${action}" x="${round1(centre(position))}" y="${round1(top + segmentHeight / 2)}" text-anchor="middle" dominant-baseline="middle">${value}</text>`,
          );
        }
      }
      parts.push(`<g class="bars ${klass}" color="${color}" data-policy="${escape(policy.policy)}">${segments.join("")}</g>`);
    });
    parts.push("</g>");
  });
  return svg("actions", title, height, parts.join(""));
}

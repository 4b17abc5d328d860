import type { EventAnalysis, PolicyAnalysis, TurnPoint } from "../analysis-types.js";
import { escapeHtml as escape, formatCount } from "./format.js";

/** Colours of the policies, in the order the analysis lists them (cycled past eight). */
export const POLICY_COLORS = ["#2563eb", "#dc2626", "#059669", "#d97706", "#7c3aed", "#0891b2", "#db2777", "#4b5563"];

/** Colours of the session actions. */
export const ACTION_COLORS = { fresh: "#60a5fa", resumed: "#34d399", rotated: "#f59e0b" } as const;

const WIDTH = 960;
const HEIGHT = 320;
const MARGIN = { top: 24, right: 24, bottom: 44, left: 72 };
const PLOT_WIDTH = WIDTH - MARGIN.left - MARGIN.right;
const PLOT_HEIGHT = HEIGHT - MARGIN.top - MARGIN.bottom;

const round1 = (value: number): string => String(Math.round(value * 10) / 10);

/** The smallest 1, 2, 2.5 or 5 times a power of ten at or above `value` (1 for 0). */
export function niceCeiling(value: number): number {
  if (!(value > 0)) return 1;
  const power = 10 ** Math.floor(Math.log10(value));
  const fraction = value / power;
  const nice = fraction <= 1 ? 1 : fraction <= 2 ? 2 : fraction <= 2.5 ? 2.5 : fraction <= 5 ? 5 : 10;
  return nice * power;
}

/** The colour of the policy at that position. */
export function policyColor(position: number): string {
  return POLICY_COLORS[position % POLICY_COLORS.length] ?? "#4b5563";
}

interface Frame {
  x(index: number): number;
  y(value: number): number;
  yMax: number;
}

function frameOf(maxIndex: number, maxValue: number): Frame {
  const yMax = niceCeiling(maxValue);
  return {
    x: (index) => MARGIN.left + (maxIndex <= 1 ? PLOT_WIDTH / 2 : ((index - 1) / (maxIndex - 1)) * PLOT_WIDTH),
    y: (value) => MARGIN.top + PLOT_HEIGHT - (value / yMax) * PLOT_HEIGHT,
    yMax,
  };
}

function axes(frame: Frame, maxIndex: number, xLabel: string, yLabel: string): string {
  const parts: string[] = [];
  for (let step = 0; step <= 4; step++) {
    const value = (frame.yMax * step) / 4;
    const y = round1(frame.y(value));
    parts.push(
      `<line class="grid" x1="${MARGIN.left}" x2="${WIDTH - MARGIN.right}" y1="${y}" y2="${y}"/>`,
      `<text class="tick" x="${MARGIN.left - 8}" y="${y}" text-anchor="end" dominant-baseline="middle">${escape(formatCount(value))}</text>`,
    );
  }
  const every = maxIndex <= 20 ? 1 : Math.ceil(niceCeiling(maxIndex / 10));
  for (let index = 1; index <= maxIndex; index += index === 1 && every > 1 ? every - 1 : every) {
    parts.push(
      `<text class="tick" x="${round1(frame.x(index))}" y="${HEIGHT - MARGIN.bottom + 16}" text-anchor="middle">${index}</text>`,
    );
  }
  const bottom = HEIGHT - MARGIN.bottom;
  parts.push(
    `<line class="axis" x1="${MARGIN.left}" x2="${WIDTH - MARGIN.right}" y1="${bottom}" y2="${bottom}"/>`,
    `<line class="axis" x1="${MARGIN.left}" x2="${MARGIN.left}" y1="${MARGIN.top}" y2="${bottom}"/>`,
    `<text class="axis-label" x="${MARGIN.left + PLOT_WIDTH / 2}" y="${HEIGHT - 6}" text-anchor="middle">${escape(xLabel)}</text>`,
    `<text class="axis-label" x="14" y="${MARGIN.top + PLOT_HEIGHT / 2}" text-anchor="middle" transform="rotate(-90 14 ${MARGIN.top + PLOT_HEIGHT / 2})">${escape(yLabel)}</text>`,
  );
  return parts.join("");
}

function svg(chart: string, title: string, body: string): string {
  return (
    `<svg class="chart" data-chart="${chart}" role="img" aria-label="${escape(title)}" viewBox="0 0 ${WIDTH} ${HEIGHT}" ` +
    `width="${WIDTH}" height="${HEIGHT}" xmlns="http://www.w3.org/2000/svg">${body}</svg>`
  );
}

function empty(chart: string, title: string, message: string): string {
  return svg(chart, title, `<text class="empty" x="${WIDTH / 2}" y="${HEIGHT / 2}" text-anchor="middle">${escape(message)}</text>`);
}

function pointTitle(policy: string, point: TurnPoint, value: number, unit: string): string {
  return escape(
    `${policy} turn ${point.index} (${point.role} #${point.turn}, ${point.missionId}): ${formatCount(value)} ${unit}, ${point.action} (${point.rotationReason})`,
  );
}

function pointAttributes(chart: string, policy: string, point: TurnPoint, value: number): string {
  return (
    `data-chart="${chart}" data-policy="${escape(policy)}" data-index="${point.index}" data-role="${escape(point.role)}" ` +
    `data-action="${point.action}" data-value="${value}"`
  );
}

type Series = { policy: PolicyAnalysis; color: string; points: { point: TurnPoint; value: number }[] };

function lineChart(chart: string, title: string, yLabel: string, unit: string, series: Series[], markers: (frame: Frame) => string): string {
  const maxIndex = Math.max(0, ...series.flatMap((line) => line.points.map(({ point }) => point.index)));
  const maxValue = Math.max(0, ...series.flatMap((line) => line.points.map(({ value }) => value)));
  if (maxIndex === 0) return empty(chart, title, "No turns with data were recorded.");
  const frame = frameOf(maxIndex, maxValue);
  const lines = series.map(({ policy, color, points }) => {
    const name = policy.policy;
    const path = points.map(({ point, value }) => `${round1(frame.x(point.index))},${round1(frame.y(value))}`).join(" ");
    const circles = points
      .map(
        ({ point, value }) =>
          `<circle class="point" ${pointAttributes(chart, name, point, value)} cx="${round1(frame.x(point.index))}" ` +
          `cy="${round1(frame.y(value))}" r="3.5" fill="${color}"><title>${pointTitle(name, point, value, unit)}</title></circle>`,
      )
      .join("");
    return (
      `<g class="series" data-policy="${escape(name)}">` +
      `<polyline class="series-line" points="${path}" fill="none" stroke="${color}" stroke-width="2"/>${circles}</g>`
    );
  });
  return svg(chart, title, axes(frame, maxIndex, "turn (per policy, in time order)", yLabel) + markers(frame) + lines.join(""));
}

/** Prompt bytes per turn, one line per policy; one `circle.point` per turn. */
export function promptBytesChart(analysis: EventAnalysis): string {
  const series = analysis.policies.map((policy, position) => ({
    policy,
    color: policyColor(position),
    points: policy.series.map((point) => ({ point, value: point.promptBytes })),
  }));
  return lineChart("prompt-bytes", "Prompt bytes per turn by policy", "prompt bytes", "bytes", series, () => "");
}

/**
 * Observed input tokens per turn, one line per policy (turns without usage are left out), with a
 * `rotation-marker` at every rotated turn.
 */
export function inputTokensChart(analysis: EventAnalysis): string {
  const series = analysis.policies.map((policy, position) => ({
    policy,
    color: policyColor(position),
    points: policy.series.flatMap((point) => (point.inputTokens === null ? [] : [{ point, value: point.inputTokens }])),
  }));
  const markers = (frame: Frame): string =>
    analysis.policies
      .flatMap((policy, position) =>
        policy.series
          .filter((point) => point.action === "rotated")
          .map((point) => {
            const x = round1(frame.x(point.index));
            const top = MARGIN.top;
            const label = escape(`${policy.policy}: rotated at turn ${point.index} (${point.rotationReason})`);
            return (
              `<g class="rotation-marker" data-chart="input-tokens" data-policy="${escape(policy.policy)}" data-index="${point.index}" ` +
              `data-reason="${escape(point.rotationReason)}"><title>${label}</title>` +
              `<line x1="${x}" x2="${x}" y1="${top}" y2="${HEIGHT - MARGIN.bottom}" stroke="${policyColor(position)}" stroke-dasharray="4 3" opacity="0.7"/>` +
              `<path d="M${x} ${top + 8} l-5 -8 h10 z" fill="${policyColor(position)}"/></g>`
            );
          }),
      )
      .join("");
  return lineChart("input-tokens", "Input tokens per turn, with rotations", "input tokens", "input tokens", series, markers);
}

/** Turns per role and policy as stacked bars of fresh / resumed / rotated; one `rect.bar` per non-zero segment. */
export function actionsChart(analysis: EventAnalysis): string {
  const title = "Session actions per role";
  const roles = [...new Set(analysis.policies.flatMap((policy) => policy.roles.filter((role) => role.turns > 0).map((role) => role.role)))].sort(
    (left, right) => (left < right ? -1 : left > right ? 1 : 0),
  );
  const maxTurns = Math.max(0, ...analysis.policies.flatMap((policy) => policy.roles.map((role) => role.turns)));
  if (roles.length === 0 || maxTurns === 0) return empty("actions", title, "No turns were recorded.");
  const yMax = Math.max(4, Math.ceil(maxTurns / 4) * 4);
  const frame: Frame = { x: () => 0, y: (value) => MARGIN.top + PLOT_HEIGHT - (value / yMax) * PLOT_HEIGHT, yMax };
  const groupWidth = PLOT_WIDTH / roles.length;
  const barWidth = Math.min(48, (groupWidth * 0.8) / Math.max(1, analysis.policies.length));
  const parts: string[] = [axes(frame, 0, "role (one bar per policy)", "turns")];
  roles.forEach((roleName, roleIndex) => {
    const groupLeft = MARGIN.left + roleIndex * groupWidth + (groupWidth - barWidth * analysis.policies.length) / 2;
    parts.push(
      `<text class="tick" x="${round1(MARGIN.left + (roleIndex + 0.5) * groupWidth)}" y="${HEIGHT - MARGIN.bottom + 16}" text-anchor="middle">${escape(roleName)}</text>`,
    );
    analysis.policies.forEach((policy, policyIndex) => {
      const role = policy.roles.find((candidate) => candidate.role === roleName);
      if (!role || role.turns === 0) return;
      const short = policy.policy.length > 9 ? `${policy.policy.slice(0, 8)}…` : policy.policy;
      parts.push(
        `<text class="bar-label" x="${round1(groupLeft + (policyIndex + 0.5) * barWidth)}" y="${round1(frame.y(role.turns) - 4)}" ` +
          `text-anchor="middle" fill="${policyColor(policyIndex)}">${escape(short)}</text>`,
      );
      let base = 0;
      for (const action of ["fresh", "resumed", "rotated"] as const) {
        const value = role.actions[action];
        if (value === 0) continue;
        const y = frame.y(base + value);
        const height = frame.y(base) - y;
        base += value;
        const label = escape(`${policy.policy} / ${roleName}: ${value} ${action}`);
        parts.push(
          `<rect class="bar" data-chart="actions" data-policy="${escape(policy.policy)}" data-role="${escape(roleName)}" ` +
            `data-action="${action}" data-value="${value}" x="${round1(groupLeft + policyIndex * barWidth + 1)}" y="${round1(y)}" ` +
            `width="${round1(barWidth - 2)}" height="${round1(height)}" fill="${ACTION_COLORS[action]}" ` +
            `stroke="${policyColor(policyIndex)}" stroke-width="1.5"><title>${label}</title></rect>`,
        );
      }
    });
  });
  return svg("actions", title, parts.join(""));
}

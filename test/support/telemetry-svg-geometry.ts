import { expect } from "vitest";

/** The attributes of one start tag (`<g class="x" data-a="1">` → `{ class: "x", "data-a": "1" }`). */
export function attributesOf(tag: string): Record<string, string> {
  const attributes: Record<string, string> = {};
  for (const match of tag.matchAll(/([\w:-]+)="([^"]*)"/g)) attributes[match[1] ?? ""] = match[2] ?? "";
  return attributes;
}

const number = (text: string | undefined): number => {
  const value = Number(text);
  if (text === undefined || text === "" || !Number.isFinite(value)) throw new Error(`not a number: ${String(text)}`);
  return value;
};

/** One marker of a line chart, with its centre read from its `transform`. */
export interface ChartPoint {
  policy: string;
  action: string;
  value: number;
  k: number;
  cx: number;
  cy: number;
  d: string;
}

/** One policy's line in one panel. */
export interface ChartSeries {
  policy: string;
  color: string;
  className: string;
  polyline: string;
  points: ChartPoint[];
}

/** One bar segment of the actions chart. */
export interface ChartBar {
  policy: string;
  action: string;
  value: number;
  x: number;
  y: number;
  width: number;
  height: number;
}

/** One small multiple: its plot area, its y axis and what is drawn in it. */
export interface ChartPanel {
  role: string;
  plot: { x: number; y: number; width: number; height: number };
  yMin: number;
  yMax: number;
  yTicks: number[];
  series: ChartSeries[];
  bars: ChartBar[];
}

/** A chart's panels, read back from the SVG markup (as rendered or as a browser dumped it). */
export function chartPanels(html: string, chart: string): ChartPanel[] {
  const start = html.indexOf(`<svg class="chart" data-chart="${chart}"`);
  if (start < 0) throw new Error(`no chart ${chart}`);
  const svg = html.slice(start, html.indexOf("</svg>", start));
  return svg
    .split(/(?=<g class="panel")/)
    .filter((chunk) => chunk.startsWith('<g class="panel"'))
    .map((chunk) => {
      const panel = attributesOf(chunk.slice(0, chunk.indexOf(">")));
      const plot = attributesOf(/<rect class="plot-area"[^>]*>/.exec(chunk)?.[0] ?? "");
      const yTicks = [...chunk.matchAll(/<text class="tick y-tick" data-value="([^"]*)"/g)].map((match) => number(match[1]));
      const series = chunk
        .split(/(?=<g class="series )/)
        .filter((part) => part.startsWith('<g class="series '))
        .map((part) => {
          const head = attributesOf(part.slice(0, part.indexOf(">")));
          const points = [...part.matchAll(/<path class="point[^>]*>/g)].map(([tag]) => {
            const attributes = attributesOf(tag);
            const [, cx, cy] = /translate\(([-\d.]+) ([-\d.]+)\)/.exec(attributes["transform"] ?? "") ?? [];
            return {
              policy: attributes["data-policy"] ?? "",
              action: attributes["data-action"] ?? "",
              value: number(attributes["data-value"]),
              k: number(attributes["data-k"]),
              cx: number(cx),
              cy: number(cy),
              d: attributes["d"] ?? "",
            };
          });
          return {
            policy: head["data-policy"] ?? "",
            color: head["color"] ?? "",
            className: head["class"] ?? "",
            polyline: attributesOf(/<polyline[^>]*>/.exec(part)?.[0] ?? "")["points"] ?? "",
            points,
          };
        });
      const bars = [...chunk.matchAll(/<rect class="bar[^>]*>/g)].map(([tag]) => {
        const attributes = attributesOf(tag);
        return {
          policy: attributes["data-policy"] ?? "",
          action: attributes["data-action"] ?? "",
          value: number(attributes["data-value"]),
          x: number(attributes["x"]),
          y: number(attributes["y"]),
          width: number(attributes["width"]),
          height: number(attributes["height"]),
        };
      });
      return {
        role: panel["data-role"] ?? "",
        plot: { x: number(plot["x"]), y: number(plot["y"]), width: number(plot["width"]), height: number(plot["height"]) },
        yMin: number(panel["data-y-min"]),
        yMax: number(panel["data-y-max"]),
        yTicks,
        series,
        bars,
      };
    });
}

const inside = (panel: ChartPanel, x: number, y: number) =>
  x >= panel.plot.x && x <= panel.plot.x + panel.plot.width && y >= panel.plot.y && y <= panel.plot.y + panel.plot.height;

/**
 * Asserts that a line chart is drawn to its data: every marker inside its panel's plot area and
 * at the height its value maps to; each y axis covering its data with nice ticks, no more than a
 * step beyond it; one distinct colour per policy; no two policies' lines or markers drawn on the
 * same pixels; one marker shape per action. Returns the number of markers checked.
 */
export function expectLineChartGeometry(panels: readonly ChartPanel[]): number {
  expect(panels.length).toBeGreaterThan(0);
  const colors = new Map<string, string>();
  const shapes = new Map<string, string>();
  let checked = 0;
  for (const panel of panels) {
    const values = panel.series.flatMap((line) => line.points.map((point) => point.value));
    expect(values.length).toBeGreaterThan(0);
    const step = (panel.yTicks[1] ?? 0) - (panel.yTicks[0] ?? 0);
    expect(panel.yTicks[0]).toBe(panel.yMin);
    expect(panel.yTicks[panel.yTicks.length - 1]).toBe(panel.yMax);
    expect(panel.yMin).toBeLessThanOrEqual(Math.min(...values));
    expect(panel.yMax).toBeGreaterThanOrEqual(Math.max(...values));
    // Scaled to the data: the axis ends within one tick step of the largest value.
    expect(panel.yMax - Math.max(...values)).toBeLessThan(step);
    for (const line of panel.series) {
      const known = colors.get(line.policy);
      if (known !== undefined) expect(line.color).toBe(known);
      colors.set(line.policy, line.color);
      for (const point of line.points) {
        expect(point.policy).toBe(line.policy);
        expect(inside(panel, point.cx, point.cy), `${line.policy} ${panel.role} #${point.k} at ${point.cx},${point.cy}`).toBe(true);
        const expectedY = panel.plot.y + panel.plot.height - ((point.value - panel.yMin) / (panel.yMax - panel.yMin)) * panel.plot.height;
        expect(Math.abs(point.cy - expectedY)).toBeLessThan(0.11);
        const shape = shapes.get(point.action);
        if (shape !== undefined) expect(point.d).toBe(shape);
        shapes.set(point.action, point.d);
        checked++;
      }
    }
    // No two policies drawn on top of each other: lines differ, and no two markers share a centre.
    for (let left = 0; left < panel.series.length; left++) {
      for (let right = left + 1; right < panel.series.length; right++) {
        const [a, b] = [panel.series[left], panel.series[right]] as [ChartSeries, ChartSeries];
        if (a.points.length > 0 && b.points.length > 0) expect(a.polyline).not.toBe(b.polyline);
        const centres = new Set(a.points.map((point) => `${point.cx},${point.cy}`));
        for (const point of b.points) expect(centres.has(`${point.cx},${point.cy}`), `${a.policy} and ${b.policy} at ${point.cx},${point.cy}`).toBe(false);
      }
    }
  }
  expect(new Set(colors.values()).size).toBe(colors.size);
  expect(new Set(shapes.values()).size).toBe(shapes.size);
  return checked;
}

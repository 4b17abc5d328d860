import { afterEach, describe, expect, it, vi } from "vitest";
import fc from "fast-check";
import type { KeelEvent } from "@keel/core";
import { analyzeEvents, renderReport, type EventAnalysis } from "@keel/telemetry";
import { demoEvents } from "../../../test/support/telemetry-demo-events.js";
import { chartPanels, expectLineChartGeometry } from "../../../test/support/telemetry-svg-geometry.js";

const ESCAPE = "\u001b";
const analysisOf = (events: readonly KeelEvent[]): EventAnalysis => analyzeEvents(events)._unsafeUnwrap();
const count = (text: string, pattern: RegExp) => (text.match(pattern) ?? []).length;

afterEach(() => {
  vi.unstubAllEnvs();
});

describe("renderReport text", () => {
  const analysis = analysisOf(demoEvents());

  it("prints one aligned row per policy under the named columns", () => {
    const text = renderReport(analysis, { format: "text", color: false })._unsafeUnwrap();
    const lines = text.split("\n");
    const header = lines.find((line) => line.startsWith("policy  "));
    expect(header).toBeDefined();
    for (const name of ["turns", "fresh/resumed/rotated", "prompt bytes", "reviewer prompt bytes", "input tokens", "repeated reads", "verdicts"]) {
      expect(header).toContain(name);
    }
    const start = lines.indexOf(header ?? "");
    const rows = lines.slice(start + 1, start + 4);
    expect(rows.map((row) => row.split(/\s{2,}/)[0])).toEqual(["fresh", "mission", "rolling"]);
    expect(rows[0]).toContain("63,000");
    expect(rows[2]).toContain("3/6/3");
    const verdictColumn = header?.indexOf("verdicts");
    for (const row of rows) expect(row.indexOf("approve 2")).toBe(verdictColumn);
    const bytesEnd = (header?.indexOf("prompt bytes") ?? 0) + "prompt bytes".length;
    for (const row of rows) expect(row[bytesEnd - 1]).toMatch(/\d/);
    expect(text).toContain("Reviewer verdicts agree on 4 of 4 matched rounds.");
    expect(text).toContain("max_turns 3");
    expect(text).not.toContain(ESCAPE);
  });

  it("colours only when asked or when NO_COLOR is unset, without breaking alignment", () => {
    vi.stubEnv("NO_COLOR", "1");
    expect(renderReport(analysis, { format: "text" })._unsafeUnwrap()).not.toContain(ESCAPE);
    const forced = renderReport(analysis, { format: "text", color: true })._unsafeUnwrap();
    expect(forced).toContain(`${ESCAPE}[`);
    vi.stubEnv("NO_COLOR", "");
    const colored = renderReport(analysis, { format: "text" })._unsafeUnwrap();
    expect(colored).toContain(`${ESCAPE}[`);
    const stripped = colored.replace(/\u001b\[[0-9;]*m/g, "");
    expect(stripped).toBe(renderReport(analysis, { format: "text", color: false })._unsafeUnwrap());
  });

  it("neutralises control characters that event text carries", () => {
    const hostile = demoEvents({ policies: ["evil\u001b[2J"], rounds: 1, verdict: () => "ok\u0007" });
    const text = renderReport(analysisOf(hostile), { format: "text", color: false })._unsafeUnwrap();
    expect(text).not.toMatch(/[\u0000-\u0009\u000b-\u001f]/);
  });

  it("says so when nothing was recorded", () => {
    expect(renderReport(analysisOf([]), { format: "text", color: false })._unsafeUnwrap()).toContain("No role turns were recorded.");
  });
});

describe("renderReport html", () => {
  const analysis = analysisOf(demoEvents());
  const html = renderReport(analysis, { format: "html" })._unsafeUnwrap();

  it("is one self-contained page: no scripts, no external assets, a CSP that forbids loading", () => {
    expect(html.startsWith("<!DOCTYPE html>")).toBe(true);
    expect(html).not.toMatch(/<script|\bsrc=|\bhref=|url\(|@import|<link|<img/i);
    expect(html).toContain(`content="default-src 'none'; style-src 'unsafe-inline'"`);
  });

  it("has the three charts with one data element per point", () => {
    expect(count(html, /<svg class="chart"/g)).toBe(3);
    expect(count(html, /<path class="point action-\w+" data-chart="prompt-bytes"/g)).toBe(36);
    expect(count(html, /<path class="point action-\w+" data-chart="input-tokens"/g)).toBe(36);
    expect(count(html, /<g class="rotation-marker /g)).toBe(3);
    expect(count(html, /<rect class="bar action-\w+" data-chart="actions"/g)).toBe(3 + 6 + 9);
    expect(html).toContain('data-policy="rolling" data-index="12"');
  });

  it("opens with the headline computed from the data", () => {
    expect(html).toContain('<p class="headline" id="headline">3 policies compared over 36 turns. Input tokens: fresh used the fewest, 21,003, 16% fewer than mission (24,993).');
    expect(html.indexOf('id="headline"')).toBeLessThan(html.indexOf("<svg"));
  });

  it("follows the system's dark setting and spans the page width", () => {
    expect(html).toContain("color-scheme: light dark;");
    expect(html).toMatch(/@media \(prefers-color-scheme: dark\) \{[^@]*--bg: #0f172a;[^@]*\.policy-0 \{ color: #60a5fa; \}/);
    expect(html).toContain("svg.chart { display: block; width: 100%; height: auto; }");
    expect(html).not.toMatch(/max-width: \d+px/);
  });

  it("draws small multiples per role, scaled to the data, with no policy hiding another", () => {
    for (const chart of ["prompt-bytes", "input-tokens"]) {
      const panels = chartPanels(html, chart);
      expect(panels.map((panel) => panel.role)).toEqual(["engineer", "planner", "Reviewer"]);
      expect(expectLineChartGeometry(panels)).toBe(36);
    }
    // The largest prompt is fresh's round 4 (6,000 bytes): a 0..6,000 axis, not 0..10,000.
    const [engineer] = chartPanels(html, "prompt-bytes");
    expect([engineer?.yMin, engineer?.yMax]).toEqual([0, 6_000]);
    // mission and rolling send the same prompts until rolling rotates: side by side, not stacked.
    const same = engineer?.series.filter((line) => line.policy !== "fresh").map((line) => line.points[1]);
    expect(same?.[0]?.value).toBe(same?.[1]?.value);
    expect(same?.[0]?.cx).not.toBe(same?.[1]?.cx);
  });

  it("gives each policy a colour and each action a marker shape", () => {
    const series = chartPanels(html, "prompt-bytes").flatMap((panel) => panel.series);
    expect(new Map(series.map((line) => [line.policy, line.color]))).toEqual(
      new Map([["fresh", "#1d4ed8"], ["mission", "#c2410c"], ["rolling", "#047857"]]),
    );
    const shapes = new Map(series.flatMap((line) => line.points.map((point) => [point.action, point.d])));
    expect([...shapes.keys()].sort()).toEqual(["fresh", "resumed", "rotated"]);
    expect(new Set(shapes.values()).size).toBe(3);
  });

  it("stacks the actions chart's bars to their counts inside the plot", () => {
    const panels = chartPanels(html, "actions");
    expect(panels).toHaveLength(3);
    for (const panel of panels) {
      expect([panel.yMin, panel.yMax]).toEqual([0, 4]);
      const perUnit = panel.plot.height / (panel.yMax - panel.yMin);
      for (const bar of panel.bars) {
        expect(bar.y).toBeGreaterThanOrEqual(panel.plot.y);
        expect(bar.y + bar.height).toBeLessThanOrEqual(panel.plot.y + panel.plot.height);
        // Two units of gap between stacked segments.
        expect(Math.abs(bar.height + 2 - bar.value * perUnit)).toBeLessThan(0.2);
      }
      expect(panel.bars.filter((bar) => bar.policy === "rolling").map((bar) => bar.action)).toEqual(["fresh", "resumed", "rotated"]);
    }
  });

  it("escapes every piece of event text", () => {
    const hostile = demoEvents({ policies: ['<img src=x onerror="alert(1)">'], rounds: 2, verdict: () => "</td><script>x</script>" });
    const page = renderReport(analysisOf(hostile), { format: "html", title: "<b>t</b>" })._unsafeUnwrap();
    expect(page).not.toMatch(/<script|<img|<b>/);
    expect(page).toContain("&#60;img src=x onerror=&#34;alert(1)&#34;&#62;");
  });

  it("leaves out turns without usage from the token chart", () => {
    const events = demoEvents({ rounds: 1 }).map((event) =>
      event.type === "role.session.turn" && event.role === "planner" ? { ...event, usage: null } : event,
    );
    const page = renderReport(analysisOf(events), { format: "html" })._unsafeUnwrap();
    expect(count(page, /<path class="point action-\w+" data-chart="prompt-bytes"/g)).toBe(9);
    expect(count(page, /<path class="point action-\w+" data-chart="input-tokens"/g)).toBe(6);
  });

  it("renders an empty analysis with placeholders instead of charts' points", () => {
    const page = renderReport(analysisOf([]), { format: "html" })._unsafeUnwrap();
    expect(count(page, /<svg class="chart"/g)).toBe(3);
    expect(count(page, /class="point /g)).toBe(0);
  });
});

describe("renderReport input checks", () => {
  it("answers bad options or a malformed analysis with invalid_input", () => {
    const analysis = analysisOf(demoEvents({ rounds: 1 }));
    expect(renderReport(analysis, { format: "pdf" } as never)._unsafeUnwrapErr().code).toBe("invalid_input");
    expect(renderReport(analysis, { format: "text", colour: true } as never)._unsafeUnwrapErr().code).toBe("invalid_input");
    expect(renderReport({ ...analysis, policies: "x" } as never, { format: "text" })._unsafeUnwrapErr().code).toBe("invalid_input");
    expect(renderReport(null as never, { format: "html" })._unsafeUnwrapErr().code).toBe("invalid_input");
  });

  it("renders any analysis of valid events in both formats (property)", () => {
    const name = fc.string({ minLength: 1, maxLength: 12 });
    fc.assert(
      fc.property(fc.array(name, { minLength: 1, maxLength: 3 }), fc.integer({ min: 1, max: 4 }), (policies, rounds) => {
        const analysis = analysisOf(demoEvents({ policies: [...new Set(policies)], rounds }));
        const text = renderReport(analysis, { format: "text", color: false })._unsafeUnwrap();
        const html = renderReport(analysis, { format: "html" })._unsafeUnwrap();
        const turns = analysis.policies.reduce((total, policy) => total + policy.turns, 0);
        expect(count(html, /<path class="point action-\w+" data-chart="prompt-bytes"/g)).toBe(turns);
        expect(html).not.toMatch(/<script/);
        expect(text.length).toBeGreaterThan(0);
      }),
      { numRuns: 60 },
    );
  });
});

import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { analyzeEvents, renderReport } from "@keel/telemetry";
import { POLICY_COLORS, POLICY_COLORS_DARK } from "../packages/telemetry/src/internal/svg-charts.js";
import { demoEvents } from "./support/telemetry-demo-events.js";
import { decodePng, type DecodedPng } from "./support/telemetry-png.js";
import { chartPanels, expectLineChartGeometry } from "./support/telemetry-svg-geometry.js";

/**
 * Renders the HTML report in real headless Chromium (Debian's `chromium`, no npm dependency):
 * the DOM Chromium parsed must hold the charts with every data point drawn to its data, and
 * screenshots in the light and the dark scheme (`--force-dark-mode` makes Chromium report
 * `prefers-color-scheme: dark`) must show the page in that scheme, charts across the width.
 */
const CHROMIUM = "/usr/bin/chromium";
const available = existsSync(CHROMIUM);
const inCi = process.env["CI"] === "true";
const TIMEOUT_MS = 60_000;
const WINDOW = { width: 1280, height: 1400 };

const directory = mkdtempSync(join(tmpdir(), "keel-telemetry-chromium-"));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs Chromium headless once in its own process group, killing the whole group on timeout. */
function runChromium(mode: string[], url: string, profile: string): Promise<Run> {
  const args = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
    `--user-data-dir=${profile}`,
    `--window-size=${WINDOW.width},${WINDOW.height}`,
    ...mode,
    url,
  ];
  return new Promise((done, fail) => {
    const child = spawn(CHROMIUM, args, { stdio: ["ignore", "pipe", "pipe"], detached: true });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => {
      if (child.pid !== undefined) process.kill(-child.pid, "SIGKILL");
    }, TIMEOUT_MS);
    child.on("error", (error) => {
      clearTimeout(timer);
      fail(error);
    });
    child.on("close", (code) => {
      clearTimeout(timer);
      done({ code, stdout, stderr });
    });
  });
}

const count = (text: string, pattern: RegExp) => (text.match(pattern) ?? []).length;

// A mission whose planner turns report no usage and whose verdicts differ on one round.
const events = demoEvents({
  verdict: (policy, round) => (policy === "fresh" && round === 3 ? "reject" : round % 2 === 0 ? "approve" : "revise"),
}).map((event) => (event.type === "role.session.turn" && event.role === "planner" && event.turn === 2 ? { ...event, usage: null } : event));
const analysis = analyzeEvents(events)._unsafeUnwrap();
const turns = analysis.policies.reduce((total, policy) => total + policy.turns, 0);
const withUsage = analysis.policies.reduce((total, policy) => total + policy.series.filter((point) => point.inputTokens !== null).length, 0);

describe("the HTML report in headless Chromium", () => {
  if (!available) {
    if (inCi) {
      it("needs Chromium at /usr/bin/chromium in CI", () => {
        throw new Error(`${CHROMIUM} is missing: install Debian's chromium package (apt-get install -y chromium)`);
      });
    } else {
      console.warn(`[report-chromium] skipped: ${CHROMIUM} is not installed (apt-get install -y chromium); CI=true makes this a failure`);
      it.skip("renders the report (Chromium not installed)", () => undefined);
    }
    return;
  }

  const page = join(directory, "report.html");
  writeFileSync(page, renderReport(analysis, { format: "html", title: "Keel demo <report>" })._unsafeUnwrap());
  const url = pathToFileURL(page).href;
  // One DOM dump serves the two DOM tests (Chromium takes seconds to start on a loaded machine).
  let dumped: Promise<Run> | undefined;
  const dumpDom = (): Promise<Run> => (dumped ??= runChromium(["--dump-dom"], url, join(directory, "profile-dom")));

  it("renders the charts with every data point in the DOM", async () => {
    const run = await dumpDom();
    expect(run.code).toBe(0);
    const dom = run.stdout;
    expect(dom).toContain("<title>Keel demo &lt;report&gt;</title>");
    expect(count(dom, /<svg class="chart"/g)).toBe(3);
    for (const chart of ["prompt-bytes", "input-tokens", "actions"]) expect(dom).toContain(`data-chart="${chart}" role="img"`);
    expect(turns).toBe(36);
    expect(count(dom, /<path class="point action-\w+" data-chart="prompt-bytes"/g)).toBe(turns);
    expect(count(dom, /<path class="point action-\w+" data-chart="input-tokens"/g)).toBe(withUsage);
    expect(withUsage).toBe(33);
    expect(count(dom, /<g class="rotation-marker /g)).toBe(3);
    expect(count(dom, /<rect class="bar action-\w+" data-chart="actions"/g)).toBe(18);
    expect(count(dom, /<tr class="round" data-round="\d+" data-agree="false"/g)).toBe(1);
    expect(dom).not.toMatch(/<script/);
    expect(dom).toContain('<p class="headline" id="headline">3 policies compared over 36 turns.');
    expect(dom).toContain("Verdicts: the reviewer's verdict differed between policies on 1 of 4 matched rounds (round 3)");
  });

  it("draws every point inside its panel, on axes that cover the data, no policy hiding another", async () => {
    const run = await dumpDom();
    expect(run.code).toBe(0);
    expect(expectLineChartGeometry(chartPanels(run.stdout, "prompt-bytes"))).toBe(turns);
    expect(expectLineChartGeometry(chartPanels(run.stdout, "input-tokens"))).toBe(withUsage);
    for (const panel of chartPanels(run.stdout, "actions")) {
      for (const bar of panel.bars) {
        expect(bar.y).toBeGreaterThanOrEqual(panel.plot.y);
        expect(bar.y + bar.height).toBeLessThanOrEqual(panel.plot.y + panel.plot.height);
      }
    }
  });

  async function screenshot(name: string, mode: string[]): Promise<DecodedPng> {
    const png = join(directory, `${name}.png`);
    const run = await runChromium([...mode, `--screenshot=${png}`], url, join(directory, `profile-${name}`));
    expect(run.code).toBe(0);
    const image = decodePng(readFileSync(png));
    expect([image.width, image.height]).toEqual([WINDOW.width, WINDOW.height]);
    return image;
  }

  it("paints the light scheme: a white page with each policy's colour, charts across the width", async () => {
    const image = await screenshot("light", []);
    const shares = colourShares(image, ["#ffffff", "#0f172a", ...POLICY_COLORS.slice(0, 3), ...POLICY_COLORS_DARK.slice(0, 3)]);
    expect(shares.get("#ffffff")).toBeGreaterThan(0.5);
    expect(shares.get("#0f172a")).toBeLessThan(0.01);
    for (const colour of POLICY_COLORS.slice(0, 3)) expect(shares.get(colour), colour).toBeGreaterThan(0.0005);
    expect(distinctColours(image)).toBeGreaterThan(50);
    // The third role's panel reaches the right edge of the page: the charts use its full width.
    expect(policyPixelsRightOf(image, POLICY_COLORS.slice(0, 3), Math.round(image.width * 0.85))).toBeGreaterThan(200);
  });

  it("paints the dark scheme when the system asks for it", async () => {
    const image = await screenshot("dark", ["--force-dark-mode"]);
    const shares = colourShares(image, ["#ffffff", "#0f172a", ...POLICY_COLORS.slice(0, 3), ...POLICY_COLORS_DARK.slice(0, 3)]);
    expect(shares.get("#0f172a")).toBeGreaterThan(0.4);
    expect(shares.get("#ffffff")).toBeLessThan(0.01);
    for (const colour of POLICY_COLORS_DARK.slice(0, 3)) expect(shares.get(colour), colour).toBeGreaterThan(0.0005);
    // The light scheme's blue is gone: the policies are drawn in the lightened colours.
    expect(shares.get(POLICY_COLORS[0])).toBeLessThan(0.0002);
    expect(policyPixelsRightOf(image, POLICY_COLORS_DARK.slice(0, 3), Math.round(image.width * 0.85))).toBeGreaterThan(200);
  });
});

const rgb = (hex: string): [number, number, number] => [1, 3, 5].map((at) => parseInt(hex.slice(at, at + 2), 16)) as [number, number, number];

function near(image: DecodedPng, at: number, [red, green, blue]: readonly number[], tolerance = 14): boolean {
  return (
    Math.abs((image.pixels[at] ?? 0) - (red ?? 0)) <= tolerance &&
    Math.abs((image.pixels[at + 1] ?? 0) - (green ?? 0)) <= tolerance &&
    Math.abs((image.pixels[at + 2] ?? 0) - (blue ?? 0)) <= tolerance
  );
}

/** The share of the image's pixels near each colour. */
function colourShares(image: DecodedPng, colours: readonly string[]): Map<string, number> {
  const targets = colours.map((colour) => [colour, rgb(colour)] as const);
  const counts = new Map(colours.map((colour) => [colour, 0]));
  for (let at = 0; at < image.pixels.length; at += image.channels) {
    for (const [colour, value] of targets) if (near(image, at, value)) counts.set(colour, (counts.get(colour) ?? 0) + 1);
  }
  const pixels = image.width * image.height;
  return new Map([...counts].map(([colour, value]) => [colour, value / pixels]));
}

function distinctColours(image: DecodedPng): number {
  const colours = new Set<number>();
  for (let at = 0; at < image.pixels.length; at += image.channels) {
    colours.add(((image.pixels[at] ?? 0) << 16) | ((image.pixels[at + 1] ?? 0) << 8) | (image.pixels[at + 2] ?? 0));
  }
  return colours.size;
}

/** Pixels in a policy colour right of column `x`. */
function policyPixelsRightOf(image: DecodedPng, colours: readonly string[], x: number): number {
  const values = colours.map(rgb);
  let found = 0;
  for (let row = 0; row < image.height; row++) {
    for (let column = x; column < image.width; column++) {
      const at = (row * image.width + column) * image.channels;
      if (values.some((value) => near(image, at, value))) found++;
    }
  }
  return found;
}

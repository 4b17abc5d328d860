import { validate, type KeelError } from "@keel/core";
import type { Result } from "neverthrow";
import { z } from "zod";
import { EventAnalysisSchema, type EventAnalysis } from "./analysis-types.js";
import { renderHtmlReport } from "./internal/html-report.js";
import { headlineOf } from "./internal/report-headline.js";
import { renderTextReport } from "./internal/text-report.js";

/** Options of {@link renderReport}. */
export interface RenderReportOptions {
  /** `text`: a terminal table; `html`: a self-contained page with inline SVG charts. */
  format: "text" | "html";
  /**
   * ANSI colour in the text report. Default: on unless the `NO_COLOR` environment variable is set
   * to a non-empty value. A command should pass `color: stream.isTTY && !NO_COLOR` itself.
   * Ignored for HTML.
   */
  color?: boolean;
  /** The HTML page's title and heading. Default `Keel session report`. */
  title?: string;
}

const OptionsSchema = z.strictObject({
  format: z.enum(["text", "html"]),
  color: z.boolean().optional(),
  title: z.string().min(1).max(200).optional(),
});

/** True when colour should be on by default: `NO_COLOR` unset or empty (https://no-color.org). */
function colorByDefault(): boolean {
  const noColor = process.env["NO_COLOR"];
  return noColor === undefined || noColor === "";
}

/**
 * Renders an {@link EventAnalysis}:
 * - `text` — aligned columns per policy (policy, turns, fresh/resumed/rotated, prompt bytes,
 *   reviewer prompt bytes, input tokens, repeated reads, verdicts), rotations by reason, reviewer
 *   verdict agreement and a per-role table; colour per `color`/`NO_COLOR`; control characters in
 *   event text are replaced, so events cannot steer the terminal.
 * - `html` — one self-contained page (no scripts, no network, no external assets, a
 *   Content-Security-Policy that forbids loading anything) that opens with the
 *   {@link reportHeadline}, spans the page width and follows `prefers-color-scheme`, with the same
 *   tables and three inline SVG charts, each small multiples per role (`g.panel`, its
 *   `rect.plot-area`, its y axis from the data's range in `data-y-min`/`data-y-max`): prompt bytes
 *   per turn by policy (`svg[data-chart="prompt-bytes"]`, one `path.point` per turn), input
 *   tokens per turn with rotation markers (`svg[data-chart="input-tokens"]`, one `path.point` per
 *   turn with usage and one `g.rotation-marker` per rotated turn) and session actions per role
 *   (`svg[data-chart="actions"]`, one `rect.bar` per non-zero policy/role/action). A policy has
 *   one colour throughout (`g.series[color]`); an action has one marker shape (circle `fresh`,
 *   square `resumed`, triangle `rotated`) and one bar fill. Policies sit side by side at each
 *   turn, so equal values never hide one. Every data point carries `data-policy`, `data-value`
 *   and friends; all text is HTML-escaped.
 *
 * @returns the report text, or `invalid_input` for bad options or a malformed analysis.
 */
export function renderReport(analysis: EventAnalysis, options: RenderReportOptions): Result<string, KeelError> {
  return validate(OptionsSchema, options, "report options").andThen((valid) =>
    validate(EventAnalysisSchema, analysis, "event analysis").map((checked) =>
      valid.format === "html"
        ? renderHtmlReport(checked, valid.title ?? "Keel session report")
        : renderTextReport(checked, valid.color ?? colorByDefault()),
    ),
  );
}

/**
 * The report's headline: one paragraph of what the comparison shows, computed from the analysis.
 * It names the policy that used the fewest input tokens and the one that sent the fewest prompt
 * bytes, by how much against the most (per turn when the policies ran different numbers of
 * turns; turns without usage left out). It says how each policy handled its sessions (a new
 * session every turn, rotations and their reasons), which policy read files again, and whether
 * the reviewer's verdicts agree across policies. With one policy it sums that policy up; with
 * none it says so. Plain text: the HTML report escapes it and shows it at the top of the page.
 *
 * @returns the paragraph, or `invalid_input` for a malformed analysis.
 */
export function reportHeadline(analysis: EventAnalysis): Result<string, KeelError> {
  return validate(EventAnalysisSchema, analysis, "event analysis").map(headlineOf);
}

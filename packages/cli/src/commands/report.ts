import { writeFile } from "node:fs/promises";
import path from "node:path";
import { KeelError, toKeelError } from "@keel/core";
import { analyzeEvents, analyzeWorkSessions, readEventsJsonl, renderReport, renderWorkSessionReport, reportHeadline } from "@keel/telemetry";
import { ResultAsync } from "neverthrow";
import { CliUsageError, type CliCommand } from "../cli-command.js";
import { paint, type CliIo } from "../cli-io.js";
import { printable } from "../internal/inspect-text.js";

const HELP = `keel report — compare session policies from an events file

Usage: keel report <events.jsonl> [--html <out.html>] [--json] [--otlp <url>]

Arguments:
  events.jsonl     an events file (one Keel event per line, as keel demo and the JSONL sink write it)

Options:
  --html <file>    also write a self-contained HTML page (tables and charts) to <file>
  --json           print one JSON document { file, torn, headline, analysis, workSessions } instead of the text
  --otlp <url>     also send the log to an OpenTelemetry receiver as OTLP/HTTP (JSON) spans, with the
                   events' own times: each role turn an invoke_agent span, its file accesses
                   execute_tool children, budget decisions events on it, refusals ERROR spans.
                   <url> is the traces endpoint (http://localhost:4318/v1/traces; a bare
                   http://host:4318 gets /v1/traces). Headers from OTEL_EXPORTER_OTLP_HEADERS,
                   service.name from OTEL_SERVICE_NAME (default keel). Needs the optional peers
                   @keel/otel @opentelemetry/api @opentelemetry/sdk-trace-base
                   @opentelemetry/exporter-trace-otlp-http @opentelemetry/resources
  -h, --help

Prints, per session policy: turns by action (fresh, resumed, rotated), rotations by reason,
prompt bytes, input tokens, repeated reads and reviewer verdicts, then a per-role table; then the
work sessions: per session (over its own window) turns, tasks, hours, tokens, tool calls and model
mismatches, "this session", the turns outside any session, the token window over the last 5
sessions and the audits due. An unknown figure reads "no data", never 0. A torn
last line (an interrupted write) is left out with a warning; damage anywhere else is an error.

Exit codes: 0 reported, 1 the file is missing, damaged, the page cannot be written or the OTLP
receiver did not take the spans, 2 bad arguments.

Example:
  keel report .keel-demo/events.jsonl --html report.html
  keel report .keel-demo/events.jsonl --json > analysis.json
  keel report .keel-demo/events.jsonl --otlp http://localhost:4318/v1/traces
`;

const writeText = ResultAsync.fromThrowable(
  async (file: string, text: string) => writeFile(file, text, "utf8"),
  (error): KeelError => toKeelError(error, "io_failed", "cannot write the HTML report"),
);

/** The OTLP traces URL `--otlp` names: http(s) only; a bare origin gets the standard `/v1/traces` path. */
function otlpUrl(value: unknown): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "string" || value === "") throw new CliUsageError("--otlp needs a URL (http://localhost:4318/v1/traces)");
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new CliUsageError(`--otlp needs an http(s) URL, got "${printable(value)}"`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new CliUsageError(`--otlp needs an http(s) URL, got "${printable(value)}"`);
  if (url.pathname === "/" || url.pathname === "") url.pathname = "/v1/traces";
  return url.toString();
}

/** Imports the OTLP shipping (and with it `@keel/otel` and the OpenTelemetry SDK) only for `--otlp`. */
async function loadOtlp(): Promise<typeof import("../internal/report-otlp.js")> {
  try {
    return await import("../internal/report-otlp.js");
  } catch (error) {
    const { missingOptionalPeer, optionalPeerInstall } = await import("../internal/optional-peers.js");
    const peer = missingOptionalPeer(error);
    const install = optionalPeerInstall("@keel/otel");
    const what = peer !== undefined ? `${peer} is not installed` : `it cannot be loaded (${error instanceof Error ? error.message.split("\n")[0] : String(error)})`;
    throw new KeelError("unavailable", `--otlp needs the OpenTelemetry peers of @keel/cli, and ${what}: ${install}`, { retryable: false });
  }
}

function fail(io: CliIo, error: KeelError): number {
  io.stderr(`${paint(io, "red", "error")} (${error.code}): ${printable(error.message)}\n`);
  return 1;
}

/** `keel report <events.jsonl> [--html out.html] [--json]`: the policy comparison of an events file. */
export const reportCommand: CliCommand = {
  name: "report",
  summary: "compare session policies from an events.jsonl file (text, --json or --html)",
  help: HELP,
  options: { html: { type: "string" }, json: { type: "boolean" }, otlp: { type: "string" } },
  allowPositionals: true,
  run: async (args, io) => {
    const [file, ...extra] = args.positionals;
    if (file === undefined) throw new CliUsageError("report needs an events file: keel report <events.jsonl>");
    if (extra.length > 0) throw new CliUsageError(`report takes one events file, got ${args.positionals.length}`);
    const html = args.values["html"];
    if (html !== undefined && (typeof html !== "string" || html === "")) throw new CliUsageError("--html needs a file path");
    const otlp = otlpUrl(args.values["otlp"]);
    const read = await readEventsJsonl(path.resolve(io.cwd, file));
    if (read.isErr()) return fail(io, read.error);
    const { events, torn } = read.value;
    if (torn) {
      io.stderr(`${paint(io, "yellow", "warning")}: line ${torn.line} of ${printable(file)} was torn by an interrupted write (${torn.bytes} bytes); it is left out\n`);
    }
    if (otlp !== undefined) {
      try {
        const { shipEvents } = await loadOtlp();
        const serviceName = io.env["OTEL_SERVICE_NAME"] || "keel";
        const sent = await shipEvents(events, { url: otlp, serviceName, timeoutMs: 10_000 });
        io.stderr(`sent ${sent.spans} spans (${sent.turns} turns, ${sent.events} events) to ${printable(sent.url)}\n`);
      } catch (error) {
        return fail(io, KeelError.is(error) ? error : toKeelError(error, "unavailable", "cannot send the spans"));
      }
    }
    const analysis = analyzeEvents(events);
    if (analysis.isErr()) return fail(io, analysis.error);
    const work = analyzeWorkSessions(events);
    if (work.isErr()) return fail(io, work.error);
    // The headline the HTML page opens with: what the comparison shows, computed from the data.
    const headline = reportHeadline(analysis.value);
    if (headline.isErr()) return fail(io, headline.error);
    if (args.values["json"] === true) {
      io.stdout(`${JSON.stringify({ file: path.resolve(io.cwd, file), torn: torn ?? null, headline: headline.value, analysis: analysis.value, workSessions: work.value }, null, 2)}\n`);
    } else {
      const text = renderReport(analysis.value, { format: "text", color: io.color });
      if (text.isErr()) return fail(io, text.error);
      io.stdout(`${headline.value}\n\n`);
      io.stdout(text.value.endsWith("\n") ? text.value : `${text.value}\n`);
      io.stdout(`\n${renderWorkSessionReport(work.value)}`);
    }
    if (typeof html === "string") {
      const page = renderReport(analysis.value, { format: "html" });
      if (page.isErr()) return fail(io, page.error);
      const target = path.resolve(io.cwd, html);
      const written = await writeText(target, page.value);
      if (written.isErr()) return fail(io, written.error);
      io.stderr(`wrote ${printable(target)}\n`);
    }
    return 0;
  },
};

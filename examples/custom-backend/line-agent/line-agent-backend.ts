/**
 * A third-party CLI adapter in one folder, built on `@keel/backends/kit`: everything Keel must
 * know about the CLI lives here — its flags, its event parser (text, thread id, tool calls), its
 * usage dialect, its skill delivery and its `adapterInfo` for `keel doctor`. Inside
 * `@keel/backends` this folder would be `src/line-agent/` plus one `exports` entry
 * (`"./line-agent"`); nothing else changes (docs/backends.md, "Adding an adapter").
 */
import type { Backend, BackendCapabilities } from "@keel/backend";
import type { KeelError, Usage } from "@keel/core";
import {
  asRecord,
  asString,
  captureThreadId,
  createCliBackend,
  createJsonLineParser,
  createUsageFieldReader,
  idField,
  invocation,
  promptArgument,
  readUsageFields,
  recordToolCall,
  setTurnUsage,
  withoutPart,
  type CliAdapterInfo,
  type CliBackendOptions,
  type StreamParser,
} from "@keel/backends/kit";
import type { Result } from "neverthrow";

const CAPABILITIES = Object.freeze({ resume: true, skills: "prompt", usage: "full" }) satisfies BackendCapabilities;

/** What `keel doctor` (or `detectBackends({ adapters: [adapterInfo] })`) shows for this adapter. */
export const adapterInfo: CliAdapterInfo = {
  id: "line-agent",
  kind: "cli",
  command: "line-agent",
  capabilities: CAPABILITIES,
  provenAgainst: "recordings",
  versions: null,
};

/** The usage dialect: `in` includes `cached`; no cost. */
export function normalizeLineAgentUsage(raw: unknown): Result<Usage, KeelError> {
  const usage = asRecord(raw) ?? {};
  const fields = createUsageFieldReader("line-agent");
  return readUsageFields({ input: fields.count(usage, "in"), cached: fields.count(usage, "cached"), output: fields.count(usage, "out") }).map(
    (read) => ({ inputUncached: withoutPart(read.input, read.cached), cacheRead: read.cached, cacheWrite: null, output: read.output, reasoning: null, costUsd: null }),
  );
}

/** The event parser: `start` (thread id), `tool` (a tool call), `say` (text), `done` (usage, terminal), `failed` (in-band error). */
export function createLineAgentParser(): StreamParser {
  return createJsonLineParser((event, findings) => {
    switch (event.type) {
      case "start":
        captureThreadId(findings, idField(event, "session"));
        return;
      case "tool": {
        const path = asString(event.path);
        const bytes = typeof event.bytes === "number" ? event.bytes : undefined;
        recordToolCall(findings, asString(event.name) ?? "tool", path && event.name === "read" ? [{ op: "read", path, ...(bytes === undefined ? {} : { bytes }) }] : []);
        return;
      }
      case "say":
        findings.text = `${findings.text ?? ""}${asString(event.text) ?? ""}`;
        return;
      case "done":
        findings.terminal = true;
        setTurnUsage(findings, normalizeLineAgentUsage(event.usage));
        return;
      case "failed":
        findings.terminal = true;
        findings.inBandError = asString(event.message) ?? "failed";
        return;
      default:
        return;
    }
  });
}

/** The backend: `line-agent [--resume <id>] <prompt>`, run in `cwd`; an unknown session is "unknown session", exit 2. */
export function createLineAgentBackend(options: CliBackendOptions = {}): Backend {
  return createCliBackend(
    {
      id: adapterInfo.id,
      capabilities: CAPABILITIES,
      defaultCommand: "line-agent",
      buildInvocation: ({ request, resumeThreadId }) =>
        invocation([...(resumeThreadId ? ["--resume", resumeThreadId] : []), ...(options.extraArgs ?? []), promptArgument(request.prompt)]),
      createParser: () => createLineAgentParser(),
      outcome: { resumeFailure: /unknown session/i, requireThreadId: true },
    },
    options,
  );
}

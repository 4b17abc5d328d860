import { createJsonLineParser, type StreamParser } from "../kit/index.js";
import { addStepUsage, asRecord, asString, idField } from "../kit/index.js";
import { normalizeCopilotUsage } from "./copilot-usage.js";

/** Copilot CLI (≥ 1.0.49) says a session is gone with "No session, task, or name matched '<id>'." and exit code 1. */
export const COPILOT_RESUME_FAILURE = /no session, task, or name matched|session .*not found/i;

/**
 * Parser of `copilot -p … --output-format json` (observed, not officially documented): the last
 * `assistant.message` is the answer and each carries `outputTokens` (summed; Copilot reports no
 * input tokens); the terminal `result` event carries `sessionId` and `exitCode` (non-zero is an
 * in-band error). The thread id is known from the start when the adapter assigned it
 * (`--session-id`); the `result`'s `sessionId` is authoritative.
 */
export function createCopilotParser(assignedThreadId: string | null = null): StreamParser {
  const parser = createJsonLineParser((event, findings) => {
    if (event.type === "assistant.message") {
      const data = asRecord(event.data);
      const content = asString(data?.content);
      if (content !== undefined) findings.text = content;
      addStepUsage(findings, normalizeCopilotUsage(data));
      return;
    }
    if (event.type !== "result") return;
    findings.terminal = true;
    findings.threadId = idField(event, "sessionId") ?? findings.threadId;
    const exitCode = event.exitCode;
    if (typeof exitCode === "number" && exitCode !== 0) findings.inBandError = `copilot reported exit code ${exitCode}`;
  });
  parser.findings().threadId = assignedThreadId;
  return parser;
}

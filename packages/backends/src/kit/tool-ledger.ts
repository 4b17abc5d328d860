import { recordToolCall, type ToolFileAccess } from "./tool-calls.js";
import type { StreamFindings } from "./turn-outcome.js";

/** Options of {@link createToolLedger}. */
export interface ToolLedgerOptions {
  /** Count each call id once, however often the stream shows it (a call can appear in two events). Default false. */
  countOnce?: boolean;
  /** The tools whose result gives the bytes of the read they made. Default: every tool. */
  readBytesFrom?: (tool: string) => boolean;
}

/**
 * The tool calls of one stream by id: each recorded with {@link recordToolCall}, and the read a
 * call made remembered, so that the call's result, which comes in a later event, can give the
 * bytes read.
 */
export interface ToolLedger {
  /** Records one tool call (nothing, with `countOnce`, for an id seen before). */
  record(findings: StreamFindings, id: string | undefined, tool: string, accesses: readonly ToolFileAccess[]): void;
  /** Gives the read that call `id` made its `bytes`, once; nothing when either is unknown. */
  fillReadBytes(findings: StreamFindings, id: string | undefined, bytes: number | undefined): void;
}

/** A {@link ToolLedger} for one stream. */
export function createToolLedger(options: ToolLedgerOptions = {}): ToolLedger {
  const seen = new Set<string>();
  /** Index in `findings.fileAccess` of the read each call id made. */
  const reads = new Map<string, number>();
  return {
    record(findings, id, tool, accesses) {
      if (id !== undefined && options.countOnce === true) {
        if (seen.has(id)) return;
        seen.add(id);
      }
      const before = findings.fileAccess.length;
      recordToolCall(findings, tool, accesses);
      if (id === undefined || (options.readBytesFrom && !options.readBytesFrom(tool))) return;
      const readIndex = findings.fileAccess.findIndex((access, index) => index >= before && access.op === "read");
      if (readIndex >= 0) reads.set(id, readIndex);
    },
    fillReadBytes(findings, id, bytes) {
      if (id === undefined || bytes === undefined) return;
      const index = reads.get(id);
      const access = index === undefined ? undefined : findings.fileAccess[index];
      if (access && access.bytes === undefined) access.bytes = bytes;
    },
  };
}

import type { BackendFileAccess, BackendFileOperation } from "@keel/backend";
import { isRecord } from "./message-parts.js";

/** How one tool touches files (see `AiSdkBackendOptions.toolFileAccess`). */
export interface ToolFileAccessRule {
  op: BackendFileOperation;
  pathArgument: string;
  contentArgument?: string;
}

/** A tool call and its result as the AI SDK's steps list them (loosely read). */
interface StepLike {
  toolCalls?: readonly unknown[];
  toolResults?: readonly unknown[];
}

function bytesOf(value: unknown): number | undefined {
  return typeof value === "string" ? Buffer.byteLength(value, "utf8") : undefined;
}

/**
 * The file access of one tool call (`{ toolName, input }`), when `rules` names its tool and its
 * input holds a path; `output` is the call's result, for a read's bytes.
 */
export function callAccesses(call: unknown, rules: Readonly<Record<string, ToolFileAccessRule>>, output: unknown): BackendFileAccess[] {
  if (!isRecord(call) || typeof call.toolName !== "string" || !Object.hasOwn(rules, call.toolName)) return [];
  const rule = rules[call.toolName] as ToolFileAccessRule;
  const input = isRecord(call.input) ? call.input : {};
  const named = input[rule.pathArgument];
  const path = typeof named === "string" && named !== "" ? named : rule.op === "search" ? "." : undefined;
  if (path === undefined) return [];
  const bytes = rule.op === "read" ? bytesOf(output) : rule.op === "write" && rule.contentArgument !== undefined ? bytesOf(input[rule.contentArgument]) : undefined;
  return [{ op: rule.op, path, ...(bytes === undefined ? {} : { bytes }), tool: call.toolName }];
}

/**
 * The file accesses of a turn's tool calls, in call order: a call of a tool named in `rules`
 * whose input holds a string at the rule's `pathArgument` (a search without one stands for `.`).
 * A read's bytes are those of its string output, a write's those of its `contentArgument`.
 */
export function fileAccessOf(steps: readonly StepLike[], rules: Readonly<Record<string, ToolFileAccessRule>>): BackendFileAccess[] {
  const accesses: BackendFileAccess[] = [];
  for (const step of steps) {
    const outputs = new Map<string, unknown>();
    for (const result of step.toolResults ?? []) {
      if (isRecord(result) && typeof result.toolCallId === "string") outputs.set(result.toolCallId, result.output);
    }
    for (const call of step.toolCalls ?? []) {
      const output = isRecord(call) && typeof call.toolCallId === "string" ? outputs.get(call.toolCallId) : undefined;
      accesses.push(...callAccesses(call, rules, output));
    }
  }
  return accesses;
}

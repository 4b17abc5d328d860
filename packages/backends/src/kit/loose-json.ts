import { addUsage, type KeelError, type Usage } from "@keel/core";
import type { Result } from "neverthrow";
import type { StreamFindings } from "./turn-outcome.js";

/** A JSON object read loosely: any field may be missing or of another type. */
export type Loose = Readonly<Record<string, unknown>>;

/** `value` as an object, or `undefined` (arrays and `null` are not objects here). */
export function asRecord(value: unknown): Loose | undefined {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Loose) : undefined;
}

/** `value` as an array, or an empty one. */
export function asArray(value: unknown): readonly unknown[] {
  return Array.isArray(value) ? value : [];
}

/** `value` as a string, or `undefined`. */
export function asString(value: unknown): string | undefined {
  return typeof value === "string" ? value : undefined;
}

/** `value` as a finite number, or `undefined`. */
export function asNumber(value: unknown): number | undefined {
  return typeof value === "number" && Number.isFinite(value) ? value : undefined;
}

/** A non-empty string field, e.g. a thread id. */
export function idField(record: Loose | undefined, key: string): string | undefined {
  const value = record?.[key];
  return typeof value === "string" && value.trim() !== "" ? value : undefined;
}

/** Records the thread id unless one was already seen (the first event that carries it wins). */
export function captureThreadId(findings: StreamFindings, id: string | undefined): void {
  if (id !== undefined && findings.threadId === null) findings.threadId = id;
}

/** Text blocks of an Anthropic-style message `content` (string or array of blocks), joined. */
export function textOfContent(content: unknown): string | undefined {
  if (typeof content === "string") return content;
  const texts = asArray(content)
    .map((block) => asRecord(block))
    .filter((block) => block !== undefined && block.type === "text" && typeof block.text === "string")
    .map((block) => block!.text as string);
  return texts.length > 0 ? texts.join("") : undefined;
}

/** Adds one step's usage to the findings (per-step backends), or marks the stream corrupt. */
export function addStepUsage(findings: StreamFindings, usage: Result<Usage, KeelError>): void {
  if (usage.isErr()) findings.corruptReason ??= usage.error.message;
  else findings.usage = addUsage(findings.usage, usage.value);
}

/** Replaces the findings' usage with one whole-turn report, or marks the stream corrupt. */
export function setTurnUsage(findings: StreamFindings, usage: Result<Usage, KeelError>): void {
  if (usage.isErr()) findings.corruptReason ??= usage.error.message;
  else findings.usage = usage.value;
}

/** An error message from the many shapes CLIs use (`"text"`, `{message}`, `{data:{message}}`, `{error:{message}}`). */
export function errorMessage(value: unknown): string | undefined {
  if (typeof value === "string" && value.trim() !== "") return value;
  const record = asRecord(value);
  if (!record) return undefined;
  return (
    asString(record.message) ??
    errorMessage(record.data) ??
    errorMessage(record.error) ??
    (typeof record.name === "string" ? record.name : undefined)
  );
}

import type { FakeErrorReply, FakeProviderFormat, FakeTurnReply } from "../provider-script.js";

/** One HTTP answer, written by the server: a JSON body, or SSE frames written in order. */
export type WireAnswer =
  | { kind: "json"; status: number; headers?: Record<string, string>; body: unknown }
  | { kind: "sse"; frames: string[] };

/** What a format needs to know about the request it answers. */
export interface WireContext {
  /** The model the request named (or the format's placeholder). */
  model: string;
  /** Whether the answer is streamed. */
  stream: boolean;
  /** Request number on this server (ids are made from it). */
  sequence: number;
  /** The request path (Gemini's stream without `alt=sse` answers a JSON array). */
  sse: boolean;
}

/** One wire format: how to recognise its requests and how to answer them. */
export interface WireFormat {
  readonly format: FakeProviderFormat;
  /** Whether a POST to `path` is this format's generate endpoint. */
  matches(path: string): boolean;
  /** Whether the request asks for a streamed answer. */
  streaming(path: string, query: URLSearchParams, body: Record<string, unknown>): boolean;
  /** The model the request names, if any. */
  model(path: string, body: Record<string, unknown>): string | null;
  /** Whether the request declares tools. */
  hasTools(body: Record<string, unknown>): boolean;
  /** The answer to a scripted turn. */
  answer(reply: FakeTurnReply, context: WireContext): WireAnswer;
  /** The answer to a scripted error, in the format's error body. */
  error(reply: FakeErrorReply): WireAnswer;
}

/** One SSE frame; `event` names it (Anthropic and Responses name theirs, the others do not). */
export function sseFrame(data: unknown, event?: string): string {
  const payload = typeof data === "string" ? data : JSON.stringify(data);
  return `${event ? `event: ${event}\n` : ""}data: ${payload}\n\n`;
}

/** The call id of tool call `index` in request `sequence`. */
export function toolCallId(prefix: string, sequence: number, index: number, id: string | undefined): string {
  return id ?? `${prefix}${sequence}_${index}`;
}

/** The message of a scripted error. */
export function errorMessage(reply: FakeErrorReply): string {
  return reply.error.message ?? `fake provider error ${reply.error.status}`;
}

/** `retry-after` header of a scripted error, if any. */
export function errorHeaders(reply: FakeErrorReply): Record<string, string> {
  return reply.error.retryAfterSeconds === undefined ? {} : { "retry-after": String(reply.error.retryAfterSeconds) };
}

/** True when `value` is a non-empty array. */
export function nonEmptyArray(value: unknown): boolean {
  return Array.isArray(value) && value.length > 0;
}

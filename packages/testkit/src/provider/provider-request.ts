import type { IncomingHttpHeaders } from "node:http";
import type { FakeProviderFormat, FakeReply } from "./provider-script.js";

/** One HTTP request the fake provider received (model calls and everything else). */
export interface FakeProviderRequest {
  /** 0-based arrival order on this provider. */
  index: number;
  /** Arrival time (epoch ms). */
  at: number;
  /** HTTP method. */
  method: string;
  /** Path without the query string. */
  path: string;
  /** Query parameters. */
  query: Record<string, string>;
  /** Request headers (lower-case names). */
  headers: IncomingHttpHeaders;
  /** The wire format of a model call, or `null` for anything else (a probe, a model list, a 404). */
  format: FakeProviderFormat | null;
  /** The model a model call named. */
  model: string | null;
  /** Whether a model call asked for a streamed answer. */
  stream: boolean;
  /** Whether a model call declared tools (a tool-less call is e.g. OpenCode's title call). */
  hasTools: boolean;
  /** The JSON body, or the raw text when it was not JSON (`null` when empty). */
  body: unknown;
  /**
   * Every string in the conversation part of the body (messages, input, contents, system
   * prompt; not the tool declarations), one per line: what a test searches to prove that a
   * resumed turn sent the earlier messages or that a tool's result reached the model.
   */
  text: string;
  /** What a model call was answered with; `null` for other requests. */
  reply: FakeReply | null;
}

/**
 * A request the fake provider could not answer as scripted. A test asserts
 * `provider.failures` is empty: each entry is a bug in the script or in the client.
 *
 * - `unknown_route` — no wire format serves this method and path (answered 404).
 * - `unscripted` — a model call arrived with no reply left (answered 500).
 * - `bad_script` — the `respond` function threw or returned an invalid reply (answered 500).
 * - `bad_request` — a model call whose body was not a JSON object (answered 400).
 * - `outside_host` — a proxy request (CONNECT or absolute URI) for a host other than this
 *   server (refused with 403: nothing left the machine).
 */
export interface FakeProviderFailure {
  /** What went wrong. */
  kind: "unknown_route" | "unscripted" | "bad_script" | "bad_request" | "outside_host";
  /** HTTP method (`CONNECT` for a tunnel). */
  method: string;
  /** The path, or `host:port` / the absolute URL of a proxy request. */
  target: string;
  /** A readable description. */
  message: string;
  /** When (epoch ms). */
  at: number;
}

const CONVERSATION_FIELDS = ["system", "instructions", "messages", "input", "contents", "systemInstruction", "prompt"];

function collectStrings(value: unknown, into: string[]): void {
  if (typeof value === "string") into.push(value);
  else if (Array.isArray(value)) for (const item of value) collectStrings(item, into);
  else if (typeof value === "object" && value !== null) for (const item of Object.values(value)) collectStrings(item, into);
}

/** The searchable conversation text of a request body (see {@link FakeProviderRequest.text}). */
export function conversationText(body: unknown): string {
  if (typeof body !== "object" || body === null || Array.isArray(body)) return typeof body === "string" ? body : "";
  const strings: string[] = [];
  for (const field of CONVERSATION_FIELDS) collectStrings((body as Record<string, unknown>)[field], strings);
  return strings.join("\n");
}

import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { keelError, validate, validateOrThrow, type KeelError } from "@keel/core";
import { ResultAsync } from "neverthrow";
import { z } from "zod";
import { anthropicMessages } from "./internal/wire-anthropic.js";
import type { WireAnswer, WireFormat } from "./internal/wire-format.js";
import { gemini } from "./internal/wire-gemini.js";
import { openAiChat } from "./internal/wire-openai-chat.js";
import { openAiResponses } from "./internal/wire-openai-responses.js";
import { conversationText, type FakeProviderFailure, type FakeProviderRequest } from "./provider-request.js";
import { FakeReplySchema, type FakeReply } from "./provider-script.js";

/** Options of {@link startFakeProvider}. */
export interface FakeProviderOptions {
  /** Replies for the model calls, consumed in arrival order (more with {@link FakeProvider.enqueue}). */
  replies?: readonly FakeReply[];
  /**
   * Asked first for every model call: a reply, or `undefined` to take the next queued one. Use it
   * to answer by content (e.g. a tool-less title call, a classifier call) instead of by order.
   */
  respond?: (request: FakeProviderRequest) => FakeReply | undefined;
  /** Model ids listed by `GET …/models` (default `["fake-model"]`). */
  models?: readonly string[];
}

/** A running fake model server; see {@link startFakeProvider}. */
export interface FakeProvider {
  /** `http://127.0.0.1:<port>`: the base URL for Anthropic (`ANTHROPIC_BASE_URL`) and Gemini (`GOOGLE_GEMINI_BASE_URL`). */
  readonly url: string;
  /** `http://127.0.0.1:<port>/v1`: the base URL for OpenAI-style clients (Chat Completions, Responses). */
  readonly openAiUrl: string;
  /** The same server as an HTTP(S) proxy that refuses every outside host (`HTTP_PROXY`, `HTTPS_PROXY`). */
  readonly proxyUrl: string;
  /** Every request received, in arrival order (live: grows while the server runs). */
  readonly requests: readonly FakeProviderRequest[];
  /** Every request the server could not answer as scripted, and every refused outside connection. */
  readonly failures: readonly FakeProviderFailure[];
  /** The requests that were model calls (those with a `format`). */
  modelRequests(): FakeProviderRequest[];
  /** Queues more replies. Throws `invalid_input` (a `KeelError`) on an invalid reply. */
  enqueue(...replies: FakeReply[]): void;
  /** Number of queued replies not yet used. */
  pendingReplies(): number;
  /**
   * Environment that routes a client's outside traffic to the refusing proxy while loopback goes
   * direct: `HTTP_PROXY`, `HTTPS_PROXY`, `ALL_PROXY` (both cases) and `NO_PROXY=127.0.0.1,localhost,::1`.
   */
  proxyEnv(): Record<string, string>;
  /** Connections open right now. */
  openConnections(): number;
  /** Stops the server, dropping open connections (hung replies included). Idempotent. */
  close(): Promise<void>;
}

const OptionsSchema = z.strictObject({
  replies: z.array(FakeReplySchema).optional(),
  respond: z.custom<(request: FakeProviderRequest) => FakeReply | undefined>((value) => typeof value === "function", { message: "must be a function" }).optional(),
  models: z.array(z.string().min(1)).min(1).optional(),
});

const FORMATS: readonly WireFormat[] = [anthropicMessages, openAiChat, openAiResponses, gemini];
const MAX_BODY_BYTES = 64 * 1024 * 1024;

function readBody(incoming: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    incoming.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_BODY_BYTES) chunks.push(chunk);
    });
    incoming.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    incoming.on("error", reject);
  });
}

function parseJson(raw: string): unknown {
  if (raw === "") return null;
  try {
    return JSON.parse(raw) as unknown;
  } catch {
    return raw;
  }
}

function writeAnswer(response: ServerResponse, answer: WireAnswer): void {
  if (response.destroyed) return;
  if (answer.kind === "json") {
    response.writeHead(answer.status, { "content-type": "application/json", ...answer.headers });
    response.end(JSON.stringify(answer.body));
    return;
  }
  response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  for (const frame of answer.frames) response.write(frame);
  response.end();
}

function writeJson(response: ServerResponse, status: number, body: unknown): void {
  writeAnswer(response, { kind: "json", status, body });
}

/**
 * Starts a fake model provider on `127.0.0.1` (a free port): a `node:http` server, no
 * dependency, that speaks Anthropic Messages, OpenAI Chat Completions, OpenAI Responses and
 * Gemini `generateContent`/`streamGenerateContent`, streamed (SSE) and not, so real coding-agent
 * CLIs and a host's own agent loop can be tested offline.
 *
 * Each model call takes the reply `respond` gives, else the next queued one: text, tool calls,
 * usage with cache and reasoning buckets, an error with a status, a delay, or a hang. Every
 * request is recorded (`requests`, with the conversation text) so a test can assert what a
 * resumed turn really sent. A probe of `/` and the model lists are answered; token counting is
 * estimated; anything else is a loud 404 recorded in `failures`. The same port is an HTTP(S)
 * proxy that refuses (403) and records every connection to another host, so a client run with
 * {@link FakeProvider.proxyEnv} proves nothing left the machine.
 *
 * Bad options throw `invalid_input`; a server that cannot listen is `unavailable`.
 *
 * @example
 * ```ts
 * const provider = (await startFakeProvider({ replies: [
 *   { toolCalls: [{ name: "bash", arguments: { command: "ls" } }] },
 *   { text: "done", usage: { inputUncached: 120, cacheRead: 30, output: 9 } },
 * ] }))._unsafeUnwrap();
 * // point the client at provider.openAiUrl, run it, then:
 * expect(provider.failures).toEqual([]);
 * expect(provider.modelRequests()[1]?.text).toContain("README.md"); // the tool's result came back
 * await provider.close();
 * ```
 */
export function startFakeProvider(options: FakeProviderOptions = {}): ResultAsync<FakeProvider, KeelError> {
  const checked = validateOrThrow(OptionsSchema, options, "fake provider options");
  const queue: FakeReply[] = [...(checked.replies ?? [])] as FakeReply[];
  const models = checked.models ?? ["fake-model"];
  const requests: FakeProviderRequest[] = [];
  const failures: FakeProviderFailure[] = [];
  const sockets = new Set<Socket>();
  let origin = "";
  let sequence = 0;

  const fail = (failure: Omit<FakeProviderFailure, "at">): void => {
    failures.push({ ...failure, at: Date.now() });
  };

  const record = (incoming: IncomingMessage, url: URL, body: unknown, format: WireFormat | null): FakeProviderRequest => {
    const object = typeof body === "object" && body !== null && !Array.isArray(body) ? (body as Record<string, unknown>) : {};
    const request: FakeProviderRequest = {
      index: requests.length,
      at: Date.now(),
      method: incoming.method ?? "GET",
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      headers: incoming.headers,
      format: format?.format ?? null,
      model: format ? format.model(url.pathname, object) : null,
      stream: format ? format.streaming(url.pathname, url.searchParams, object) : false,
      hasTools: format ? format.hasTools(object) : false,
      body,
      text: conversationText(body),
      reply: null,
    };
    requests.push(request);
    return request;
  };

  const chooseReply = (request: FakeProviderRequest): FakeReply | FakeProviderFailure["kind"] => {
    let chosen: unknown;
    try {
      chosen = checked.respond?.(request);
    } catch (error) {
      fail({ kind: "bad_script", method: request.method, target: request.path, message: `respond threw: ${String(error)}` });
      return "bad_script";
    }
    if (chosen === undefined) chosen = queue.shift();
    if (chosen === undefined) {
      fail({ kind: "unscripted", method: request.method, target: request.path, message: `no reply scripted for model call #${request.index} (${request.format})` });
      return "unscripted";
    }
    const valid = validate(FakeReplySchema, chosen, "fake provider reply");
    if (valid.isErr()) {
      fail({ kind: "bad_script", method: request.method, target: request.path, message: valid.error.message });
      return "bad_script";
    }
    return valid.value as FakeReply;
  };

  const serveModelCall = (format: WireFormat, incoming: IncomingMessage, response: ServerResponse, url: URL, body: unknown): void => {
    const request = record(incoming, url, body, format);
    if (typeof body !== "object" || body === null || Array.isArray(body)) {
      fail({ kind: "bad_request", method: request.method, target: request.path, message: "a model call's body must be a JSON object" });
      writeJson(response, 400, { error: { message: "fake provider: the body must be a JSON object", type: "invalid_request_error" } });
      return;
    }
    const reply = chooseReply(request);
    if (typeof reply === "string") {
      writeJson(response, 500, { error: { message: `fake provider: ${reply} request (see provider.failures)`, type: "server_error" } });
      return;
    }
    request.reply = reply;
    if ("hang" in reply) return;
    const context = { model: request.model ?? "fake-model", stream: request.stream, sequence: sequence++, sse: url.searchParams.get("alt") === "sse" };
    const answer = "error" in reply ? format.error(reply) : format.answer(reply, context);
    const delay = reply.delayMs ?? 0;
    if (delay > 0) setTimeout(() => writeAnswer(response, answer), delay);
    else writeAnswer(response, answer);
  };

  const serveOther = (incoming: IncomingMessage, response: ServerResponse, url: URL, body: unknown): void => {
    const method = incoming.method ?? "GET";
    const path = url.pathname;
    record(incoming, url, body, null);
    if ((method === "HEAD" || method === "GET") && path === "/") {
      response.writeHead(200, { "content-type": "text/plain" });
      response.end(method === "HEAD" ? undefined : "fake provider");
      return;
    }
    if (method === "GET" && /(^|\/)models$/.test(path)) {
      const created = 1_700_000_000;
      const data = models.map((id) => ({ id, object: "model", type: "model", display_name: id, created, created_at: "2026-01-01T00:00:00Z", owned_by: "fake" }));
      const gemini = models.map((id) => ({ name: `models/${id}`, displayName: id, supportedGenerationMethods: ["generateContent", "streamGenerateContent"] }));
      writeJson(response, 200, { object: "list", data, has_more: false, first_id: models[0], last_id: models.at(-1), models: gemini });
      return;
    }
    const text = conversationText(body);
    if (method === "POST" && /(^|\/)v1\/messages\/count_tokens$/.test(path)) {
      writeJson(response, 200, { input_tokens: Math.ceil(Buffer.byteLength(text) / 4) });
      return;
    }
    if (method === "POST" && /:countTokens$/.test(path)) {
      writeJson(response, 200, { totalTokens: Math.ceil(Buffer.byteLength(text) / 4) });
      return;
    }
    fail({ kind: "unknown_route", method, target: path, message: `no route for ${method} ${path}` });
    writeJson(response, 404, { error: { message: `fake provider: no route for ${method} ${path}`, type: "not_found_error" } });
  };

  const server = createServer((incoming, response) => {
    const raw = incoming.url ?? "/";
    const absolute = /^[a-z]+:\/\//i.test(raw);
    const url = new URL(raw, origin);
    if (absolute && url.host !== new URL(origin).host && url.host !== `localhost:${new URL(origin).port}`) {
      fail({ kind: "outside_host", method: incoming.method ?? "GET", target: raw, message: `refused a proxied request to outside host ${url.host}` });
      incoming.resume();
      writeJson(response, 403, { error: { message: `fake provider proxy: outside host ${url.host} refused (tests run offline)` } });
      return;
    }
    void readBody(incoming).then(
      (text) => {
        const body = parseJson(text);
        const format = incoming.method === "POST" ? FORMATS.find((candidate) => candidate.matches(url.pathname)) : undefined;
        if (format) serveModelCall(format, incoming, response, url, body);
        else serveOther(incoming, response, url, body);
      },
      () => response.destroy(),
    );
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  server.on("connect", (incoming: IncomingMessage, socket: Socket) => {
    const target = incoming.url ?? "";
    fail({ kind: "outside_host", method: "CONNECT", target, message: `refused a CONNECT tunnel to ${target}` });
    socket.on("error", () => undefined);
    socket.end("HTTP/1.1 403 Forbidden\r\ncontent-type: text/plain\r\nconnection: close\r\n\r\nfake provider proxy: outside hosts are refused\n");
  });
  server.on("clientError", (_error, socket) => socket.destroy());

  let closing: Promise<void> | undefined;
  const provider: FakeProvider = {
    get url() {
      return origin;
    },
    get openAiUrl() {
      return `${origin}/v1`;
    },
    get proxyUrl() {
      return origin;
    },
    requests,
    failures,
    modelRequests: () => requests.filter((request) => request.format !== null),
    enqueue: (...replies) => {
      for (const reply of replies) queue.push(validateOrThrow(FakeReplySchema, reply, "fake provider reply") as FakeReply);
    },
    pendingReplies: () => queue.length,
    proxyEnv: () => ({
      HTTP_PROXY: origin,
      HTTPS_PROXY: origin,
      ALL_PROXY: origin,
      http_proxy: origin,
      https_proxy: origin,
      all_proxy: origin,
      NO_PROXY: "127.0.0.1,localhost,::1",
      no_proxy: "127.0.0.1,localhost,::1",
    }),
    openConnections: () => sockets.size,
    close: () => {
      closing ??= new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        sockets.clear();
        server.close(() => resolve());
      });
      return closing;
    },
  };

  const listening = new Promise<FakeProvider>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      server.off("error", reject);
      origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      resolve(provider);
    });
  });
  return ResultAsync.fromPromise(listening, (error) =>
    keelError("unavailable", `fake provider could not listen on 127.0.0.1: ${String(error)}`, { cause: error }),
  );
}

// Test helper (not shipped): a local OpenAI-compatible chat-completions server, so real CLIs (pi)
// and the DeepSeek adapter can be exercised end to end without a network.
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";

/** What the server answers one request with. */
export type FakeReply =
  | { text: string; usage?: Record<string, unknown> }
  | { status: number; body: unknown }
  | { hang: true }
  | { raw: string; contentType?: string };

/** One request the server received. */
export interface FakeRequest {
  path: string;
  headers: IncomingMessage["headers"];
  body: Record<string, unknown>;
}

export interface FakeOpenAiServer {
  /** Base URL ending in `/v1`. */
  url: string;
  requests: FakeRequest[];
  /** Number of connections currently open. */
  openConnections(): number;
  close(): Promise<void>;
}

const DEFAULT_USAGE = { prompt_tokens: 100, completion_tokens: 7, total_tokens: 107, prompt_tokens_details: { cached_tokens: 20 } };

function stream(response: ServerResponse, text: string, usage: Record<string, unknown>): void {
  response.writeHead(200, { "content-type": "text/event-stream" });
  const chunk = (value: unknown) => response.write(`data: ${JSON.stringify(value)}\n\n`);
  const base = { id: "chatcmpl-fake", object: "chat.completion.chunk", created: 1, model: "fake-model" };
  chunk({ ...base, choices: [{ index: 0, delta: { role: "assistant", content: text }, finish_reason: null }] });
  chunk({ ...base, choices: [{ index: 0, delta: {}, finish_reason: "stop" }] });
  chunk({ ...base, choices: [], usage });
  response.end("data: [DONE]\n\n");
}

export async function startFakeOpenAiServer(respond: (request: FakeRequest) => FakeReply): Promise<FakeOpenAiServer> {
  const requests: FakeRequest[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((incoming, response) => {
    let raw = "";
    incoming.setEncoding("utf8");
    incoming.on("data", (chunk: string) => (raw += chunk));
    incoming.on("end", () => {
      const request: FakeRequest = { path: incoming.url ?? "", headers: incoming.headers, body: raw ? (JSON.parse(raw) as Record<string, unknown>) : {} };
      requests.push(request);
      const reply = respond(request);
      if ("hang" in reply) return;
      if ("raw" in reply) {
        response.writeHead(200, { "content-type": reply.contentType ?? "application/json" });
        response.end(reply.raw);
        return;
      }
      if ("status" in reply) {
        response.writeHead(reply.status, { "content-type": "application/json" });
        response.end(JSON.stringify(reply.body));
        return;
      }
      const usage = reply.usage ?? DEFAULT_USAGE;
      if (request.body.stream === true) {
        stream(response, reply.text, usage);
        return;
      }
      response.writeHead(200, { "content-type": "application/json" });
      response.end(
        JSON.stringify({
          id: "chatcmpl-fake",
          object: "chat.completion",
          created: 1,
          model: request.body.model,
          choices: [{ index: 0, message: { role: "assistant", content: reply.text }, finish_reason: "stop" }],
          usage,
        }),
      );
    });
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    openConnections: () => sockets.size,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

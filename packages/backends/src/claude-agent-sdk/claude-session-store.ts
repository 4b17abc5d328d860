import { createHash, randomUUID } from "node:crypto";
import { digest, isJsonValue, isSafeName, KeelError, validateOrThrow, type JsonValue } from "@keel/core";
import type { ResultAsync } from "neverthrow";
import { z } from "zod";

// A SessionStore of the Claude Agent SDK (its `Options.sessionStore`, @alpha at 0.3.336) kept in a
// Keel store's logs. Described structurally, like the rest of this adapter: neither the SDK nor
// `@keel/store` is a dependency of `@keel/backends`; any Keel store (memory, fs, SQLite,
// PostgreSQL) has the logs this uses.

/** Which transcript of a session (the SDK's `SessionKey`): `subpath` names a subagent's. */
export interface ClaudeSessionKey {
  /** The SDK's scope, by default the sanitized cwd. */
  projectKey: string;
  /** The session id. */
  sessionId: string;
  /** A subagent transcript (`subagents/agent-…`); absent for the main one. */
  subpath?: string;
}

/** One line of a Claude Code session transcript, opaque JSON (the SDK's `SessionStoreEntry`). */
export interface ClaudeSessionEntry {
  /** The entry's kind (`user`, `assistant`, `queue-operation` …). */
  type: string;
  /** Most entries have one: the idempotency key of an append. */
  uuid?: string;
  /** When Claude Code wrote it (ISO 8601). */
  timestamp?: string;
  [key: string]: unknown;
}

/**
 * What {@link createClaudeSessionStore} returns: the SDK's `SessionStore` (pass it as
 * `sessionStore` to `query()`, or to `createClaudeAgentSdkBackend`).
 */
export interface ClaudeSessionStore {
  /** Mirrors a batch of entries: an entry with a `uuid` appended again unchanged is kept once. */
  append(key: ClaudeSessionKey, entries: ClaudeSessionEntry[]): Promise<void>;
  /** The session's entries in append order, or `null` when it was never written (or was deleted). */
  load(key: ClaudeSessionKey): Promise<ClaudeSessionEntry[] | null>;
  /** The project's sessions with the time of their last append (epoch ms). */
  listSessions(projectKey: string): Promise<{ sessionId: string; mtime: number }[]>;
  /** Deletes one transcript; the main transcript's key deletes its subagents' too. */
  delete(key: ClaudeSessionKey): Promise<void>;
  /** The subagent transcripts of a session (their `subpath`s). */
  listSubkeys(key: { projectKey: string; sessionId: string }): Promise<string[]>;
}

/** The part of a Keel store (`KeelStore.logs`) the session store uses; every Keel store has it. */
export interface ClaudeSessionLogs {
  /** Appends records atomically; a record id seen before with the same value is a no-op. */
  append(log: readonly string[], records: readonly { id: string; value: JsonValue }[]): ResultAsync<unknown, KeelError>;
  /** Reads records in order. */
  read(log: readonly string[], options?: { afterSeq?: number; limit?: number }): ResultAsync<readonly { seq: number; value: unknown; at: string }[], KeelError>;
  /** The log's last seq, or `undefined` when there is no live log. */
  head(log: readonly string[]): ResultAsync<{ lastSeq: number } | undefined, KeelError>;
  /** Deletes a log. */
  delete(log: readonly string[]): ResultAsync<boolean, KeelError>;
  /** Keys of the live logs under a prefix. */
  list(prefix: readonly string[]): ResultAsync<string[][], KeelError>;
}

/** Options of {@link createClaudeSessionStore}. */
export interface ClaudeSessionStoreOptions {
  /** Any Keel store (its `logs`): a thread written on one host resumes on any host that opens the same store. */
  store: { logs: ClaudeSessionLogs };
  /** First key segment of every log it writes (default `claude-sessions`), a safe name. */
  namespace?: string;
  /** Records read per page on `load` (default 1000). */
  pageSize?: number;
}

const OptionsSchema = z.strictObject({
  store: z.custom<{ logs: ClaudeSessionLogs }>(
    (value) => {
      const logs = (value as { logs?: Record<string, unknown> } | null | undefined)?.logs;
      return typeof logs === "object" && logs !== null && ["append", "read", "head", "delete", "list"].every((name) => typeof logs[name] === "function");
    },
    { message: "must be a Keel store (with logs)" },
  ),
  namespace: z.string().refine(isSafeName, { message: "must be a safe name" }).optional(),
  pageSize: z.number().int().min(1).max(100_000).optional(),
});

/** A session key as the SDK passes it (read once, into this copy). */
const KeySchema = z.looseObject({ projectKey: z.string(), sessionId: z.string(), subpath: z.string().optional() });
/** A batch of entries: each one a JSON object with a `type` (the SDK's `SessionStoreEntry`), kept as it is (stored as the SDK gave it). */
const EntriesSchema = z.array(
  z.custom<ClaudeSessionEntry>(
    (value) => typeof value === "object" && value !== null && !Array.isArray(value) && typeof (value as { type?: unknown }).type === "string" && isJsonValue(value),
    { message: "an entry must be a JSON object with a type" },
  ),
);
const ProjectKeySchema = z.string();

/** A key segment for an id: `u<id>` when it is plain (lowercase letters, digits, `-`), else `b<base64url>`. */
function idSegment(value: string): string {
  const plain = /^[a-z0-9][a-z0-9-]*$/.test(value) ? `u${value}` : `b${Buffer.from(value, "utf8").toString("base64url")}`;
  if (!isSafeName(plain)) throw new KeelError("invalid_input", `a Claude session id or subpath is too long for a store key (${value.length} characters)`, { details: { value: value.slice(0, 64) } });
  return plain;
}

function fromIdSegment(segment: string): string | undefined {
  if (segment.startsWith("u")) return segment.slice(1);
  if (segment.startsWith("b")) return Buffer.from(segment.slice(1), "base64url").toString("utf8");
  return undefined;
}

/** The project scope as a key segment: a digest (a projectKey is a path, up to 200+ characters). */
function projectSegment(projectKey: string): string {
  return `p${createHash("sha256").update(projectKey, "utf8").digest("hex").slice(0, 40)}`;
}

async function unwrap<T>(result: ResultAsync<T, KeelError>): Promise<T> {
  const settled = await result;
  if (settled.isErr()) throw settled.error;
  return settled.value;
}

/**
 * A Claude Agent SDK `SessionStore` over any Keel store, so a Claude session outlives its machine:
 * pass it as the backend's `sessionStore` (or the SDK's), and a thread started on one host
 * resumes on another that opens the same store (PostgreSQL, SQLite on a shared disk …), even with
 * no local `~/.claude` and from another cwd. Follows the SDK's `sessionStore`, which is **alpha**
 * (proven with `@anthropic-ai/claude-agent-sdk` 0.3.336): Claude Code still writes its local
 * transcript first and mirrors it here.
 *
 * Layout: one log per transcript, keyed by session id (and subagent subpath), not by project: the
 * SDK's project key is the cwd, which differs between hosts, and a session id is a UUID. A
 * project index (one small log per session under the project's digest) answers `listSessions`.
 * An entry with a `uuid` is appended under an id made of the uuid and the entry's digest, so the
 * SDK's retries and `importSessionToStore` replays keep it once; an entry without one is always
 * appended, as the SDK's contract says. Store failures reject with the store's `KeelError` (the
 * SDK retries an append, then reports a `mirror_error` message). A method given a key, entries
 * or a project key of the wrong shape rejects with `invalid_input` (a `KeelError`: the SDK's
 * interface is Promises) before it touches the store.
 *
 * @throws KeelError `invalid_input` at once for bad options.
 *
 * @example
 * ```ts
 * const sessions = createClaudeSessionStore({ store: createPostgresStore({ connectionString }) });
 * const claude = createClaudeAgentSdkBackend({ query, sessionStore: sessions });
 * ```
 */
export function createClaudeSessionStore(options: ClaudeSessionStoreOptions): ClaudeSessionStore {
  const settings = validateOrThrow(OptionsSchema, options, "Claude session store options") as ClaudeSessionStoreOptions;
  const { logs } = settings.store;
  const namespace = settings.namespace ?? "claude-sessions";
  const pageSize = settings.pageSize ?? 1000;
  const indexed = new Set<string>();

  const sessionPrefix = (sessionId: string): string[] => [namespace, "sessions", idSegment(sessionId)];
  const transcriptLog = (key: ClaudeSessionKey): string[] =>
    key.subpath === undefined ? [...sessionPrefix(key.sessionId), "main"] : [...sessionPrefix(key.sessionId), "sub", idSegment(key.subpath)];
  const indexLog = (projectKey: string, sessionId: string): string[] => [namespace, "projects", projectSegment(projectKey), idSegment(sessionId)];

  const lastAppend = async (log: readonly string[]): Promise<number | undefined> => {
    const head = await unwrap(logs.head(log));
    if (head === undefined) return undefined;
    const [last] = await unwrap(logs.read(log, { afterSeq: Math.max(0, head.lastSeq - 1), limit: 1 }));
    const at = last === undefined ? Number.NaN : Date.parse(last.at);
    return Number.isFinite(at) ? Math.floor(at) : 0;
  };

  return {
    async append(givenKey, givenEntries) {
      const key = (validateOrThrow(KeySchema, givenKey, "Claude session key") as ClaudeSessionKey);
      const entries = validateOrThrow(EntriesSchema, givenEntries, "Claude session entries");
      const records: { id: string; value: JsonValue }[] = [];
      const ids = new Set<string>();
      for (const entry of entries) {
        const id = typeof entry.uuid === "string" && entry.uuid !== "" && entry.uuid.length <= 128 ? `u.${entry.uuid}.${digest(entry).slice(7, 39)}` : `n.${randomUUID()}`;
        // The same entry twice in one batch is kept once, as across batches.
        if (ids.has(id)) continue;
        ids.add(id);
        records.push({ id, value: entry as unknown as JsonValue });
      }
      if (records.length > 0) await unwrap(logs.append(transcriptLog(key), records));
      const index = indexLog(key.projectKey, key.sessionId);
      const indexKey = index.join("/");
      if (key.subpath === undefined && !indexed.has(indexKey)) {
        // The same id and value each time: appending it again is a no-op.
        await unwrap(logs.append(index, [{ id: "session", value: { sessionId: key.sessionId } }]));
        indexed.add(indexKey);
      }
    },
    async load(givenKey) {
      const log = transcriptLog((validateOrThrow(KeySchema, givenKey, "Claude session key") as ClaudeSessionKey));
      if ((await unwrap(logs.head(log))) === undefined) return null;
      const entries: ClaudeSessionEntry[] = [];
      let afterSeq = 0;
      for (;;) {
        const page = await unwrap(logs.read(log, { afterSeq, limit: pageSize }));
        for (const record of page) entries.push(record.value as ClaudeSessionEntry);
        if (page.length < pageSize) return entries;
        afterSeq = page[page.length - 1]!.seq;
      }
    },
    async listSessions(givenProjectKey) {
      const projectKey = validateOrThrow(ProjectKeySchema, givenProjectKey, "Claude project key");
      const keys = await unwrap(logs.list([namespace, "projects", projectSegment(projectKey)]));
      const sessions: { sessionId: string; mtime: number }[] = [];
      for (const key of keys) {
        const sessionId = fromIdSegment(key[3] ?? "");
        if (sessionId === undefined) continue;
        const mtime = await lastAppend(transcriptLog({ projectKey, sessionId }));
        if (mtime !== undefined) sessions.push({ sessionId, mtime });
      }
      return sessions;
    },
    async delete(givenKey) {
      const key = (validateOrThrow(KeySchema, givenKey, "Claude session key") as ClaudeSessionKey);
      if (key.subpath === undefined) {
        for (const log of await unwrap(logs.list(sessionPrefix(key.sessionId)))) await unwrap(logs.delete(log));
        await unwrap(logs.delete(indexLog(key.projectKey, key.sessionId)));
        indexed.delete(indexLog(key.projectKey, key.sessionId).join("/"));
      } else {
        await unwrap(logs.delete(transcriptLog(key)));
      }
    },
    async listSubkeys(givenKey) {
      const key = (validateOrThrow(KeySchema, givenKey, "Claude session key") as ClaudeSessionKey);
      const keys = await unwrap(logs.list([...sessionPrefix(key.sessionId), "sub"]));
      return keys.map((log) => fromIdSegment(log[4] ?? "")).filter((subpath): subpath is string => subpath !== undefined);
    },
  };
}

import { KeelError } from "@keel/core";
import { err, ResultAsync, type Result } from "neverthrow";
import type { Pool, PoolClient } from "pg";

/** The qualified table names of one store's schema. */
export interface PostgresTables {
  schema: string;
  meta: string;
  docs: string;
  logs: string;
  records: string;
  leases: string;
}

/** What every part of the PostgreSQL store shares. */
export interface PostgresContext {
  pool: Pool;
  tables: PostgresTables;
  maxValueBytes: number;
  /** The per-transaction timeouts, in ms (0: no limit). */
  timeouts: PostgresTimeouts;
  /** `beginStatement(timeouts)`, made once. */
  begin: string;
  closed: boolean;
  /** Resolves once the schema is known to be current (migrated or checked), or with why not. */
  ready(): Promise<Result<void, KeelError>>;
}

/** The store's per-transaction timeouts in ms (0: no limit), as `createPostgresStore` resolved them. */
export interface PostgresTimeouts {
  lockTimeoutMs: number;
  statementTimeoutMs: number;
  idleInTransactionTimeoutMs: number;
}

/**
 * The statement that opens every transaction of the store: `BEGIN` and the timeouts as `SET
 * LOCAL`, in one simple query (one round trip). `SET LOCAL` ends with the transaction, so no
 * session state is left behind: a transaction-mode pooler may hand the connection to anyone next.
 * The values are validated integers (options schema), so they are written into the text.
 */
export function beginStatement(timeouts: PostgresTimeouts): string {
  return [
    "BEGIN",
    `SET LOCAL lock_timeout = ${timeouts.lockTimeoutMs}`,
    `SET LOCAL statement_timeout = ${timeouts.statementTimeoutMs}`,
    `SET LOCAL idle_in_transaction_session_timeout = ${timeouts.idleInTransactionTimeoutMs}`,
  ].join("; ");
}

/** The database clock in epoch ms: `clock_timestamp()`, which moves within a transaction (`now()` does not). */
export const NOW_MS = "(extract(epoch from clock_timestamp()) * 1000)::bigint";

/** Quotes a validated identifier. */
export const quoteIdentifier = (name: string) => `"${name}"`;

/** The qualified table names of `schema`. */
export function tablesOf(schema: string): PostgresTables {
  const q = quoteIdentifier(schema);
  return { schema, meta: `${q}.keel_schema`, docs: `${q}.keel_docs`, logs: `${q}.keel_logs`, records: `${q}.keel_log_records`, leases: `${q}.keel_leases` };
}

const sqlState = (error: unknown) => String((error as { code?: unknown } | null)?.code ?? "");

/** Errors after which the transaction (or statement) can simply run again: a lost race on a new row, a serialization failure, a deadlock. */
export const isRace = (error: unknown): boolean => ["23505", "40001", "40P01"].includes(sqlState(error));

/**
 * The timeouts' errors: `lock_not_available` (55P03, `lock_timeout`), `query_canceled` (57014,
 * `statement_timeout`, or a cancel request) and `idle_in_transaction_session_timeout` (25P03,
 * the server ended the session), by what each means to the caller.
 */
const TIMED_OUT: Readonly<Record<string, (timeouts: PostgresTimeouts) => string>> = {
  "55P03": (timeouts) => `waited more than lock_timeout (${timeouts.lockTimeoutMs} ms) for a row another transaction holds locked (a stalled or slow host)`,
  "57014": (timeouts) => `a statement was cancelled (statement_timeout is ${timeouts.statementTimeoutMs} ms)`,
  "25P03": (timeouts) => `the server ended this session, idle in its transaction for more than idle_in_transaction_session_timeout (${timeouts.idleInTransactionTimeoutMs} ms)`,
};

/** Errors that mean the connection (or the server) is gone: the transaction was rolled back, the client must be discarded. */
export function isConnectionLoss(error: unknown): boolean {
  const state = sqlState(error);
  // 25P03: the server terminated the session (FATAL) after it sat idle in a transaction too long.
  if (state.startsWith("08") || state === "57P01" || state === "57P02" || state === "57P03" || state === "25P03") return true;
  const message = error instanceof Error ? error.message : "";
  return ["ECONNRESET", "ECONNREFUSED", "EPIPE", "ETIMEDOUT", "ENOTFOUND"].includes(state) || /Connection terminated|connection timeout|Client has encountered a connection error/i.test(message);
}

/** Maps a `pg` error to a `KeelError` (a `KeelError` passes through). */
export function toStoreError(error: unknown, context: PostgresContext, what: string): KeelError {
  if (KeelError.is(error)) return error;
  const message = error instanceof Error ? error.message : String(error);
  const details = { schema: context.tables.schema, sqlState: sqlState(error) };
  const timedOut = TIMED_OUT[sqlState(error)];
  if (timedOut) {
    return new KeelError("unavailable", `${what}: ${timedOut(context.timeouts)}; the transaction was rolled back, nothing was written: retry`, { details, cause: error, retryable: true });
  }
  if (isConnectionLoss(error) || isRace(error) || sqlState(error) === "53300") {
    return new KeelError("unavailable", `${what}: PostgreSQL connection lost or busy (${message}); nothing was committed unless the loss came during COMMIT: retry`, { details, cause: error, retryable: true });
  }
  if (sqlState(error) === "XX001" || sqlState(error) === "XX002") {
    return new KeelError("corrupt", `${what}: PostgreSQL reports damaged data (${message})`, { details: { ...details, location: context.tables.schema }, cause: error });
  }
  return new KeelError("io_failed", `${what}: PostgreSQL failed: ${message}`, { details, cause: error });
}

/** The error of an operation after `close()`. */
export function closedError(context: PostgresContext): KeelError {
  return new KeelError("unavailable", `the PostgreSQL store (schema ${context.tables.schema}) is closed`, { details: { schema: context.tables.schema }, retryable: false });
}

const ignoreClientError = () => undefined;

/** How many times a transaction (or statement) that lost a race runs before `unavailable`. */
export const ATTEMPTS = 8;

/**
 * Runs `step` in one transaction (`BEGIN … COMMIT`) on a pooled connection. An `Err` from
 * `step` rolls back, so a refused write changes nothing. A lost race on a new row (two
 * creators of one key), a serialization failure or a deadlock runs the transaction again; a
 * lost connection discards the client and is `unavailable` (retryable), the server having
 * rolled the transaction back. The store's timeouts are set with `SET LOCAL` as the
 * transaction begins ({@link beginStatement}); their errors are `unavailable` (retryable), never
 * run again here: a host that waited its bound on a stalled host's lock fails fast, typed. Only
 * transaction-scoped state is used: safe behind a transaction-mode pooler.
 */
export function transaction<T>(context: PostgresContext, what: string, step: (client: PoolClient) => Promise<Result<T, KeelError>>): ResultAsync<T, KeelError> {
  const run = async (): Promise<Result<T, KeelError>> => {
    const ready = await context.ready();
    if (ready.isErr()) return err(ready.error);
    for (let attempt = 1; ; attempt++) {
      if (context.closed) return err(closedError(context));
      let client: PoolClient;
      try {
        client = await context.pool.connect();
      } catch (error) {
        return err(toStoreError(error, context, what));
      }
      // A checked-out client hears of a connection the server ended between statements (the idle
      // timeout) as an 'error' event, not from a query: unheard, it would crash the host. The next
      // query fails instead, and that failure is the one reported.
      client.on("error", ignoreClientError);
      try {
        await client.query(context.begin);
        const result = await step(client);
        await client.query(result.isOk() ? "COMMIT" : "ROLLBACK");
        client.off("error", ignoreClientError);
        client.release();
        return result;
      } catch (error) {
        const lost = isConnectionLoss(error);
        if (!lost) await client.query("ROLLBACK").catch(() => undefined);
        client.off("error", ignoreClientError);
        client.release(lost ? (error as Error) : undefined);
        if (!isRace(error) || attempt >= ATTEMPTS) return err(toStoreError(error, context, what));
      }
    }
  };
  return new ResultAsync(run());
}

/** Runs one read statement (its own snapshot) on the pool. */
export function read<T>(context: PostgresContext, what: string, step: (pool: Pool) => Promise<Result<T, KeelError>>): ResultAsync<T, KeelError> {
  const run = async (): Promise<Result<T, KeelError>> => {
    const ready = await context.ready();
    if (ready.isErr()) return err(ready.error);
    if (context.closed) return err(closedError(context));
    try {
      return await step(context.pool);
    } catch (error) {
      return err(toStoreError(error, context, what));
    }
  };
  return new ResultAsync(run());
}

import { KeelError, type Clock } from "@keel/core";
import type { Database, Statement } from "better-sqlite3";
import { err, ResultAsync, type Result } from "neverthrow";

/** What every part of the SQLite store shares: the connection, its clock and its limits. */
export interface SqliteContext {
  db: Database;
  file: string;
  clock: Clock;
  maxValueBytes: number;
  busyTimeoutMs: number;
  closed: boolean;
}

const isBusy = (error: unknown) => {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" && (code.startsWith("SQLITE_BUSY") || code.startsWith("SQLITE_LOCKED"));
};

/** Maps an exception of better-sqlite3 to a `KeelError` (a `KeelError` passes through). */
export function toStoreError(error: unknown, file: string, what: string): KeelError {
  if (KeelError.is(error)) return error;
  const code = String((error as { code?: unknown } | null)?.code ?? "");
  const message = error instanceof Error ? error.message : String(error);
  const details = { file, sqlite: code };
  if (isBusy(error)) {
    return new KeelError("unavailable", `${what}: the SQLite store ${file} stayed locked by another connection (${message}); retry`, { details, cause: error, retryable: true });
  }
  if (code.startsWith("SQLITE_CORRUPT") || code === "SQLITE_NOTADB") {
    return new KeelError("corrupt", `${what}: the SQLite file ${file} is damaged (${message}); run check() or restore a backup`, { details: { ...details, location: file }, cause: error });
  }
  return new KeelError("io_failed", `${what}: SQLite failed on ${file}: ${message}`, { details, cause: error });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Runs `step` (synchronous: better-sqlite3 transactions must not span an `await`) until it does
 * not hit a busy database, sleeping off the event loop between tries with a growing, jittered
 * interval, for at most `busyTimeoutMs` beyond SQLite's own busy wait; then `unavailable`.
 * So no `SQLITE_BUSY` ever reaches a caller as such.
 */
function withBusyRetry<T>(context: SqliteContext, what: string, step: () => Result<T, KeelError>): ResultAsync<T, KeelError> {
  // The first try runs at once (most steps are not busy): no async frame, no timer.
  if (context.closed) return new ResultAsync(Promise.resolve(err(closedError(context.file))));
  const deadline = Date.now() + context.busyTimeoutMs;
  try {
    return new ResultAsync(Promise.resolve(step()));
  } catch (error) {
    if (!isBusy(error)) return new ResultAsync(Promise.resolve(err(toStoreError(error, context.file, what))));
  }
  const run = async (): Promise<Result<T, KeelError>> => {
    let interval = 2;
    for (;;) {
      await sleep(interval + Math.random() * interval);
      interval = Math.min(interval * 2, 40);
      if (context.closed) return err(closedError(context.file));
      try {
        return step();
      } catch (error) {
        if (!isBusy(error) || Date.now() >= deadline) return err(toStoreError(error, context.file, what));
      }
    }
  };
  return new ResultAsync(run());
}

/** The error of an operation after `close()`. */
export function closedError(file: string): KeelError {
  return new KeelError("unavailable", `the SQLite store ${file} is closed`, { details: { file }, retryable: false });
}

/**
 * Runs `step` inside `BEGIN IMMEDIATE … COMMIT`: the write lock is taken at the start, so a
 * transaction never upgrades from read to write (the upgrade is what returns `SQLITE_BUSY`
 * without waiting). An `Err` from `step` rolls back: a refused write changes nothing.
 */
export function writeTransaction<T>(context: SqliteContext, what: string, step: () => Result<T, KeelError>): ResultAsync<T, KeelError> {
  return withBusyRetry(context, what, () => {
    const { db } = context;
    const control = transactionStatements(db);
    control.begin.run();
    try {
      const result = step();
      (result.isOk() ? control.commit : control.rollback).run();
      return result;
    } catch (error) {
      if (db.inTransaction) control.rollback.run();
      throw error;
    }
  });
}

/** The prepared `BEGIN IMMEDIATE` / `COMMIT` / `ROLLBACK` of a connection (prepared once: `exec` parses its text each time). */
const controls = new WeakMap<Database, { begin: Statement; commit: Statement; rollback: Statement }>();
function transactionStatements(db: Database): { begin: Statement; commit: Statement; rollback: Statement } {
  let control = controls.get(db);
  if (!control) {
    control = { begin: db.prepare("BEGIN IMMEDIATE"), commit: db.prepare("COMMIT"), rollback: db.prepare("ROLLBACK") };
    controls.set(db, control);
  }
  return control;
}

/** Runs a read (one statement, or several that need no snapshot across them). */
export function readStep<T>(context: SqliteContext, what: string, step: () => Result<T, KeelError>): ResultAsync<T, KeelError> {
  return withBusyRetry(context, what, step);
}

import { KeelError, type JsonValue } from "@keel/core";
import type { KeelStore, LogRecord } from "@keel/store";
import { err, ok, ResultAsync, type Result } from "neverthrow";

/** What {@link copyStore} copied. */
export interface StoreCopyReport {
  /** Live documents copied, each at its version. */
  documents: number;
  /** Live logs copied. */
  logs: number;
  /** Log records copied, at their seqs. */
  records: number;
}

/** Options of {@link copyStore}. */
export interface StoreCopyOptions {
  /** Copy into a target that already holds documents or logs (same keys are overwritten). Default false. */
  force?: boolean;
  /** Called after each document or log is copied. */
  progress?: (line: string) => void;
}

const PAGE = 1_000;
const FILLER = "keel-copy-filler";

async function unwrap<T>(outcome: PromiseLike<Result<T, KeelError>>): Promise<T> {
  const result = await outcome;
  if (result.isErr()) throw result.error;
  return result.value;
}

async function isEmpty(store: KeelStore): Promise<boolean> {
  const documents = await unwrap(store.docs.list([], { limit: 1 }));
  if (documents.items.length > 0) return false;
  return (await unwrap(store.logs.list([]))).length === 0;
}

/**
 * Brings a document in `to` to exactly `version`: the ports assign versions, so the copy writes
 * filler versions below it, then the value as the last write. An existing document is replaced
 * (its version must be below `version`, else `conflict`).
 */
async function copyDocument(to: KeelStore, key: string[], value: JsonValue, version: number): Promise<void> {
  const current = await unwrap(to.docs.get(key));
  let at = current?.version ?? 0;
  if (at >= version) {
    throw new KeelError("conflict", `the target's ${key.join("/")} is at version ${at}, not below the source's ${version}: copy into an empty store`, { details: { key: key.join("/") } });
  }
  while (at < version - 1) at = (await unwrap(to.docs.put(key, FILLER, at === 0 ? { unconditional: true } : { expectedVersion: at }))).version;
  const written = await unwrap(to.docs.put(key, value, at === 0 ? { unconditional: true } : { expectedVersion: at }));
  if (written.version !== version) {
    throw new KeelError("conflict", `${key.join("/")} got version ${written.version} in the target, not ${version}: copy into an empty store`, { details: { key: key.join("/") } });
  }
}

/**
 * Brings a log in `to` to the same seqs and ids: seqs before the first record (a log deleted
 * and begun again keeps counting) are spent by filler records and a delete, then the records
 * are appended in order.
 */
async function copyLog(to: KeelStore, key: string[], records: LogRecord[]): Promise<void> {
  const first = records[0]?.seq ?? 1;
  if (first > 1) {
    for (let seq = 1; seq < first; seq += PAGE) {
      const count = Math.min(PAGE, first - seq);
      await unwrap(to.logs.append(key, Array.from({ length: count }, (_, index) => ({ id: `${FILLER}-${seq + index}`, value: null }))));
    }
    await unwrap(to.logs.delete(key));
  }
  for (let start = 0; start < records.length; start += PAGE) {
    const batch = records.slice(start, start + PAGE);
    const appended = await unwrap(to.logs.append(key, batch.map((record) => ({ id: record.id, value: record.value }))));
    if (appended.lastSeq !== batch[batch.length - 1]!.seq) {
      throw new KeelError("conflict", `log ${key.join("/")} got seq ${appended.lastSeq} in the target, not ${batch[batch.length - 1]!.seq}: copy into an empty store`, { details: { log: key.join("/") } });
    }
  }
}

/**
 * Copies every live document (with its version) and every live log (with its seqs and ids) of
 * `from` into `to`, through the ports only, so any two stores work. Refuses a target that
 * already holds something (`conflict`) unless `force`. Timestamps (`updatedAt`, `at`) are the
 * target's clock at copy time. Leases are not copied: they belong to running processes.
 */
export function copyStore(from: KeelStore, to: KeelStore, options: StoreCopyOptions = {}): ResultAsync<StoreCopyReport, KeelError> {
  const run = async (): Promise<Result<StoreCopyReport, KeelError>> => {
    try {
      if (!options.force && !(await isEmpty(to))) {
        return err(new KeelError("conflict", "the target store is not empty: copy into an empty store, or pass --force to copy over it", { details: {} }));
      }
      const report: StoreCopyReport = { documents: 0, logs: 0, records: 0 };
      let after: string | undefined;
      for (;;) {
        const page = await unwrap(from.docs.list([], after === undefined ? { limit: PAGE } : { after, limit: PAGE }));
        for (const meta of page.items) {
          const doc = await unwrap(from.docs.get(meta.key));
          if (!doc) continue;
          await copyDocument(to, doc.key, doc.value, doc.version);
          report.documents++;
          options.progress?.(`document ${doc.key.join("/")} v${doc.version}`);
        }
        if (!page.next) break;
        after = page.next;
      }
      for (const key of await unwrap(from.logs.list([]))) {
        const records = await unwrap(from.logs.read(key));
        await copyLog(to, key, records);
        report.logs++;
        report.records += records.length;
        options.progress?.(`log ${key.join("/")} ${records.length} records`);
      }
      return ok(report);
    } catch (error) {
      if (KeelError.is(error)) return err(error);
      return err(new KeelError("io_failed", `copying the store failed: ${error instanceof Error ? error.message : String(error)}`, { cause: error }));
    }
  };
  return new ResultAsync(run());
}

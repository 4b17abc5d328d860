import type { KeelStore } from "@keel/store";
import { EventBaseSchema } from "@keel/telemetry/schemas";
import type { LogInspection } from "./inspect-model.js";

/** The most records read from one log (the rest is counted by `lastSeq`, not read). */
export const MAX_LOG_RECORDS_READ = 10_000;

const PAGE = 1_000;

/**
 * Reads one log: its last seq and up to {@link MAX_LOG_RECORDS_READ} records. When every record
 * read is an event (`type` and `at`, as telemetry's event log writes them) the log is an event
 * log and its events are counted by type. Read-only (`head` and `read`); never throws: a log the
 * store cannot read is `corrupt`. `null` when the log is gone.
 */
export async function inspectLog(store: Pick<KeelStore, "logs">, key: readonly string[]): Promise<LogInspection | null> {
  const keyText = key.join("/");
  const head = await store.logs.head(key);
  if (head.isErr()) return { status: "corrupt", key: keyText, code: head.error.code, message: head.error.message };
  if (!head.value) return null;
  const types = new Map<string, number>();
  let records = 0;
  let events = true;
  let afterSeq = 0;
  while (records < MAX_LOG_RECORDS_READ) {
    const page = await store.logs.read(key, { afterSeq, limit: Math.min(PAGE, MAX_LOG_RECORDS_READ - records) });
    if (page.isErr()) return { status: "corrupt", key: keyText, code: page.error.code, message: page.error.message };
    for (const record of page.value) {
      records += 1;
      afterSeq = record.seq;
      const event = EventBaseSchema.safeParse(record.value);
      if (event.success) types.set(event.data.type, (types.get(event.data.type) ?? 0) + 1);
      else events = false;
    }
    if (page.value.length === 0 || afterSeq >= head.value.lastSeq) break;
  }
  const isEventLog = events && records > 0;
  return {
    status: "ok",
    key: keyText,
    lastSeq: head.value.lastSeq,
    kind: isEventLog ? "events" : "records",
    records,
    truncated: afterSeq < head.value.lastSeq,
    // fromEntries defines own properties, so a type named `__proto__` is counted like any other.
    types: isEventLog ? Object.fromEntries([...types].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) : {},
  };
}

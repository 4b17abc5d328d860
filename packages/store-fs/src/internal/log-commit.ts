import { newId, type KeelError } from "@keel/core";
import { type AppendResult, type Fence } from "@keel/store";
import { decideAppend, keyPath, type EncodedRecord, type LeaseState, type LogState } from "@keel/store/kit";
import { err, ok, type Result } from "neverthrow";
import { isoNow, type FsContext } from "./fs-context.js";
import { writeFileDurably } from "./fs-durable-write.js";
import { closeQuietly, toStoreError, writeAll } from "./fs-io.js";
import { checkFenceInThisBoot, watchFence } from "./fs-leases.js";
import { createRecordEncoder, encodeHeaderLine, type ScannedRecord } from "./log-format.js";
import { findStoredValue, type LogIndex, type LogView } from "./log-index.js";

/**
 * The commit step of the log writer: what one locked batch does to a log file. Appends are
 * planned in order (each sees the records of those before it, as if they ran one by one), then
 * written with one `write` and one `fdatasync`: no `fdatasync` when every append of the batch
 * asked for `durable: false` (its end lines then name the file's durable point, `durableTo`,
 * and the log is synced in the background).
 */

/** One queued append, settled with its own outcome. */
export interface AppendRequest {
  kind: "append";
  records: EncodedRecord[];
  expectedSeq: number | undefined;
  fence: Fence | undefined;
  /** False: acknowledged once written to the OS, synced later (see `AppendOptions.durable`). */
  durable: boolean;
  bytes: number;
  resolve: (result: AppendResult) => void;
  reject: (error: unknown) => void;
}

/** A queued delete: a barrier, committed alone, in call order with the appends around it. */
export interface DeleteRequest {
  kind: "delete";
  fence: Fence | undefined;
  resolve: (deleted: boolean) => void;
  reject: (error: unknown) => void;
}

/** This boot's lease token floor for fence checks (throws when it could not be loaded). */
export type FenceFloor = () => number;

/** A queued log write. */
export type LogRequest = AppendRequest | DeleteRequest;

/** At most this many bytes of record text go into one group commit (at least one append always does). */
const MAX_BATCH_BYTES = 8 * 1024 * 1024;

/** Commits a log delete: replaces the file with a deletion header that keeps the last seq. */
export async function commitDelete(context: FsContext, file: string, fence: Fence | undefined, floor: FenceFloor): Promise<boolean> {
  const view = context.logIndex.open(file, "r");
  closeQuietly(context.io, view.fd);
  assertFence(context, fence, new Map(), floor);
  if (!view.index || view.index.header.deleted) return false;
  const header = { file: newId(), baseSeq: view.index.lastSeq, deleted: true, at: isoNow(context) };
  await writeFileDurably(context.io, file, Buffer.from(encodeHeaderLine(header, true)), { root: context.paths.root, backup: false });
  context.logIndex.forget(file);
  return true;
}

/**
 * Checks a fence the safe way (the batch holds the lease locks), against this boot's token floor:
 * the first fence of each token in a batch is checked and watched ({@link watchFence}), the
 * others against the state it was checked against.
 */
function assertFence(context: FsContext, fence: Fence | undefined, states: Map<string, LeaseState | undefined>, floor: FenceFloor): void {
  if (!fence) return;
  const known = states.get(fence.lease);
  if (known?.token === fence.token) {
    const checked = checkFenceInThisBoot(known, fence, context.clock.now(), floor());
    if (checked.isErr()) throw checked.error;
    return;
  }
  states.set(fence.lease, watchFence(context, fence, floor()));
}

/** Commits a group of appends: plans them in order, writes once, settles each caller. */
export async function commitAppends(context: FsContext, file: string, key: string[], batch: AppendRequest[], floor: FenceFloor): Promise<void> {
  const view = context.logIndex.open(file, "r+");
  try {
    const at = isoNow(context);
    const { fd, index } = view;
    const storedValue = (id: string) => findStoredValue(context.io, fd!, file, index!, id);
    // One durable append makes the whole group commit synced (a store may always be stronger).
    const durableTo = batch.some((request) => request.durable) || !index ? undefined : index.durableEnd;
    const plan = planAppends(index, keyPath(key), batch, at, (fence, states) => assertFence(context, fence, states, floor), storedValue, durableTo);
    if (plan.create) {
      const buffered = !batch.some((request) => request.durable);
      const header = { file: newId(), baseSeq: view.index?.lastSeq ?? 0, deleted: false, at, ...(buffered ? { buffered } : {}) };
      const text = encodeHeaderLine(header, plan.lines.length === 0) + plan.lines.join("");
      await writeFileDurably(context.io, file, Buffer.from(text), { root: context.paths.root, backup: false });
      context.logIndex.forget(file);
    } else if (plan.lines.length > 0 && view.index && view.fd !== undefined) {
      await appendLines(context, file, view.fd, view, view.index, plan);
    }
    plan.outcomes.forEach((outcome, index) => {
      const request = batch[index]!;
      if (outcome.isOk()) request.resolve(outcome.value);
      else request.reject(outcome.error);
    });
  } finally {
    closeQuietly(context.io, view.fd);
  }
}

/**
 * Cuts a torn tail, then writes the planned lines with one write and one fdatasync (none for an
 * unsynced plan: the log is synced in the background).
 */
async function appendLines(context: FsContext, file: string, fd: number, view: LogView, index: LogIndex, plan: AppendPlan): Promise<void> {
  if (view.tail) {
    context.io.ftruncateSync(fd, view.tail.offset);
    const lost = view.tail.lost;
    context.warn({
      type: "truncated-tail",
      location: file,
      message: lost
        ? `cut ${view.tail.bytes} bytes of unsynced batches at byte ${view.tail.offset} of ${file}, damaged at byte ${lost.offset} (${lost.problem}) as a power loss leaves them, before appending`
        : `cut ${view.tail.bytes} bytes of an incomplete (never acknowledged) batch at byte ${view.tail.offset} of ${file} before appending`,
    });
  }
  const writeOffset = index.committedEnd;
  const buffer = Buffer.from(plan.lines.join(""));
  try {
    writeAll(context.io, fd, buffer, writeOffset);
    if (plan.synced) await context.io.fdatasync(fd);
  } catch (error) {
    // Leave no torn or unacknowledged batch behind (best effort: the tail rule covers a failure here).
    try {
      context.io.ftruncateSync(fd, writeOffset);
    } catch {
      // the scan's tail rule still ignores the incomplete batch
    }
    throw error;
  }
  let offset = writeOffset;
  const records: ScannedRecord[] = plan.records.map((record, position) => {
    const placed = { seq: record.seq, id: record.id, offset };
    offset += Buffer.byteLength(plan.lines[position]!);
    return placed;
  });
  context.logIndex.extend(file, index, writeOffset, records, plan.lastSeq, writeOffset + buffer.length, plan.synced);
  if (!plan.synced) context.backgroundSync.schedule(file);
}


/** The next batch: one delete alone, or consecutive appends up to {@link MAX_BATCH_BYTES}. */
export function takeBatch(pending: LogRequest[]): LogRequest[] {
  if (pending[0]?.kind === "delete") return pending.splice(0, 1);
  let count = 0;
  let bytes = 0;
  for (const request of pending) {
    if (request.kind === "delete") break;
    if (count > 0 && bytes + request.bytes > MAX_BATCH_BYTES) break;
    bytes += request.bytes;
    count++;
  }
  return pending.splice(0, count);
}

/** What a group commit writes and what each caller gets. */
interface AppendPlan {
  /** The file must be (re)created with a header: the log did not exist or was deleted. */
  create: boolean;
  lines: string[];
  /** Whether the lines are written with `fdatasync` (unsynced ones carry `durableTo`). */
  synced: boolean;
  /** The new records, one per line (offsets relative to nothing yet). */
  records: Omit<ScannedRecord, "offset">[];
  lastSeq: number;
  outcomes: Result<AppendResult, KeelError>[];
}

/**
 * Decides a group commit, request by request, exactly as if the appends ran one after the other:
 * each sees the records of those before it. Pure apart from the fence check and the read-back of
 * a stored value whose id is appended again (`storedValue`, rare: a retry or a duplicate).
 * `durableTo` (the file's durable point) plans an unsynced write, unless the file is (re)created:
 * a new file is always written durably.
 */
function planAppends(
  index: LogIndex | undefined,
  logText: string,
  batch: readonly AppendRequest[],
  at: string,
  checkFenceOf: (fence: Fence | undefined, states: Map<string, LeaseState | undefined>) => void,
  storedValue: (id: string) => string | undefined,
  durableTo: number | undefined,
): AppendPlan {
  const states = new Map<string, LeaseState | undefined>();
  let exists = index !== undefined && !index.header.deleted;
  let lastSeq = index?.lastSeq ?? 0;
  let create = false;
  /** id → value text of the records planned in this batch. */
  const added = new Map<string, string>();
  const lines: string[] = [];
  const records: Omit<ScannedRecord, "offset">[] = [];
  const encode = createRecordEncoder(at);
  const state: LogState = {
    lastSeq,
    deleted: false,
    textOf: (id) => {
      const text = added.get(id);
      if (text !== undefined || create) return text;
      return index ? storedValue(id) : undefined;
    },
  };
  const outcomes = batch.map((request): Result<AppendResult, KeelError> => {
    let decided: ReturnType<typeof decideAppend>;
    try {
      checkFenceOf(request.fence, states);
      state.lastSeq = lastSeq;
      state.deleted = index?.header.deleted === true && !create;
      decided = decideAppend(state, request.records, request.expectedSeq, logText);
    } catch (error) {
      return err(toStoreError(error, `append to log ${logText}`));
    }
    if (decided.isErr()) return err(decided.error);
    const { fresh, deduplicated } = decided.value;
    // An empty batch (or one of duplicates only) writes nothing: it never creates a log or brings back a deleted one.
    if (fresh.length === 0) return ok({ lastSeq: exists ? lastSeq : 0, appended: 0, deduplicated });
    if (!exists) {
      exists = true;
      create = true;
    }
    for (let position = 0; position < fresh.length; position++) {
      const record = fresh[position]!;
      lastSeq += 1;
      lines.push(encode(lastSeq, record.id, record.text, position === fresh.length - 1, create ? undefined : durableTo));
      records.push({ seq: lastSeq, id: record.id });
      added.set(record.id, record.text);
    }
    return ok({ lastSeq, appended: fresh.length, deduplicated });
  });
  return { create, lines, synced: create || durableTo === undefined, records, lastSeq, outcomes };
}

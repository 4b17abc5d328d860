import { keyPath, type AppendResult, type EncodedRecord, type Fence } from "@keel/store";
import type { FsContext } from "./fs-context.js";
import { fenceResources } from "./fs-leases.js";
import { commitAppends, commitDelete, takeBatch, type AppendRequest, type LogRequest } from "./log-commit.js";

/** The writes waiting for one log, in call order. */
interface LogQueue {
  key: string[];
  pending: LogRequest[];
}

/** Writes to logs. */
export interface LogWriter {
  append(key: string[], records: EncodedRecord[], options: { expectedSeq?: number; fence?: Fence }): Promise<AppendResult>;
  delete(key: string[], fence: Fence | undefined): Promise<boolean>;
}

/**
 * Creates the log writer of one store: appends to one log from this process are group-committed.
 * While one batch is being written and fsynced, new appends queue; the next batch takes them
 * all, so one lock, one `write` and one `fdatasync` serve many callers. Each caller's records
 * stay contiguous and all-or-nothing (its last line carries the batch end marker), and each
 * caller gets its own outcome (a `conflict` for one does not fail the others).
 */
export function createLogWriter(context: FsContext): LogWriter {
  const queues = new Map<string, LogQueue>();

  const enqueue = (key: string[], request: LogRequest) => {
    const file = context.paths.logFile(key);
    let queue = queues.get(file);
    if (queue) {
      queue.pending.push(request);
      return;
    }
    queue = { key, pending: [request] };
    queues.set(file, queue);
    void drain(file, queue);
  };

  const drain = async (file: string, queue: LogQueue) => {
    while (queue.pending.length > 0) await flushOnce(file, queue);
    queues.delete(file);
  };

  const flushOnce = async (file: string, queue: LogQueue) => {
    const logResource = `log:${keyPath(queue.key)}`;
    let batch: LogRequest[] = [];
    const releases: (() => void)[] = [];
    try {
      releases.push(await context.locks.acquire([logResource]));
    } catch (error) {
      for (const request of takeBatch(queue.pending)) request.reject(error);
      return;
    }
    try {
      batch = takeBatch(queue.pending);
      releases.push(await context.locks.acquire(fenceResources(batch.map((request) => request.fence))));
      const first = batch[0]!;
      if (first.kind === "delete") first.resolve(await commitDelete(context, file, first.fence));
      else await commitAppends(context, file, queue.key, batch as AppendRequest[]);
    } catch (error) {
      for (const request of batch) request.reject(error);
    } finally {
      for (const release of releases.reverse()) release();
    }
  };

  return {
    append: (key, records, options) =>
      new Promise((resolve, reject) => {
        const bytes = records.reduce((sum, record) => sum + record.text.length, 0);
        enqueue(key, {
          kind: "append",
          records,
          expectedSeq: options.expectedSeq,
          fence: options.fence,
          bytes,
          resolve,
          reject,
        });
      }),
    delete: (key, fence) =>
      new Promise((resolve, reject) => {
        enqueue(key, { kind: "delete", fence, resolve, reject });
      }),
  };
}


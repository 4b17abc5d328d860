import path from "node:path";
import { type AppendOptions, type AppendResult, type Fence } from "@keel/store";
import { keyPath, type EncodedRecord } from "@keel/store/kit";
import { leaseFloor, type FsContext } from "./fs-context.js";
import { fenceResources } from "./fs-leases.js";
import { commitAppends, commitDelete, takeBatch, type AppendRequest, type FenceFloor, type LogRequest } from "./log-commit.js";

/** The writes waiting for one log, in call order. */
interface LogQueue {
  key: string[];
  /** The log's file and lock resource, worked out once per queue (not once per append). */
  file: string;
  resource: string;
  pending: LogRequest[];
}

/** Writes to logs. */
export interface LogWriter {
  append(key: string[], records: EncodedRecord[], options: AppendOptions): Promise<AppendResult>;
  delete(key: string[], fence: Fence | undefined): Promise<boolean>;
}

/**
 * Creates the log writer of one store: appends to one log from this process are group-committed.
 * While one batch is being written and fsynced, new appends queue; the next batch takes them
 * all, so one lock, one `write` and one `fdatasync` serve many callers. Each caller's records
 * stay contiguous and all-or-nothing (its last line carries the batch end marker), and each
 * caller gets its own outcome (a `conflict` for one does not fail the others). A batch of
 * appends that all asked for `durable: false` is written without `fdatasync`.
 */
export function createLogWriter(context: FsContext): LogWriter {
  const queues = new Map<string, LogQueue>();

  // Keyed by the key's text: segments are safe names, which cannot hold "/".
  const enqueue = (key: string[], request: LogRequest) => {
    const text = keyPath(key);
    let queue = queues.get(text);
    if (queue) {
      queue.pending.push(request);
      return;
    }
    queue = { key, file: context.paths.logFile(key), resource: `log:${text}`, pending: [request] };
    queues.set(text, queue);
    void drain(text, queue);
  };

  const drain = async (text: string, queue: LogQueue) => {
    while (queue.pending.length > 0) await flushOnce(queue);
    queues.delete(text);
  };

  const flushOnce = async (queue: LogQueue) => {
    const { file } = queue;
    let batch: LogRequest[] = [];
    const releases: (() => void)[] = [];
    try {
      releases.push(await context.locks.acquire([queue.resource]));
    } catch (error) {
      for (const request of takeBatch(queue.pending)) request.reject(error);
      return;
    }
    try {
      batch = takeBatch(queue.pending);
      context.guard.contain(path.dirname(file));
      const fences = batch.map((request) => request.fence);
      // This boot's token floor, for the fence checks: a failure to load it fails the fenced requests only.
      let floor: FenceFloor = () => 0;
      if (fences.some((fence) => fence !== undefined)) {
        floor = await Promise.resolve(leaseFloor(context)).then(
          (value) => () => value,
          (error: unknown) => () => {
            throw error;
          },
        );
      }
      releases.push(await context.locks.acquire(fenceResources(fences)));
      const first = batch[0]!;
      if (first.kind === "delete") first.resolve(await commitDelete(context, file, first.fence, floor));
      else await commitAppends(context, file, queue.key, batch as AppendRequest[], floor);
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
          durable: options.durable !== false,
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


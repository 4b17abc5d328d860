/**
 * The write path of pending writes: one task's writes against a stored checkpoint, serialized
 * (or refused) and appended to the checkpoint's writes log in one call, idempotently. The saver
 * remembers the appends in flight and the ones that lost to another writer, for the next `put`
 * (see `checkParentWrites` in `checkpoint-put.ts`).
 */
import type { RunnableConfig } from "@langchain/core/runnables";
import { WRITES_IDX_MAP, type PendingWrite } from "@langchain/langgraph-checkpoint";
import { KeelError, digest, type JsonValue } from "@keel/core";
import { MAX_RECORD_ID_LENGTH } from "@keel/store/kit";
import { PendingWritesInputSchema, TaskIdInputSchema, TaskPathInputSchema, parseInput, readConfig, requireThreadId } from "./checkpoint-input.js";
import type { WriteRecord } from "./checkpoint-records.js";
import { dumpValue } from "./checkpoint-serde.js";
import { unwrap, type SaverContext } from "./saver-context.js";

/** `putWrites`: stores pending writes of one task against a checkpoint (see `KeelCheckpointSaver.putWrites`). */
export async function putPendingWrites(context: SaverContext, config: RunnableConfig, writes: PendingWrite[], taskId: string, taskPath?: string): Promise<void> {
  const fields = readConfig(config, "putWrites config");
  const threadId = requireThreadId(fields, "putWrites");
  const { namespace = "", checkpointId } = fields;
  if (checkpointId === undefined) {
    throw new KeelError("invalid_input", "putWrites: config.configurable.checkpoint_id is missing: writes belong to a stored checkpoint");
  }
  parseInput(PendingWritesInputSchema, writes, "putWrites writes");
  parseInput(TaskIdInputSchema, taskId, "putWrites taskId");
  parseInput(TaskPathInputSchema, taskPath, "putWrites taskPath");
  const log = context.keys.writes(threadId, namespace, checkpointId).join("/");
  const work = appendWrites(context, threadId, namespace, checkpointId, writes, taskId, taskPath);
  let inFlight = context.writesInFlight.get(log);
  if (!inFlight) context.writesInFlight.set(log, (inFlight = new Set()));
  inFlight.add(work);
  try {
    await work;
  } catch (error) {
    if (KeelError.is(error, "conflict")) context.lostWrites.add(log);
    throw error;
  } finally {
    inFlight.delete(work);
    if (inFlight.size === 0) context.writesInFlight.delete(log);
  }
}

/** `putWrites` after its arguments were checked: every value serialized (or refused), then one append. */
async function appendWrites(
  context: SaverContext,
  threadId: string,
  namespace: string,
  checkpointId: string,
  writes: PendingWrite[],
  taskId: string,
  taskPath?: string,
): Promise<void> {
  const records = await Promise.all(
    writes.map(async ([channel, value], position) => {
      const serialized = await dumpValue(context, value, `putWrites: the value of channel "${channel}" (task ${taskId})`);
      const index = Object.hasOwn(WRITES_IDX_MAP, channel) ? WRITES_IDX_MAP[channel]! : position;
      const record: WriteRecord = { taskId, channel, index, taskPath: taskPath ?? "", value: serialized };
      const recordValue = record as unknown as JsonValue;
      // Special channels (negative index) are replaced: a new record per distinct value, the last wins.
      const id = index >= 0 ? JSON.stringify([taskId, index]) : JSON.stringify([taskId, index, digest(recordValue)]);
      // A record id has at most 256 characters and no DEL: a longer or odd task id is keyed by its digest.
      return { id: id.length <= MAX_RECORD_ID_LENGTH && !id.includes("\u007f") ? id : digest(id), value: recordValue };
    }),
  );
  await unwrap(context.store.logs.append(context.keys.writes(threadId, namespace, checkpointId), records));
}

import { KeelError, utf8Bytes, type JsonValue } from "@keel/core";
import { type DocMeta, type DocStore, type Fence } from "@keel/store";
import { compareKeyToCursor, compareKeys, decideDelete, decidePut, encodeValue, keyCursor, keyPath, validateDeleteCondition, validateKey, validatePage, validatePutCondition } from "@keel/store/kit";
import { errAsync } from "neverthrow";
import { encodeDocEnvelope, type DocEnvelope } from "./doc-envelope.js";
import { isoNow, leaseFloor, type FsContext } from "./fs-context.js";
import { writeFileDurably } from "./fs-durable-write.js";
import { isErrno } from "./fs-io.js";
import { holdFence } from "./fs-leases.js";
import { BACKUP_SUFFIX, segmentOfDocFile } from "./fs-paths.js";
import { collectKeys } from "./key-walk.js";

/** A document's stored state and where it was read from. */
export interface DocRead {
  envelope: DocEnvelope;
  /** `backup` when the file was damaged or missing and its `.bak` was served. */
  source: "file" | "backup";
}

type FileRead = { kind: "ok"; envelope: DocEnvelope } | { kind: "missing" } | { kind: "bad"; problem: string };

function readEnvelope(context: FsContext, file: string, key: readonly string[], withValue: boolean): FileRead {
  let bytes: Buffer;
  try {
    bytes = context.io.readFileSync(file);
  } catch (error) {
    if (isErrno(error, "ENOENT")) return { kind: "missing" };
    throw error;
  }
  const decoded = context.docCache.decode(file, bytes, key, withValue);
  return decoded.isOk() ? { kind: "ok", envelope: decoded.value } : { kind: "bad", problem: decoded.error };
}

/**
 * Reads a document's state, verified: the file, or — when the file is damaged (or gone while
 * its backup is not) — the `.bak`, with a `served-backup` warning. Both bad is `corrupt` with the
 * location; never `undefined` for data that exists but cannot be read. Without `withValue`
 * (writes and listings need only the version), the envelope's `value` may be `null`.
 */
export function readDocState(context: FsContext, key: readonly string[], withValue = true): DocRead | undefined {
  const file = context.paths.docFile(key);
  const main = readEnvelope(context, file, key, withValue);
  if (main.kind === "ok") return { envelope: main.envelope, source: "file" };
  const backup = readEnvelope(context, `${file}${BACKUP_SUFFIX}`, key, withValue);
  if (main.kind === "missing" && backup.kind === "missing") return undefined;
  if (backup.kind === "ok") {
    const why = main.kind === "missing" ? "is missing" : `is damaged (${main.problem})`;
    context.warn({ type: "served-backup", location: file, message: `${file} ${why}; served its backup (version ${backup.envelope.version})` });
    return { envelope: backup.envelope, source: "backup" };
  }
  const mainProblem = main.kind === "missing" ? "missing" : main.problem;
  const backupProblem = backup.kind === "missing" ? "missing" : backup.problem;
  throw new KeelError("corrupt", `document ${keyPath(key)} cannot be read: ${file} is ${mainProblem === "missing" ? "missing" : `damaged (${mainProblem})`} and its backup is ${backupProblem === "missing" ? "missing" : `damaged (${backupProblem})`}`, {
    details: { key: keyPath(key), location: file, problem: mainProblem, backupProblem },
    retryable: false,
  });
}

/** Runs `work` holding the lock of a document, and its fence ({@link holdFence}) when it has one. */
async function underDocLock<T>(context: FsContext, key: readonly string[], fence: Fence | undefined, work: () => Promise<T>): Promise<T> {
  const floor = fence ? await leaseFloor(context) : 0;
  const release = await context.locks.acquire([`doc:${keyPath(key)}`]);
  try {
    const releaseFence = fence ? await holdFence(context, fence, floor) : undefined;
    try {
      return await work();
    } finally {
      releaseFence?.();
    }
  } finally {
    release();
  }
}

/** The document store: one JSON envelope file per key, replaced durably under the key's lock. */
export function createFsDocStore(context: FsContext): DocStore {
  const write = async (key: readonly string[], envelope: Omit<DocEnvelope, "bytes" | "key">, valueText: string, current: DocRead | undefined) => {
    const file = context.paths.docFile(key);
    const bytes = Buffer.from(encodeDocEnvelope({ key, ...envelope, valueText }));
    await writeFileDurably(context.io, file, bytes, {
      root: context.paths.root,
      // Never let a damaged file replace a good backup.
      backup: current?.source === "file",
    });
    context.docCache.remember(file, bytes, key, { ...envelope, bytes: utf8Bytes(valueText) }, valueText);
  };

  return {
    get: (key) => {
      const segments = validateKey(key);
      if (segments.isErr()) return errAsync(segments.error);
      return context.operation("read document", () => {
        const read = readDocState(context, segments.value);
        if (!read || read.envelope.deleted) return undefined;
        const { version, updatedAt, value } = read.envelope;
        return { key: [...segments.value], value, version, updatedAt };
      });
    },
    put: (key, value, condition) => {
      const segments = validateKey(key);
      if (segments.isErr()) return errAsync(segments.error);
      const parsed = validatePutCondition(condition);
      if (parsed.isErr()) return errAsync(parsed.error);
      const encoded = encodeValue(value, context.maxValueBytes);
      if (encoded.isErr()) return errAsync(encoded.error);
      const text = encoded.value.text;
      return context.operation("write document", () =>
        underDocLock(context, segments.value, parsed.value.fence, async () => {
          const current = readDocState(context, segments.value, false);
          const version = decidePut(current?.envelope, parsed.value, keyPath(segments.value));
          if (version.isErr()) throw version.error;
          const stored = JSON.parse(text) as JsonValue;
          const updatedAt = isoNow(context);
          await write(segments.value, { version: version.value, updatedAt, deleted: false, value: stored }, text, current);
          // `stored` is the caller's own copy: the cache keeps the text, not this object.
          return { key: [...segments.value], value: stored, version: version.value, updatedAt };
        }),
      );
    },
    delete: (key, condition) => {
      const segments = validateKey(key);
      if (segments.isErr()) return errAsync(segments.error);
      const parsed = validateDeleteCondition(condition);
      if (parsed.isErr()) return errAsync(parsed.error);
      return context.operation("delete document", () =>
        underDocLock(context, segments.value, parsed.value.fence, async () => {
          const current = readDocState(context, segments.value, false);
          const decided = decideDelete(current?.envelope, parsed.value, keyPath(segments.value));
          if (decided.isErr()) throw decided.error;
          if (decided.value && current) {
            await write(segments.value, { version: current.envelope.version + 1, updatedAt: isoNow(context), deleted: true, value: null }, "null", current);
          }
          return decided.value;
        }),
      );
    },
    list: (prefix, page) => {
      const segments = validateKey(prefix, "prefix", true);
      if (segments.isErr()) return errAsync(segments.error);
      const parsedPage = validatePage(page);
      if (parsedPage.isErr()) return errAsync(parsedPage.error);
      const { after, limit } = parsedPage.value;
      return context.operation("list documents", () => {
        const keys = collectKeys(context, segments.value, segmentOfDocFile)
          .filter((key) => after === undefined || compareKeyToCursor(key, after) > 0)
          .sort(compareKeys);
        const items: DocMeta[] = [];
        let more = false;
        for (const key of keys) {
          const read = readDocState(context, key, false);
          if (!read || read.envelope.deleted) continue;
          if (items.length === limit) {
            more = true;
            break;
          }
          items.push({ key, version: read.envelope.version, updatedAt: read.envelope.updatedAt, bytes: read.envelope.bytes });
        }
        const last = items[items.length - 1];
        return more && last ? { items, next: keyCursor(last.key) } : { items };
      });
    },
  };
}

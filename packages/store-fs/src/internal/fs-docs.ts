import path from "node:path";
import { KeelError, utf8Bytes, type JsonValue } from "@keel/core";
import type { DamagedEntry, Doc, DocMeta, DocPage, DocStore, Fence, PutCondition, RecoveredFrom } from "@keel/store";
import { decideDelete, decidePut, encodeValue, keyCursor, keyPath, validateDeleteCondition, validateKey, validatePage, validatePutCondition } from "@keel/store/kit";
import { errAsync } from "neverthrow";
import { createDocListing } from "./doc-listing.js";
import { quarantineFiles, quarantinedSentence, versionShownBy } from "./doc-quarantine.js";
import { encodeDocEnvelope, type DocEnvelope } from "./doc-envelope.js";
import { isoNow, leaseFloor, type FsContext } from "./fs-context.js";
import { writeFileDurably } from "./fs-durable-write.js";
import { isErrno } from "./fs-io.js";
import { holdFence } from "./fs-leases.js";
import { BACKUP_SUFFIX } from "./fs-paths.js";

/** A document's stored state and where it was read from. */
export interface DocRead {
  envelope: DocEnvelope;
  /** `backup` when the file was damaged or missing and its `.bak` was served. */
  source: "file" | "backup";
  /** With `source: "backup"`: the damaged or missing file and what was wrong with it. */
  recovered?: RecoveredFrom;
  /**
   * The highest version this key may ever have acknowledged, when its file is damaged: a write
   * continues above it. (A good file's own version otherwise.)
   */
  ceiling: number;
}

type FileRead = { kind: "ok"; envelope: DocEnvelope } | { kind: "missing" } | { kind: "bad"; problem: string; bytes: Buffer };

function readEnvelope(context: FsContext, file: string, key: readonly string[], withValue: boolean): FileRead {
  let bytes: Buffer;
  try {
    bytes = context.io.readFileSync(file);
  } catch (error) {
    if (isErrno(error, "ENOENT")) return { kind: "missing" };
    throw error;
  }
  const decoded = context.docCache.decode(file, bytes, key, withValue);
  return decoded.isOk() ? { kind: "ok", envelope: decoded.value } : { kind: "bad", problem: decoded.error, bytes };
}

/** A document neither whose file nor whose backup can be read. */
export interface DamagedDoc {
  file: string;
  problem: string;
  backupProblem: string;
  /**
   * The highest version it may have acknowledged: from what its damaged bytes still show, else
   * the current epoch-ms time (a jump no count of writes reaches, so no version is ever reused).
   */
  ceiling: number;
}

/**
 * What is stored under a key: a readable state (the file, or its backup), nothing, or damage
 * beyond the backup. Never throws for damage (see {@link readDocState} for the failing read).
 *
 * The ceiling of a damaged file: the file is always at most one version above its backup (a
 * write links the current file to `.bak` before renaming the new one into place, and a write
 * over damage writes the same bytes to both), so a damaged file held at most the backup's
 * version + 1 — or what its bytes still show, if more.
 */
export function inspectDoc(context: FsContext, key: readonly string[], withValue = true): DocRead | DamagedDoc | undefined {
  const file = context.paths.docFile(key);
  context.guard.contain(path.dirname(file));
  const main = readEnvelope(context, file, key, withValue);
  if (main.kind === "ok") return { envelope: main.envelope, source: "file", ceiling: main.envelope.version };
  const backup = readEnvelope(context, `${file}${BACKUP_SUFFIX}`, key, withValue);
  if (main.kind === "missing" && backup.kind === "missing") return undefined;
  const shown = main.kind === "bad" ? versionShownBy(main.bytes) : 0;
  const mainProblem = main.kind === "missing" ? "missing" : main.problem;
  if (backup.kind === "ok") {
    return {
      envelope: backup.envelope,
      source: "backup",
      recovered: { from: "backup", location: file, problem: mainProblem },
      ceiling: Math.max(backup.envelope.version + 1, shown),
    };
  }
  const backupShown = backup.kind === "bad" && versionShownBy(backup.bytes) > 0 ? versionShownBy(backup.bytes) + 1 : 0;
  // Nothing shows a version: jump to the epoch-ms time, above any count of writes a key can have had.
  const ceiling = Math.max(shown, backupShown) || Date.now();
  return { file, problem: mainProblem, backupProblem: backup.kind === "missing" ? "missing" : backup.problem, ceiling };
}

/** True for the damaged outcome of {@link inspectDoc}. */
export function isDamaged(read: DocRead | DamagedDoc | undefined): read is DamagedDoc {
  return read !== undefined && !("envelope" in read);
}

/** The `corrupt` error of a document damaged beyond its backup. */
export function damagedError(key: readonly string[], damaged: DamagedDoc): KeelError {
  const { file, problem, backupProblem } = damaged;
  const mainText = problem === "missing" ? "missing" : `damaged (${problem})`;
  const backupText = backupProblem === "missing" ? "missing" : `damaged (${backupProblem})`;
  return new KeelError(
    "corrupt",
    `document ${keyPath(key)} cannot be read: ${file} is ${mainText} and its backup is ${backupText}; check({ repair: true }) or an unconditional write moves it into quarantine`,
    { details: { key: keyPath(key), location: file, problem, backupProblem }, retryable: false },
  );
}

/**
 * Reads a document's state, verified: the file, or — when the file is damaged (or gone while
 * its backup is not) — the `.bak`, with a `served-backup` warning. Both bad is `corrupt` with the
 * location; never `undefined` for data that exists but cannot be read. Without `withValue`
 * (writes and listings need only the version), the envelope's `value` may be `null`.
 */
export function readDocState(context: FsContext, key: readonly string[], withValue = true): DocRead | undefined {
  const read = inspectDoc(context, key, withValue);
  if (isDamaged(read)) throw damagedError(key, read);
  if (read?.recovered) warnServedBackup(context, read);
  return read;
}

function warnServedBackup(context: FsContext, read: DocRead): void {
  const { location, problem } = read.recovered!;
  const why = problem === "missing" ? "is missing" : `is damaged (${problem})`;
  context.warn({
    type: "served-backup",
    location,
    message: `${location} ${why}; served its backup (version ${read.envelope.version}, one write older: the version went back from ${read.ceiling}); the next write continues at version ${read.ceiling + 1} or above`,
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

/** The version a put gives a key: the rules' decision, raised above every version a damaged file may have acknowledged. */
function putVersion(current: DocRead | DamagedDoc | undefined, condition: PutCondition, key: readonly string[]): number {
  if (isDamaged(current)) {
    if (!("unconditional" in condition)) throw damagedError(key, current);
    return current.ceiling + 1;
  }
  const version = decidePut(current?.envelope, condition, keyPath(key));
  if (version.isErr()) throw version.error;
  return current?.source === "backup" ? Math.max(version.value, current.ceiling + 1) : version.value;
}

/** The document store: one JSON envelope file per key, replaced durably under the key's lock. */
export function createFsDocStore(context: FsContext): DocStore {
  const listing = createDocListing(context);
  const write = async (key: readonly string[], envelope: Omit<DocEnvelope, "bytes" | "key">, valueText: string, current: DocRead | DamagedDoc | undefined, valueBytes = utf8Bytes(valueText)) => {
    const file = context.paths.docFile(key);
    const bytes = Buffer.from(encodeDocEnvelope({ key, ...envelope, valueText }));
    const remembered = { ...envelope, bytes: valueBytes };
    if (current === undefined || (!isDamaged(current) && current.source === "file")) {
      await writeFileDurably(context.io, file, bytes, { root: context.paths.root, backup: current !== undefined });
      if (current === undefined) listing.added(key);
    } else {
      // Over damage: the damaged bytes go into quarantine (kept, with the reason), then the new
      // document is written as its own backup first and as the file second, so the file is
      // never more than one version above its backup (the rule `inspectDoc` relies on).
      const damaged = isDamaged(current);
      const problem = damaged ? `${current.problem}; its backup: ${current.backupProblem}` : current.recovered!.problem;
      const reason = damaged
        ? `the document and its backup were damaged (${problem}); replaced by an unconditional write at version ${envelope.version}`
        : `the document was damaged (${problem}) and its backup served; replaced by a write at version ${envelope.version}`;
      const entry = await quarantineFiles(context, key, damaged ? [file, `${file}${BACKUP_SUFFIX}`] : [file], reason);
      await writeFileDurably(context.io, `${file}${BACKUP_SUFFIX}`, bytes, { root: context.paths.root, backup: false });
      await writeFileDurably(context.io, file, bytes, { root: context.paths.root, backup: false });
      if (entry) context.warn({ type: "quarantined", location: file, message: `${reason}; ${quarantinedSentence(key, entry)}` });
    }
    context.docCache.remember(file, bytes, key, remembered, valueText);
  };

  return {
    get: (key) => {
      const segments = validateKey(key);
      if (segments.isErr()) return errAsync(segments.error);
      return context.operation("read document", () => {
        const read = readDocState(context, segments.value);
        if (!read || read.envelope.deleted) return undefined;
        const { version, updatedAt, value } = read.envelope;
        const doc: Doc = { key: [...segments.value], value, version, updatedAt };
        if (read.recovered) doc.recovered = { ...read.recovered };
        return doc;
      });
    },
    put: (key, value, condition) => {
      const segments = validateKey(key);
      if (segments.isErr()) return errAsync(segments.error);
      const parsed = validatePutCondition(condition);
      if (parsed.isErr()) return errAsync(parsed.error);
      const encoded = encodeValue(value, context.maxValueBytes);
      if (encoded.isErr()) return errAsync(encoded.error);
      const { text, bytes } = encoded.value;
      return context.operation("write document", () =>
        underDocLock(context, segments.value, parsed.value.fence, async () => {
          const current = inspectDoc(context, segments.value, false);
          const version = putVersion(current, parsed.value, segments.value);
          const stored = JSON.parse(text) as JsonValue;
          const updatedAt = isoNow(context);
          await write(segments.value, { version, updatedAt, deleted: false, value: stored }, text, current, bytes);
          // `stored` is the caller's own copy: the cache keeps the text, not this object.
          return { key: [...segments.value], value: stored, version, updatedAt };
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
          const current = inspectDoc(context, segments.value, false);
          let deleted: boolean;
          let version: number;
          if (isDamaged(current)) {
            if (!("unconditional" in parsed.value)) throw damagedError(segments.value, current);
            deleted = true;
            version = current.ceiling + 1;
          } else {
            const decided = decideDelete(current?.envelope, parsed.value, keyPath(segments.value));
            if (decided.isErr()) throw decided.error;
            deleted = decided.value;
            version = Math.max((current?.envelope.version ?? 0) + 1, current?.source === "backup" ? current.ceiling + 1 : 0);
          }
          if (deleted && current) await write(segments.value, { version, updatedAt: isoNow(context), deleted: true, value: null }, "null", current);
          return deleted;
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
        const items: DocMeta[] = [];
        const damaged: DamagedEntry[] = [];
        let last: string[] | undefined;
        let more = false;
        for (const key of listing.keysAfter(segments.value, after)) {
          const read = inspectDoc(context, key, false);
          if (read === undefined || (!isDamaged(read) && read.envelope.deleted)) continue;
          if (items.length + damaged.length === limit) {
            more = true;
            break;
          }
          last = key;
          if (isDamaged(read)) {
            damaged.push({ key, location: read.file, problem: `${read.problem}; its backup: ${read.backupProblem}` });
            continue;
          }
          if (read.recovered) warnServedBackup(context, read);
          const meta: DocMeta = { key, version: read.envelope.version, updatedAt: read.envelope.updatedAt, bytes: read.envelope.bytes };
          if (read.recovered) meta.recovered = { ...read.recovered };
          items.push(meta);
        }
        const result: DocPage = { items };
        if (damaged.length > 0) result.damaged = damaged;
        if (more && last) result.next = keyCursor(last);
        return result;
      });
    },
  };
}

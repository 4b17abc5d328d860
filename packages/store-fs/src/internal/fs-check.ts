import path from "node:path";
import { KeelError, isSafeName, type JsonValue } from "@keel/core";
import { type IntegrityProblem, type IntegrityRepair, type IntegrityReport } from "@keel/store";
import { keyPath, LOCK_INIT_PREFIX, processAlive } from "@keel/store/kit";
import { encodeDocEnvelope } from "./doc-envelope.js";
import { listQuarantine, quarantineFiles, quarantinedSentence } from "./doc-quarantine.js";
import { isoNow, type FsContext } from "./fs-context.js";
import { inspectDoc, isDamaged, type DamagedDoc, type DocRead } from "./fs-docs.js";
import { ensureDirectory, writeFileDurably } from "./fs-durable-write.js";
import { explainedBy, findInternalForeign, foreignKind, lockEntryMovable, quarantineForeign, type ForeignEntry } from "./fs-foreign.js";
import { closeQuietly, isErrno } from "./fs-io.js";
import type { LogView } from "./log-index.js";
import { inspectLeaseDirectory } from "./fs-leases.js";
import { createLeaseDirectory } from "./lease-entry.js";
import { readBootRecord } from "./lease-epoch.js";
import { writeLayout } from "./store-layout.js";
import { removeBuilding } from "./fs-lock.js";
import {
  BACKUP_SUFFIX,
  INTERNAL_DIRECTORY,
  segmentOfDirectory,
  segmentOfDocFile,
  segmentOfLogFile,
  temporaryFileWriter,
} from "./fs-paths.js";

interface Findings {
  repaired: IntegrityRepair[];
  problems: IntegrityProblem[];
}

interface Found {
  docs: { key: string[]; file: string }[];
  logs: { key: string[]; file: string }[];
  temporaries: string[];
  /** Symbolic links, FIFOs, devices and sockets inside the key tree (never followed or opened). */
  foreign: ForeignEntry[];
}

/** Walks the key tree: documents, logs and leftover temporary files. */
function walkTree(context: FsContext): Found {
  const found: Found = { docs: [], logs: [], temporaries: [], foreign: [] };
  const docFiles = new Set<string>();
  const walk = (directory: string, segments: readonly string[]) => {
    let entries;
    try {
      entries = context.io.readdirSync(directory);
    } catch (error) {
      if (isErrno(error, "ENOENT", "ENOTDIR")) return;
      throw error;
    }
    for (const entry of entries) {
      if (segments.length === 0 && entry.name === INTERNAL_DIRECTORY) continue;
      const full = path.join(directory, entry.name);
      const what = foreignKind(entry);
      if (what) {
        found.foreign.push({ location: full, what, repair: "quarantine" });
        continue;
      }
      if (entry.isDirectory()) {
        const segment = segmentOfDirectory(entry.name);
        if (segment !== undefined) walk(full, [...segments, segment]);
        continue;
      }
      if (temporaryFileWriter(entry.name) !== undefined) found.temporaries.push(full);
      // A document is found by its file, or by its backup alone (its file gone).
      const docFile = entry.name.endsWith(BACKUP_SUFFIX) ? entry.name.slice(0, -BACKUP_SUFFIX.length) : entry.name;
      const doc = segmentOfDocFile(docFile);
      const docPath = path.join(directory, docFile);
      if (doc !== undefined && !docFiles.has(docPath)) {
        docFiles.add(docPath);
        found.docs.push({ key: [...segments, doc], file: docPath });
      }
      const log = segmentOfLogFile(entry.name);
      if (log !== undefined) found.logs.push({ key: [...segments, log], file: full });
    }
  };
  walk(context.paths.root, []);
  return found;
}


/** A temporary file is left over when its writer is gone or it is older than the stale-lock time. */
function checkTemporaries(context: FsContext, files: readonly string[], repair: boolean, findings: Findings): void {
  for (const file of files) {
    const writer = temporaryFileWriter(path.basename(file));
    let age: number;
    try {
      age = Date.now() - context.io.lstatSync(file).mtimeMs;
    } catch (error) {
      if (isErrno(error, "ENOENT")) continue;
      throw error;
    }
    const leftover = (writer !== undefined && writer !== process.pid && !processAlive(writer)) || age > context.lockStaleMs;
    if (!leftover) continue;
    if (!repair) {
      findings.problems.push({ code: "orphan", location: file, message: `leftover temporary file of an interrupted write; check({ repair: true }) removes it` });
      continue;
    }
    try {
      context.io.unlinkSync(file);
    } catch (error) {
      if (!isErrno(error, "ENOENT")) throw error;
    }
    findings.repaired.push({ action: "removed-tmp", location: file, message: "removed a leftover temporary file of an interrupted write" });
  }
}

/**
 * Checks one document. With `repair`, a damaged file with a good backup gets the backup's value
 * back as a new version above every version it may have acknowledged, and one damaged beyond its
 * backup becomes a tombstone at such a version: either way the damaged bytes go into quarantine
 * first, and the key is readable and writable again.
 */
async function checkDoc(context: FsContext, key: string[], repair: boolean, findings: Findings): Promise<void> {
  const first = inspectDoc(context, key, false);
  if (first === undefined || (!isDamaged(first) && first.source === "file")) return;
  const release = repair ? await context.locks.acquire([`doc:${keyPath(key)}`]) : undefined;
  try {
    const read = inspectDoc(context, key, true);
    if (read === undefined || (!isDamaged(read) && read.source === "file")) return;
    const file = context.paths.docFile(key);
    if (!isDamaged(read)) {
      const { problem } = read.recovered!;
      const served = read.envelope.version;
      if (!repair) {
        findings.problems.push({
          code: "corrupt",
          location: file,
          message: `${problem}; reads serve its good backup (version ${served}); check({ repair: true }) restores the file from it (the damaged bytes kept in quarantine)`,
        });
        return;
      }
      const version = read.ceiling + 1;
      const { value, deleted } = read.envelope;
      const entry = await replaceDamaged(context, key, read, { version, deleted, value }, `the document was damaged (${problem}); check({ repair: true }) restored the value of version ${served} from its backup as version ${version}`);
      findings.repaired.push({
        action: "restored-bak",
        location: file,
        message: `${problem}; restored the value of version ${served} from its backup as version ${version} (the version a write after the damage continues from: the last acknowledged write, up to version ${read.ceiling}, is lost); ${quarantinedSentence(key, entry)}`,
      });
      return;
    }
    const problem = `${read.problem}, and its backup is ${read.backupProblem}`;
    if (!repair) {
      findings.problems.push({ code: "corrupt", location: file, message: `${problem}; check({ repair: true }) moves both into quarantine and leaves the key writable` });
      return;
    }
    const version = read.ceiling + 1;
    const entry = await replaceDamaged(context, key, read, { version, deleted: true, value: null }, `the document and its backup were damaged (${problem}); check({ repair: true }) replaced them by a tombstone at version ${version}`);
    findings.repaired.push({
      action: "quarantined",
      location: file,
      message: `${problem}; moved into quarantine and left a tombstone at version ${version}: the key reads as missing and is writable again; ${quarantinedSentence(key, entry)}`,
    });
  } finally {
    release?.();
  }
}

/** Moves a damaged document's files into quarantine and writes `next` as its file and its backup. */
async function replaceDamaged(
  context: FsContext,
  key: string[],
  read: DocRead | DamagedDoc,
  next: { version: number; deleted: boolean; value: JsonValue },
  reason: string,
): Promise<string | undefined> {
  const file = context.paths.docFile(key);
  const damagedFiles = isDamaged(read) ? [file, `${file}${BACKUP_SUFFIX}`] : [file];
  const entry = await quarantineFiles(context, key, damagedFiles, reason);
  const valueText = JSON.stringify(next.value);
  const bytes = Buffer.from(encodeDocEnvelope({ key, version: next.version, updatedAt: isoNow(context), deleted: next.deleted, value: next.value, valueText }));
  await writeFileDurably(context.io, `${file}${BACKUP_SUFFIX}`, bytes, { root: context.paths.root, backup: false });
  await writeFileDurably(context.io, file, bytes, { root: context.paths.root, backup: false });
  return entry;
}

/** How many scans a check of a store opened with `create: false` makes of a log whose tail keeps changing. */
const QUIET_LOG_SCANS = 8;

/** What a scan of a log found wrong: its torn tail, or the damage it stopped at. */
function logProblem(view: LogView | undefined, error: unknown): string | undefined {
  if (error !== undefined) return KeelError.is(error, "corrupt") ? `corrupt:${String(error.details.offset)}:${error.message}` : undefined;
  return view?.tail ? `tail:${view.tail.offset}:${view.tail.bytes}:${view.tail.lost?.offset ?? ""}` : undefined;
}

/**
 * A log scanned from the start by the check of a store opened with `create: false`, which takes
 * no lock (taking one renames a token, and may build the lock's directory). Lines up to the last
 * batch end never change while the file keeps its identity (an append writes after them, a
 * delete renames a new file over the old one, which the open descriptor keeps reading), each is
 * verified by its CRC, and a batch counts only with its end line: what a scan finds there is
 * there. Only the bytes after it can be an append in flight in another process rather than a
 * torn tail (or damage a concurrent cut is removing), so a problem counts only when a scan made
 * after no live process was seen holding the log's lock (`LockManager.awaitUnheld`) finds exactly
 * what the scan before it found: an append in flight ends before its lock is free, and has then
 * committed (the committed end moved past the tail) or been cut by its writer, so it never shows
 * the same twice. `unavailable` when the log keeps changing under its writers for every scan.
 */
async function quietLogView(context: FsContext, resource: string, file: string): Promise<LogView> {
  let previous: string | undefined;
  for (let scan = 0; scan < QUIET_LOG_SCANS; scan++) {
    if (scan > 0) await context.locks.awaitUnheld(resource);
    context.logIndex.forget(file, true);
    let view: LogView | undefined;
    let failure: unknown;
    try {
      view = context.logIndex.open(file, "r", { whole: true });
    } catch (error) {
      failure = error;
    }
    const problem = logProblem(view, failure);
    if (problem === undefined || problem === previous) {
      if (failure !== undefined) throw failure;
      return view!;
    }
    closeQuietly(context.io, view?.fd);
    if (failure !== undefined && !KeelError.is(failure, "corrupt")) throw failure;
    previous = problem;
  }
  throw new KeelError("unavailable", `log ${resource.slice("log:".length)} kept changing while check() read it without its lock (a store opened with create: false writes nothing, locks included); run the check again`, {
    details: { location: file },
    retryable: true,
  });
}

async function checkLog(context: FsContext, key: string[], file: string, repair: boolean, findings: Findings): Promise<void> {
  // Opened with create: false, a check that repairs nothing writes nothing: only this process's
  // own writers are held off (in memory), other processes' are read around (see quietLogView).
  const quiet = context.quietReads && !repair;
  const resource = `log:${keyPath(key)}`;
  const release = quiet ? await context.locks.acquireLocal(resource) : await context.locks.acquire([resource]);
  let fd: number | undefined;
  try {
    let view: LogView;
    if (quiet) view = await quietLogView(context, resource, file);
    else {
      context.logIndex.forget(file);
      // From the start, never from an id sidecar: the check reads every byte (and saves a fresh sidecar of a big log).
      view = context.logIndex.open(file, repair ? "r+" : "r", { whole: true });
    }
    fd = view.fd;
    if (!view.tail || fd === undefined) return;
    const location = `${file}:${view.tail.offset}`;
    const lost = view.tail.lost;
    // Unsynced batches a power loss damaged (appended with durable: false), or an append that never completed.
    const what = lost
      ? `unsynced batches of ${view.tail.bytes} bytes damaged at byte ${lost.offset} (${lost.problem}), as a power loss leaves appends made with durable: false`
      : `torn tail of ${view.tail.bytes} bytes (an append that never completed and was never acknowledged)`;
    if (!repair) {
      findings.problems.push({ code: "corrupt", location, message: `${what}; check({ repair: true }) or the next append cuts it` });
      return;
    }
    context.io.ftruncateSync(fd, view.tail.offset);
    await context.io.fdatasync(fd);
    findings.repaired.push({
      action: "truncated-tail",
      location,
      message: lost ? `cut ${what}` : `cut a torn tail of ${view.tail.bytes} bytes (an append that never completed)`,
    });
  } catch (error) {
    if (!KeelError.is(error, "corrupt")) throw error;
    const offset = error.details.offset;
    findings.problems.push({ code: "corrupt", location: `${file}:${typeof offset === "number" ? offset : 0}`, message: error.message });
  } finally {
    closeQuietly(context.io, fd);
    release();
  }
}

/** The names in one of the internal directories; none when it is missing or foreign (never listed through a link). */
function listDirectory(context: FsContext, directory: string): string[] {
  try {
    context.guard.contain(directory);
    return context.io.readdirSync(directory).map((entry) => entry.name);
  } catch (error) {
    if (isErrno(error, "ENOENT", "ENOTDIR") || KeelError.is(error, "corrupt")) return [];
    throw error;
  }
}

/** True when `location` is a real directory (not a link to one). */
function isDirectory(context: FsContext, location: string): boolean {
  try {
    return context.io.lstatSync(location).isDirectory();
  } catch (error) {
    if (isErrno(error, "ENOENT")) return false;
    throw error;
  }
}

/** True when `directory` has no entry (what a power cut may leave of a lock or lease directory). */
function isEmptyDirectory(context: FsContext, directory: string): boolean {
  try {
    return context.io.readdirSync(directory).length === 0;
  } catch (error) {
    if (isErrno(error, "ENOENT", "ENOTDIR")) return false;
    throw error;
  }
}

/** Reports, or with `repair` rebuilds, an empty lock or lease directory: read as free (never held) meanwhile. */
async function checkEmpty(location: string, what: "lock" | "lease", repair: boolean, findings: Findings, rebuild: () => Promise<void>): Promise<void> {
  const reading = what === "lock" ? "read as a free lock" : "read as a lease never held";
  if (!repair) {
    findings.problems.push({
      code: "orphan",
      location,
      message: `an empty ${what} directory, as a power cut leaves one whose entry was not durable yet; ${reading} (the next change rebuilds it); check({ repair: true }) rebuilds it now`,
    });
    return;
  }
  await rebuild();
  findings.repaired.push({ action: "removed-stale-lock", location, message: `rebuilt an empty ${what} directory (a power cut before its entry was durable), ${reading}` });
}

async function checkLeases(context: FsContext, repair: boolean, findings: Findings, foreign: ReadonlySet<string>): Promise<void> {
  const names = listDirectory(context, context.paths.leases);
  checkTemporaries(
    context,
    names.filter((name) => temporaryFileWriter(name) !== undefined).map((name) => path.join(context.paths.leases, name)),
    repair,
    findings,
  );
  for (const name of names) {
    const location = path.join(context.paths.leases, name);
    if (name.startsWith(LOCK_INIT_PREFIX)) {
      checkBuilding(context, location, name, repair, findings, "a lease directory");
      continue;
    }
    if (name.startsWith(".") || foreign.has(location)) continue;
    if (!isSafeName(name) || !isDirectory(context, location)) {
      // A layout-1 lease file that could not be moved over (damaged), or something the store did not make.
      findings.problems.push({ code: "corrupt", location, message: `${location} is not a lease directory; not repairable` });
      continue;
    }
    if (isEmptyDirectory(context, location)) {
      await checkEmpty(location, "lease", repair, findings, () => createLeaseDirectory(context.io, context.paths, name));
      continue;
    }
    const problem = inspectLeaseDirectory(context, name);
    if (problem) findings.problems.push({ code: "corrupt", location, message: `${problem}; not repairable` });
  }
  if (foreign.has(context.paths.boot) || foreign.has(context.paths.internal)) return;
  try {
    // Not through a link on the way (a foreign `_keel` is reported above).
    context.guard.contain(context.paths.internal);
    readBootRecord(context);
  } catch (error) {
    if (!KeelError.is(error, "corrupt")) throw error;
    findings.problems.push({ code: "corrupt", location: context.paths.boot, message: `${error.message}; not repairable` });
  }
}

/** A directory being built (`.init.<pid>.…`) whose builder died before renaming it into place. */
function checkBuilding(context: FsContext, location: string, name: string, repair: boolean, findings: Findings, what: string): void {
  const pid = Number(name.slice(LOCK_INIT_PREFIX.length).split(".")[0]);
  if (pid === process.pid || processAlive(pid)) return;
  if (repair) {
    removeBuilding(context.io, location);
    findings.repaired.push({ action: "removed-tmp", location, message: `removed ${what} left half-built by a dead process` });
  } else {
    findings.problems.push({ code: "orphan", location, message: `${what} left half-built by a dead process` });
  }
}

async function checkLocks(context: FsContext, repair: boolean, findings: Findings): Promise<void> {
  for (const name of listDirectory(context, context.paths.locks)) {
    const location = path.join(context.paths.locks, name);
    if (name.startsWith(LOCK_INIT_PREFIX)) {
      checkBuilding(context, location, name, repair, findings, "a lock directory");
      continue;
    }
    // A link in place of a lock directory is a foreign entry (never listed through).
    if (!isDirectory(context, location)) continue;
    if (isEmptyDirectory(context, location)) {
      await checkEmpty(location, "lock", repair, findings, () => context.locks.initialize(location));
      continue;
    }
    const seen = context.locks.inspect(location);
    if (seen.state === "broken") {
      findings.problems.push({ code: "corrupt", location, message: `lock directory holds ${JSON.stringify(seen.entries)}, not one token; remove it when no process uses the store` });
      continue;
    }
    if (seen.state !== "held" || !seen.stale) continue;
    const holder = seen.holder ? `process ${seen.holder.pid} (host ${seen.holder.host})` : "an unknown holder";
    if (!repair) {
      findings.problems.push({ code: "orphan", location, message: `stale lock of ${holder}; check({ repair: true }) frees it` });
    } else if (context.locks.free(location, seen.entry)) {
      findings.repaired.push({ action: "removed-stale-lock", location, message: `freed a stale lock of ${holder}` });
    }
  }
}

/**
 * Checks the whole store: every document (with its backup), every log (scanned from the start
 * under its lock), leases, leftover temporary files and stale locks. With `repair`, restores
 * damaged documents from good backups, cuts torn log tails, removes leftover temporary files
 * and stale locks; damage that cannot be repaired safely is reported, never papered over.
 */
export async function checkStore(context: FsContext, repair: boolean): Promise<IntegrityReport> {
  const findings: Findings = { repaired: [], problems: [] };
  // Foreign entries of the internal area first: with repair, `_keel` and its directories are
  // made sound before anything below uses them.
  const internalForeign = findInternalForeign(context);
  for (const entry of internalForeign) await checkForeign(context, entry, repair, findings);
  const unmended = new Set(findings.problems.map((problem) => problem.location));
  if (repair && internalForeign.length > 0) await remakeInternal(context);
  // Locks first: the document and log checks below take locks themselves.
  await checkLocks(context, repair, findings);
  const found = walkTree(context);
  checkTemporaries(context, found.temporaries, repair, findings);
  // Staging files of id sidecars a crash left behind (the sidecars themselves are caches, checked on load).
  const sidecarStaging = listDirectory(context, context.paths.logSidecars).filter((name) => temporaryFileWriter(name) !== undefined);
  checkTemporaries(context, sidecarStaging.map((name) => path.join(context.paths.logSidecars, name)), repair, findings);
  for (const entry of found.foreign) await checkForeign(context, entry, repair, findings);
  const foreign = new Set([...unmended, ...findings.problems.map((problem) => problem.location)]);
  for (const doc of found.docs) {
    try {
      await checkDoc(context, doc.key, repair, findings);
    } catch (error) {
      // A document whose file is foreign while its backup is not: reported above.
      if (!explainedBy(error, foreign)) throw error;
    }
  }
  for (const log of found.logs) await checkLog(context, log.key, log.file, repair, findings);
  await checkLeases(context, repair, findings, foreign);
  return { ok: findings.problems.length === 0, ...findings, quarantined: listQuarantine(context) };
}

/** Reports a foreign entry, or with `repair` moves it into quarantine (see fs-foreign.ts). */
async function checkForeign(context: FsContext, entry: ForeignEntry, repair: boolean, findings: Findings): Promise<void> {
  const { location, what } = entry;
  const code = what === "a symbolic link" ? "link" : "corrupt";
  const movable = entry.repair === "quarantine" || (entry.repair === "lock-entry" && lockEntryMovable(context, location));
  if (!repair || !movable) {
    const remedy =
      entry.repair === "report"
        ? "the store only renames a lease entry, never opens it, so nothing outside is reached; it is left in place (its name is the lease's state): replace it by an empty file of the same name when no process uses the store"
        : entry.repair === "lock-entry" && repair
          ? "the store only renames a lock entry, never opens it; it is moved aside once the lock is free or stale"
          : "check({ repair: true }) moves it into quarantine";
    findings.problems.push({ code, location, message: `${what} where the store keeps its own file or directory; the store never follows or opens it (what needs it answers corrupt); ${remedy}` });
    return;
  }
  const reason = `${what} where the store keeps its own file or directory; moved aside by check({ repair: true }) without following it`;
  const quarantined = await quarantineForeign(context, entry, reason);
  if (entry.repair === "lock-entry" && isEmptyDirectory(context, path.dirname(location))) await context.locks.initialize(path.dirname(location));
  findings.repaired.push({ action: "quarantined", location, message: `${reason}; ${quarantined ? `kept in ${quarantined}` : "it was gone already"}` });
}

/** Makes the internal directories and the layout marker again after a repair moved a foreign entry away from them. */
async function remakeInternal(context: FsContext): Promise<void> {
  const { io, paths } = context;
  await ensureDirectory(io, paths.root, paths.locks);
  await ensureDirectory(io, paths.root, paths.leases);
  try {
    io.lstatSync(paths.marker);
  } catch (error) {
    if (!isErrno(error, "ENOENT")) throw error;
    writeLayout(io, paths);
  }
}

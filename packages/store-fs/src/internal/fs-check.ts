import path from "node:path";
import { KeelError, canonicalJson, isSafeName, type JsonValue } from "@keel/core";
import { type IntegrityProblem, type IntegrityRepair, type IntegrityReport } from "@keel/store";
import { keyPath } from "@keel/store/kit";
import { encodeDocEnvelope } from "./doc-envelope.js";
import { listQuarantine, quarantineFiles, quarantinedSentence } from "./doc-quarantine.js";
import { isoNow, type FsContext } from "./fs-context.js";
import { inspectDoc, isDamaged, type DamagedDoc, type DocRead } from "./fs-docs.js";
import { writeFileDurably } from "./fs-durable-write.js";
import { closeQuietly, isErrno } from "./fs-io.js";
import { inspectLeaseDirectory } from "./fs-leases.js";
import { readBootRecord } from "./lease-epoch.js";
import { INIT_PREFIX, processAlive, removeBuilding } from "./fs-lock.js";
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
  /** Symbolic links inside the key tree (never followed). */
  links: string[];
}

/** Walks the key tree: documents, logs and leftover temporary files. */
function walkTree(context: FsContext): Found {
  const found: Found = { docs: [], logs: [], temporaries: [], links: [] };
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
      if (entry.isSymbolicLink()) {
        found.links.push(full);
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
  const valueText = canonicalJson(next.value);
  const bytes = Buffer.from(encodeDocEnvelope({ key, version: next.version, updatedAt: isoNow(context), deleted: next.deleted, value: next.value, valueText }));
  await writeFileDurably(context.io, `${file}${BACKUP_SUFFIX}`, bytes, { root: context.paths.root, backup: false });
  await writeFileDurably(context.io, file, bytes, { root: context.paths.root, backup: false });
  return entry;
}

async function checkLog(context: FsContext, key: string[], file: string, repair: boolean, findings: Findings): Promise<void> {
  const release = await context.locks.acquire([`log:${keyPath(key)}`]);
  let fd: number | undefined;
  try {
    context.logIndex.forget(file);
    // From the start, never from an id sidecar: the check reads every byte (and saves a fresh sidecar of a big log).
    const view = context.logIndex.open(file, repair ? "r+" : "r", undefined, true);
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

function listDirectory(context: FsContext, directory: string): string[] {
  try {
    return context.io.readdirSync(directory).map((entry) => entry.name);
  } catch (error) {
    if (isErrno(error, "ENOENT")) return [];
    throw error;
  }
}

async function checkLeases(context: FsContext, repair: boolean, findings: Findings): Promise<void> {
  const names = listDirectory(context, context.paths.leases);
  checkTemporaries(
    context,
    names.filter((name) => temporaryFileWriter(name) !== undefined).map((name) => path.join(context.paths.leases, name)),
    repair,
    findings,
  );
  for (const name of names) {
    const location = path.join(context.paths.leases, name);
    if (name.startsWith(INIT_PREFIX)) {
      checkBuilding(context, location, name, repair, findings, "a lease directory");
      continue;
    }
    if (name.startsWith(".")) continue;
    if (!isSafeName(name) || !context.io.statSync(location).isDirectory()) {
      // A layout-1 lease file that could not be moved over (damaged), or something the store did not make.
      findings.problems.push({ code: "corrupt", location, message: `${location} is not a lease directory; not repairable` });
      continue;
    }
    const problem = inspectLeaseDirectory(context, name);
    if (problem) findings.problems.push({ code: "corrupt", location, message: `${problem}; not repairable` });
  }
  try {
    readBootRecord(context);
  } catch (error) {
    if (!KeelError.is(error, "corrupt")) throw error;
    findings.problems.push({ code: "corrupt", location: context.paths.boot, message: `${error.message}; not repairable` });
  }
}

/** A directory being built (`.init.<pid>.…`) whose builder died before renaming it into place. */
function checkBuilding(context: FsContext, location: string, name: string, repair: boolean, findings: Findings, what: string): void {
  const pid = Number(name.slice(INIT_PREFIX.length).split(".")[0]);
  if (pid === process.pid || processAlive(pid)) return;
  if (repair) {
    removeBuilding(context.io, location);
    findings.repaired.push({ action: "removed-tmp", location, message: `removed ${what} left half-built by a dead process` });
  } else {
    findings.problems.push({ code: "orphan", location, message: `${what} left half-built by a dead process` });
  }
}

function checkLocks(context: FsContext, repair: boolean, findings: Findings): void {
  for (const name of listDirectory(context, context.paths.locks)) {
    const location = path.join(context.paths.locks, name);
    if (name.startsWith(INIT_PREFIX)) {
      checkBuilding(context, location, name, repair, findings, "a lock directory");
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
  // Locks first: the document and log checks below take locks themselves.
  checkLocks(context, repair, findings);
  const found = walkTree(context);
  checkTemporaries(context, found.temporaries, repair, findings);
  // Staging files of id sidecars a crash left behind (the sidecars themselves are caches, checked on load).
  const sidecarStaging = listDirectory(context, context.paths.logSidecars).filter((name) => temporaryFileWriter(name) !== undefined);
  checkTemporaries(context, sidecarStaging.map((name) => path.join(context.paths.logSidecars, name)), repair, findings);
  for (const link of found.links) {
    findings.problems.push({
      code: "link",
      location: link,
      message: `a symbolic link inside the store; the store never follows one (keys under it cannot be written or read): move what it points at into the store, or remove it`,
    });
  }
  for (const doc of found.docs) await checkDoc(context, doc.key, repair, findings);
  for (const log of found.logs) await checkLog(context, log.key, log.file, repair, findings);
  await checkLeases(context, repair, findings);
  return { ok: findings.problems.length === 0, ...findings, quarantined: listQuarantine(context) };
}

import path from "node:path";
import { KeelError, isSafeName } from "@keel/core";
import { type IntegrityProblem, type IntegrityRepair, type IntegrityReport } from "@keel/store";
import { keyPath } from "@keel/store/kit";
import { decodeDocEnvelope } from "./doc-envelope.js";
import type { FsContext } from "./fs-context.js";
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
}

/** Walks the key tree: documents, logs and leftover temporary files. */
function walkTree(context: FsContext): Found {
  const found: Found = { docs: [], logs: [], temporaries: [] };
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
      if (entry.isDirectory()) {
        const segment = segmentOfDirectory(entry.name);
        if (segment !== undefined) walk(full, [...segments, segment]);
        continue;
      }
      if (temporaryFileWriter(entry.name) !== undefined) found.temporaries.push(full);
      const doc = segmentOfDocFile(entry.name);
      if (doc !== undefined) found.docs.push({ key: [...segments, doc], file: full });
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

async function checkDoc(context: FsContext, key: string[], file: string, repair: boolean, findings: Findings): Promise<void> {
  const verify = (target: string) => {
    try {
      const bytes = context.io.readFileSync(target);
      const decoded = decodeDocEnvelope(bytes.toString("utf8"), key);
      return decoded.isOk() ? { ok: true as const, bytes, version: decoded.value.version } : { ok: false as const, problem: decoded.error };
    } catch (error) {
      if (isErrno(error, "ENOENT")) return { ok: false as const, problem: "missing" };
      throw error;
    }
  };
  if (verify(file).ok) return;
  const release = repair ? await context.locks.acquire([`doc:${keyPath(key)}`]) : undefined;
  try {
    const main = verify(file);
    if (main.ok) return;
    const backup = verify(`${file}${BACKUP_SUFFIX}`);
    if (!backup.ok) {
      findings.problems.push({ code: "corrupt", location: file, message: `${main.problem}, and its backup is ${backup.problem}; not repairable` });
    } else if (!repair) {
      findings.problems.push({
        code: "corrupt",
        location: file,
        message: `${main.problem}; reads serve its good backup (version ${backup.version}); check({ repair: true }) restores the file from it`,
      });
    } else {
      await writeFileDurably(context.io, file, backup.bytes, { root: context.paths.root, backup: false });
      findings.repaired.push({ action: "restored-bak", location: file, message: `${main.problem}; restored version ${backup.version} from its backup` });
    }
  } finally {
    release?.();
  }
}

async function checkLog(context: FsContext, key: string[], file: string, repair: boolean, findings: Findings): Promise<void> {
  const release = await context.locks.acquire([`log:${keyPath(key)}`]);
  let fd: number | undefined;
  try {
    context.logIndex.forget(file);
    const view = context.logIndex.open(file, repair ? "r+" : "r");
    fd = view.fd;
    if (!view.tail || fd === undefined) return;
    const location = `${file}:${view.tail.offset}`;
    if (!repair) {
      findings.problems.push({
        code: "corrupt",
        location,
        message: `torn tail of ${view.tail.bytes} bytes (an append that never completed and was never acknowledged); check({ repair: true }) or the next append cuts it`,
      });
      return;
    }
    context.io.ftruncateSync(fd, view.tail.offset);
    await context.io.fdatasync(fd);
    findings.repaired.push({ action: "truncated-tail", location, message: `cut a torn tail of ${view.tail.bytes} bytes (an append that never completed)` });
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
  for (const doc of found.docs) await checkDoc(context, doc.key, doc.file, repair, findings);
  for (const log of found.logs) await checkLog(context, log.key, log.file, repair, findings);
  await checkLeases(context, repair, findings);
  return { ok: findings.problems.length === 0, ...findings };
}

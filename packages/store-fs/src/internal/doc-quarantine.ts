import { randomBytes } from "node:crypto";
import path from "node:path";
import { KeelError } from "@keel/core";
import type { QuarantineEntry } from "@keel/store";
import { keyPath } from "@keel/store/kit";
import { isoNow, type FsContext } from "./fs-context.js";
import { writeFileDurably } from "./fs-durable-write.js";
import { fsyncDirectory, isErrno } from "./fs-io.js";

/**
 * The quarantine: damaged document files moved aside, never deleted by the store.
 *
 * `<root>/_keel/quarantine/<time>-<random>/` holds the damaged files under their own names
 * (`engineer.json`, `engineer.json.bak`) and `reason.json` (format, key, where they were, why,
 * when). A file is moved in by one rename (same file system: atomic, nothing copied), so a
 * crash leaves it either in place or in quarantine; the reason is written first, so an entry
 * never holds files without saying why.
 */

const QUARANTINE_FORMAT = "keel.quarantine.v1";
const REASON_FILE = "reason.json";

/** The quarantine directory of a store. */
export function quarantineDirectory(context: FsContext): string {
  return path.join(context.paths.internal, "quarantine");
}

/**
 * The highest version a damaged document file's bytes still show (`"version": N` near its
 * start), or 0. Only ever used to raise the next version, never to serve anything.
 */
export function versionShownBy(bytes: Buffer | undefined): number {
  if (!bytes) return 0;
  const match = /"version"\s*:\s*(\d{1,15})/.exec(bytes.subarray(0, 4096).toString("latin1"));
  return match ? Number(match[1]) : 0;
}

/**
 * Moves the existing ones of `files` (a document's file and backup, or an entry the store will
 * not follow or open: a symbolic link, a FIFO) into a new quarantine entry with the reason, each
 * by one rename that moves the entry itself, never what a link points at. `names` are the names
 * they get there (default: their own). Returns the entry's directory, or `undefined` when none
 * of the files exists.
 */
export async function quarantineFiles(
  context: FsContext,
  key: readonly string[],
  files: readonly string[],
  reason: string,
  names: readonly string[] = files.map((file) => path.basename(file)),
): Promise<string | undefined> {
  const present = files.filter((file) => {
    try {
      return !context.io.lstatSync(file).isDirectory();
    } catch (error) {
      if (isErrno(error, "ENOENT")) return false;
      throw error;
    }
  });
  if (present.length === 0) return undefined;
  // Never written through a link on the way (check({ repair: true }) mends `_keel` itself first).
  context.guard.contain(quarantineDirectory(context));
  const at = isoNow(context);
  const entry = path.join(quarantineDirectory(context), `${at.replace(/[:.]/g, "-")}-${randomBytes(4).toString("hex")}`);
  const nameOf = (file: string) => names[files.indexOf(file)] ?? path.basename(file);
  const reasonText = `${JSON.stringify({ format: QUARANTINE_FORMAT, key, from: present[0], files: present.map(nameOf), reason, at }, null, 2)}\n`;
  await writeFileDurably(context.io, path.join(entry, REASON_FILE), Buffer.from(reasonText), { root: context.paths.root, backup: false });
  for (const file of present) context.io.renameSync(file, path.join(entry, nameOf(file)));
  await fsyncDirectory(context.io, entry);
  await fsyncDirectory(context.io, path.dirname(present[0]!));
  return entry;
}

/** Everything in the quarantine, oldest first; an entry whose reason cannot be read is listed with that said. */
export function listQuarantine(context: FsContext): QuarantineEntry[] {
  const directory = quarantineDirectory(context);
  let names: string[];
  try {
    // Never listed through a link (check() reports one and moves it aside).
    context.guard.contain(directory);
    names = context.io.readdirSync(directory).filter((entry) => entry.isDirectory()).map((entry) => entry.name).sort();
  } catch (error) {
    if (isErrno(error, "ENOENT", "ENOTDIR") || KeelError.is(error, "corrupt")) return [];
    throw error;
  }
  return names.map((name): QuarantineEntry => {
    const location = path.join(directory, name);
    try {
      const reason = JSON.parse(context.io.readFileSync(path.join(location, REASON_FILE)).toString("utf8")) as Record<string, unknown>;
      return {
        key: Array.isArray(reason.key) ? reason.key.map(String) : [],
        location,
        from: String(reason.from ?? ""),
        reason: String(reason.reason ?? ""),
        at: String(reason.at ?? ""),
      };
    } catch {
      return { key: [], location, from: "", reason: `the entry's ${REASON_FILE} cannot be read`, at: "" };
    }
  });
}

/** The sentence a report gives for a quarantined document. */
export function quarantinedSentence(key: readonly string[], entry: string | undefined): string {
  return entry ? `the damaged bytes of ${keyPath(key)} are kept in ${entry}` : `nothing of ${keyPath(key)} was left to keep`;
}

import { createHash, randomBytes } from "node:crypto";
import path from "node:path";
import { KeelError } from "@keel/core";
import { LOCK_INIT_PREFIX, type LeaseState } from "@keel/store/kit";
import { removeBuilding } from "./fs-lock.js";
import { ensureDirectorySync, writeFileDurablySync, writeFileDurably } from "./fs-durable-write.js";
import { fsyncDirectory, fsyncDirectorySync, isErrno, OPEN_CREATE_EXCLUSIVE, type FsIo } from "./fs-io.js";
import type { StorePaths } from "./fs-paths.js";

/**
 * A lease's state is the name of the one entry in its directory, `_keel/leases/<name>/`:
 * `<token>.<expiresAt>.<holder code>`. Changing the state is one `rename` of that entry from the
 * name the change was decided on to the new one: a compare-and-swap, since of several processes
 * renaming the same old name exactly one succeeds and the others get `ENOENT` (and decide again
 * from what they find). A rename is atomic, cannot tear, allocates nothing and writes no file
 * data; like the lease files it replaces it is not fsynced (the boot epoch covers a machine
 * crash, see lease-epoch.ts). The empty state of a new directory is token 0.
 */

/**
 * `<token>.<expiresAt>.<holder code>[.w]`: the holder in base64url, or `~` and the digest of a
 * long holder; `.w` when a fenced write checked this token the safe way (see fs-leases.ts).
 */
const ENTRY_PATTERN = /^(\d{1,16})\.(-?\d{1,16})\.([A-Za-z0-9_-]*|~[0-9a-f]{40})(\.w)?$/;
/** Holders up to this many base64url characters live in the entry name itself (entry names stay far below 255 bytes). */
const INLINE_HOLDER_MAX = 176;
/** How often a read retries a directory that showed more than one entry (a rename seen half-way by a listing). */
const LISTING_RETRIES = 20;

/** A lease directory's entry and the state it names (`undefined`: never held). */
export interface LeaseEntry {
  entry: string;
  state: LeaseState | undefined;
  /** The code of the state's holder, for the next state of the same holder. */
  code: string;
  /** True when a fenced write checked this token the safe way: ending the token then takes the lease's lock. */
  watched: boolean;
}

/** The entry name of a state (whole milliseconds: the store decides lease times in them). */
export function entryName(state: LeaseState, code: string, watched: boolean): string {
  return `${state.token}.${state.expiresAt}.${code}${watched ? ".w" : ""}`;
}

/** The state of a lease directory that does not exist yet: never held. */
export const NEVER_HELD: LeaseEntry = { entry: "0.0.", state: undefined, code: "", watched: false };

/** Where long holder names are kept (content-addressed, written once). */
export function holdersDirectory(paths: StorePaths): string {
  return path.join(paths.internal, "lease-holders");
}

/** The directory of lease `name`. */
export function leaseDirectory(paths: StorePaths, name: string): string {
  return path.join(paths.leases, name);
}

function digestOf(holder: string): string {
  return createHash("sha256").update(holder).digest("hex").slice(0, 40);
}

/**
 * Holder codes and the files of long holders. A holder of up to {@link INLINE_HOLDER_MAX}
 * base64url characters is its own code; a longer one is `~<digest>`, its text kept in
 * `_keel/lease-holders/<digest>` (written durably before any entry names it, read once per process).
 */
export interface HolderBook {
  /** The code of `holder`, writing its file first when it is long. */
  code(holder: string): Promise<string>;
  /** {@link HolderBook.code}, synchronously (the layout upgrade at open). */
  codeSync(holder: string): string;
  /** The holder a code names; `corrupt` when its file is missing or damaged. */
  holder(code: string, location: string): string;
}

/**
 * Creates the {@link HolderBook} of one store. `contain` is the store's path guard: the
 * holders' directory is never used through a link.
 */
export function createHolderBook(io: FsIo, paths: StorePaths, contain: (directory: string) => void): HolderBook {
  const known = new Map<string, string>();
  const directory = holdersDirectory(paths);
  const fileOf = (digest: string) => {
    contain(directory);
    return path.join(directory, digest);
  };
  const inline = (holder: string) => {
    const code = Buffer.from(holder, "utf8").toString("base64url");
    return code.length <= INLINE_HOLDER_MAX ? code : undefined;
  };
  return {
    async code(holder) {
      const code = inline(holder);
      if (code !== undefined) return code;
      const digest = digestOf(holder);
      if (known.get(digest) === holder) return `~${digest}`;
      contain(directory);
      if (!entryExists(io, directory, digest)) {
        await writeFileDurably(io, fileOf(digest), Buffer.from(holder, "utf8"), { root: paths.root, backup: false });
      }
      known.set(digest, holder);
      return `~${digest}`;
    },
    codeSync(holder) {
      const code = inline(holder);
      if (code !== undefined) return code;
      const digest = digestOf(holder);
      contain(directory);
      if (!entryExists(io, directory, digest)) {
        ensureDirectorySync(io, paths.root, directory);
        writeFileDurablySync(io, fileOf(digest), Buffer.from(holder, "utf8"));
      }
      known.set(digest, holder);
      return `~${digest}`;
    },
    holder(code, location) {
      if (!code.startsWith("~")) return Buffer.from(code, "base64url").toString("utf8");
      const digest = code.slice(1);
      const remembered = known.get(digest);
      if (remembered !== undefined) return remembered;
      let text: string;
      try {
        text = io.readFileSync(fileOf(digest)).toString("utf8");
      } catch (error) {
        if (!isErrno(error, "ENOENT")) throw error;
        throw leaseCorrupt(location, `its holder file ${fileOf(digest)} is missing`);
      }
      if (digestOf(text) !== digest) throw leaseCorrupt(location, `its holder file ${fileOf(digest)} is damaged`);
      known.set(digest, text);
      return text;
    },
  };
}

/** The `corrupt` error of a damaged lease directory. */
export function leaseCorrupt(location: string, problem: string): KeelError {
  return new KeelError("corrupt", `lease ${location} is damaged: ${problem}`, { details: { location, problem }, retryable: false });
}

/** Decodes one entry name: its lease entry, or `undefined` when it is not a state. */
export function decodeEntry(entry: string, holders: HolderBook, location: string): LeaseEntry | undefined {
  const match = ENTRY_PATTERN.exec(entry);
  if (!match) return undefined;
  const token = Number(match[1]);
  const expiresAt = Number(match[2]);
  const code = match[3]!;
  const watched = match[4] !== undefined;
  if (!Number.isSafeInteger(token) || !Number.isSafeInteger(expiresAt)) return undefined;
  if (token === 0) return { entry, state: undefined, code, watched };
  return { entry, state: { holder: holders.holder(code, location), token, expiresAt }, code, watched };
}

/**
 * Reads a lease directory: its one entry, or `undefined` when the directory does not exist or
 * is empty (what a power cut may leave of one whose entry was not durable yet: never held, and
 * built again by the next change, see {@link createLeaseDirectory}). A listing can see a rename
 * half-way (the old and the new name): it is read again. Anything else than one state entry is
 * `corrupt`.
 */
export function listLeaseEntry(io: FsIo, directory: string, holders: HolderBook): LeaseEntry | undefined {
  for (let attempt = 0; ; attempt++) {
    let names: string[];
    try {
      names = io.readdirSync(directory).map((dirent) => dirent.name);
    } catch (error) {
      if (isErrno(error, "ENOENT")) return undefined;
      throw error;
    }
    if (names.length === 0) return undefined;
    if (names.length === 1) {
      const decoded = decodeEntry(names[0]!, holders, directory);
      if (decoded) return decoded;
    }
    if (names.length > 1 && attempt < LISTING_RETRIES) continue;
    throw leaseCorrupt(directory, `it holds ${JSON.stringify(names)}, not one lease state`);
  }
}

/** True when `entry` is in `directory` now (one `lstat`: an entry is only ever renamed, never followed). */
export function entryExists(io: FsIo, directory: string, entry: string): boolean {
  try {
    io.lstatSync(`${directory}${path.sep}${entry}`);
    return true;
  } catch (error) {
    if (isErrno(error, "ENOENT", "ENOTDIR")) return false;
    throw error;
  }
}

/**
 * Builds the directory of lease `name` holding `state` (token 0: never held) under a temporary
 * name: the directory with its entry, fsynced so that the entry is durable before the directory
 * can be seen. The caller renames it into place ({@link placeLeaseDirectory}).
 */
function buildLeaseDirectory(io: FsIo, paths: StorePaths, state: LeaseState, code: string): string {
  const building = path.join(paths.leases, `${LOCK_INIT_PREFIX}${process.pid}.${randomBytes(6).toString("hex")}`);
  try {
    io.mkdirSync(building);
  } catch (error) {
    if (!isErrno(error, "ENOENT")) throw error;
    // No leases directory: a store opened with `create: false` (which creates nothing at open)
    // whose directory was lost; the first lease makes it, as the lock manager does for locks.
    ensureDirectorySync(io, paths.root, paths.leases);
    io.mkdirSync(building);
  }
  try {
    io.closeSync(io.openSync(path.join(building, entryName(state, code, false)), OPEN_CREATE_EXCLUSIVE));
  } catch (error) {
    removeBuilding(io, building);
    throw error;
  }
  return building;
}

/**
 * Renames a built lease directory into place, unless another process made it first (then its
 * own is removed and false returned). The rename replaces an empty directory (what a power cut
 * may leave): `rename` replaces an empty directory atomically and fails with `ENOTEMPTY` or
 * `EEXIST` once it holds an entry, so of several processes mending one, exactly one succeeds,
 * and a lease directory in use (always one entry) is never replaced.
 */
function placeLeaseDirectory(io: FsIo, paths: StorePaths, name: string, building: string): boolean {
  try {
    io.renameSync(building, leaseDirectory(paths, name));
    return true;
  } catch (error) {
    removeBuilding(io, building);
    if (isErrno(error, "EEXIST", "ENOTEMPTY")) return false;
    throw error;
  }
}

/**
 * Creates the directory of lease `name` holding `state`, unless it exists (with an entry),
 * durably and synchronously (the layout upgrade at open): built whole under a temporary name,
 * fsynced, renamed into place, the leases directory fsynced. True when this call made it.
 */
export function createLeaseDirectorySync(io: FsIo, paths: StorePaths, name: string, state: LeaseState, code: string): boolean {
  const building = buildLeaseDirectory(io, paths, state, code);
  try {
    fsyncDirectorySync(io, building);
  } catch (error) {
    removeBuilding(io, building);
    throw error;
  }
  if (!placeLeaseDirectory(io, paths, name, building)) return false;
  fsyncDirectorySync(io, paths.leases);
  return true;
}

/**
 * Creates the directory of lease `name` in its never-held state, durably (once per lease name,
 * or again over an empty one a power cut left): as {@link createLeaseDirectorySync}, with
 * asynchronous fsyncs.
 */
export async function createLeaseDirectory(io: FsIo, paths: StorePaths, name: string): Promise<void> {
  const building = buildLeaseDirectory(io, paths, { holder: "", token: 0, expiresAt: 0 }, "");
  try {
    await fsyncDirectory(io, building);
  } catch (error) {
    removeBuilding(io, building);
    throw error;
  }
  if (placeLeaseDirectory(io, paths, name, building)) await fsyncDirectory(io, paths.leases);
}

import { createHash, randomBytes } from "node:crypto";
import path from "node:path";
import { isSafeName } from "@keel/core";

/**
 * Where everything lives under the store's directory.
 *
 * - A document `["a", "b", "c"]` is `<root>/a/b/c.json`, its previous version `c.json.bak`.
 * - A log `["a", "b"]` is `<root>/a/b.jsonl`.
 * - Store-internal files (lease directories, lock directories, the format marker, the id
 *   sidecars of big logs in `_keel/logidx/`) live under `<root>/_keel/`: a safe name cannot
 *   start with `_`, so no key can reach it.
 * - Temporary files start with `.`, which a safe name cannot, so they never collide with keys.
 * - A directory segment that itself ends in `.json`, `.jsonl` or `.bak` gets a `~` suffix
 *   (`~` is not a safe-name character), so the directory of `["x.json", "y"]` never collides
 *   with the file of `["x"]`.
 */
export const INTERNAL_DIRECTORY = "_keel";

const RESERVED_SUFFIX = /\.(json|jsonl|bak)$/i;
const DOC_SUFFIX = ".json";
const LOG_SUFFIX = ".jsonl";
/** The suffix of a document's previous version. */
export const BACKUP_SUFFIX = ".bak";

/** The directory name of one key segment that has children. */
export function directoryName(segment: string): string {
  return RESERVED_SUFFIX.test(segment) ? `${segment}~` : segment;
}

/** The key segment of a directory name, or `undefined` for anything the store did not make. */
export function segmentOfDirectory(name: string): string | undefined {
  if (name.endsWith("~")) {
    const segment = name.slice(0, -1);
    return RESERVED_SUFFIX.test(segment) && isSafeName(segment) ? segment : undefined;
  }
  return !RESERVED_SUFFIX.test(name) && isSafeName(name) ? name : undefined;
}

/** The key segment of a document file name (`x.json`), or `undefined`. */
export function segmentOfDocFile(name: string): string | undefined {
  if (!name.endsWith(DOC_SUFFIX)) return undefined;
  const segment = name.slice(0, -DOC_SUFFIX.length);
  return isSafeName(segment) ? segment : undefined;
}

/** The key segment of a log file name (`x.jsonl`), or `undefined`. */
export function segmentOfLogFile(name: string): string | undefined {
  if (!name.endsWith(LOG_SUFFIX)) return undefined;
  const segment = name.slice(0, -LOG_SUFFIX.length);
  return isSafeName(segment) ? segment : undefined;
}

/** The paths of one store directory. */
export interface StorePaths {
  root: string;
  internal: string;
  locks: string;
  leases: string;
  /** The format marker file. */
  marker: string;
  /** The boot record: which machine boot the lease tokens' epoch belongs to. */
  boot: string;
  /** The directory of the logs' id sidecars (see log-sidecar.ts). */
  logSidecars: string;
  /** The directory that holds the children of `prefix` (the root for an empty prefix). */
  directoryOf(prefix: readonly string[]): string;
  docFile(key: readonly string[]): string;
  logFile(key: readonly string[]): string;
  /** The id sidecar of a log file (a path from {@link StorePaths.logFile}): named by a hash of its path under the root. */
  logSidecar(logFile: string): string;
  /** The lock directory of a resource (`doc:a/b`, `log:a/b`, `lease:name`). */
  lockDirectory(resource: string): string;
}

const MAX_REMEMBERED_LOCKS = 4096;

/** Builds the paths of the store rooted at `root` (an absolute path). */
export function storePaths(root: string): StorePaths {
  const internal = path.join(root, INTERNAL_DIRECTORY);
  const locks = path.join(internal, "locks");
  const leases = path.join(internal, "leases");
  const logSidecars = path.join(internal, "logidx");
  const directoryOf = (prefix: readonly string[]) => path.join(root, ...prefix.map(directoryName));
  const fileOf = (key: readonly string[], suffix: string) => path.join(directoryOf(key.slice(0, -1)), `${key[key.length - 1]}${suffix}`);
  // Lock directories are looked up on every write: remember the hashes of recent resources.
  const lockDirectories = new Map<string, string>();
  return {
    root,
    internal,
    locks,
    leases,
    marker: path.join(internal, "store.json"),
    boot: path.join(internal, "boot.json"),
    logSidecars,
    directoryOf,
    docFile: (key) => fileOf(key, DOC_SUFFIX),
    logFile: (key) => fileOf(key, LOG_SUFFIX),
    logSidecar: (logFile) => path.join(logSidecars, `${createHash("sha256").update(path.relative(root, logFile)).digest("hex").slice(0, 40)}.idx`),
    lockDirectory: (resource) => {
      let directory = lockDirectories.get(resource);
      if (directory === undefined) {
        const kind = resource.slice(0, resource.indexOf(":"));
        const hash = createHash("sha256").update(resource).digest("hex").slice(0, 40);
        directory = path.join(locks, `${kind}-${hash}`);
        if (lockDirectories.size >= MAX_REMEMBERED_LOCKS) lockDirectories.clear();
        lockDirectories.set(resource, directory);
      }
      return directory;
    },
  };
}

let tmpCounter = 0;
/** Drawn once per process: a counter after it makes each name unique without new random bytes per call. */
const tmpPrefix = randomBytes(4).toString("hex");

/**
 * A unique temporary name next to `target`: `.<name>.<pid>.<random><counter>.tmp`. Unique per
 * call (not per process: two writers in one process must never share a staging file), created
 * with O_EXCL, and starting with `.` so that no key can name it.
 */
export function temporaryPath(target: string): string {
  tmpCounter = (tmpCounter + 1) % 1_000_000_000;
  const unique = `${tmpPrefix}${tmpCounter.toString(36)}`;
  return path.join(path.dirname(target), `.${path.basename(target)}.${process.pid}.${unique}.tmp`);
}

const TMP_PATTERN = /^\..+\.(\d+)\.[0-9a-z]+\.tmp$/;

/** The writer pid of a temporary file name made by {@link temporaryPath}, or `undefined` if it is not one. */
export function temporaryFileWriter(name: string): number | undefined {
  const match = TMP_PATTERN.exec(name);
  return match ? Number(match[1]) : undefined;
}

import { constants } from "node:fs";
import { access, readFile, stat } from "node:fs/promises";
import path from "node:path";

/** The oldest Node.js Keel runs on (`engines.node` of every package: `>=20.19`). */
export const MINIMUM_NODE_VERSION = "20.19.0";

/** A parsed `major.minor.patch` version. */
export type NodeVersion = readonly [major: number, minor: number, patch: number];

/** Parses `v20.19.1`, `20.19.1` or `20.19` (patch 0); `null` for anything else. Pure. */
export function parseNodeVersion(text: string): NodeVersion | null {
  const match = /^v?(\d{1,6})\.(\d{1,6})(?:\.(\d{1,6}))?(?:[-+].*)?$/.exec(text.trim());
  if (!match) return null;
  return [Number(match[1]), Number(match[2]), Number(match[3] ?? "0")];
}

/** Whether `version` is at least `minimum`, comparing major, then minor, then patch. Pure. */
export function meetsMinimum(version: NodeVersion, minimum: NodeVersion): boolean {
  for (let index = 0; index < 3; index++) {
    if (version[index]! !== minimum[index]!) return version[index]! > minimum[index]!;
  }
  return true;
}

/** What `keel doctor` found about the Node.js running it. */
export interface NodeCheck {
  version: string;
  required: string;
  ok: boolean;
}

/** Checks a Node.js version against {@link MINIMUM_NODE_VERSION}. An unparseable version fails. Pure. */
export function checkNodeVersion(version: string): NodeCheck {
  const parsed = parseNodeVersion(version);
  const minimum = parseNodeVersion(MINIMUM_NODE_VERSION)!;
  return { version, required: `>=${MINIMUM_NODE_VERSION}`, ok: parsed !== null && meetsMinimum(parsed, minimum) };
}

/** What `keel doctor` found about the store directory. */
export interface StoreDirectoryCheck {
  /** The directory asked about (absolute). */
  dir: string;
  /** Whether it exists (as anything). */
  exists: boolean;
  /** Whether it holds a Keel filesystem store (its `_keel/store.json` marker); `false` when it does not exist. */
  isStore: boolean;
  /** The directory whose write permission decides: `dir` itself, or its nearest existing ancestor when it does not exist yet. */
  checked: string;
  /** Whether Keel can write there (create the store, or write into it). */
  writable: boolean;
  /** Why it is not writable, or `null`. */
  problem: string | null;
}

async function statOrNull(target: string) {
  try {
    return await stat(target);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return null;
    throw error;
  }
}

async function canWrite(dir: string): Promise<string | null> {
  try {
    await access(dir, constants.W_OK | constants.X_OK);
    return null;
  } catch (error) {
    return `${dir} is not writable (${(error as NodeJS.ErrnoException).code ?? "error"})`;
  }
}

async function hasMarker(dir: string): Promise<boolean> {
  try {
    const marker = JSON.parse(await readFile(path.join(dir, "_keel", "store.json"), "utf8")) as { format?: unknown };
    return marker.format === "keel.fs-store";
  } catch {
    return false;
  }
}

/**
 * Checks a store directory without creating or writing anything: when it exists, that it is a
 * writable directory (and whether it already holds a store); when it does not, that its nearest
 * existing ancestor is a writable directory, so the store could be created.
 */
export async function checkStoreDirectory(dir: string): Promise<StoreDirectoryCheck> {
  const info = await statOrNull(dir);
  if (info) {
    if (!info.isDirectory()) return { dir, exists: true, isStore: false, checked: dir, writable: false, problem: `${dir} exists and is not a directory` };
    const problem = await canWrite(dir);
    return { dir, exists: true, isStore: await hasMarker(dir), checked: dir, writable: problem === null, problem };
  }
  let ancestor = path.dirname(dir);
  for (;;) {
    const found = await statOrNull(ancestor);
    if (found) {
      if (!found.isDirectory()) {
        return { dir, exists: false, isStore: false, checked: ancestor, writable: false, problem: `${ancestor} is not a directory, so ${dir} cannot be created` };
      }
      const problem = await canWrite(ancestor);
      return { dir, exists: false, isStore: false, checked: ancestor, writable: problem === null, problem: problem && `${problem}, so ${dir} cannot be created` };
    }
    const parent = path.dirname(ancestor);
    if (parent === ancestor) return { dir, exists: false, isStore: false, checked: ancestor, writable: false, problem: `no existing ancestor of ${dir}` };
    ancestor = parent;
  }
}

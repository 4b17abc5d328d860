import { KeelError } from "@keel/core";
import { writeFileDurablySync } from "./fs-durable-write.js";
import { isErrno, type FsIo } from "./fs-io.js";
import type { StorePaths } from "./fs-paths.js";
import type { HolderBook } from "./lease-entry.js";
import { migrateLegacyLeases } from "./lease-legacy.js";

/**
 * The on-disk layout this code writes. Layout 1 kept leases in JSON files; layout 2 keeps each
 * in a directory whose one entry names its state (lease-entry.ts). Opening a layout-1 store
 * moves its leases over and marks it layout 2.
 */
export const STORE_LAYOUT = { format: "keel.fs-store", version: 2 } as const;

/** Writes the layout marker of this code's layout, durably (a power cut must not leave it empty or torn). */
export function writeLayout(io: FsIo, paths: StorePaths): void {
  writeFileDurablySync(io, paths.marker, Buffer.from(`${JSON.stringify(STORE_LAYOUT, null, 2)}\n`));
}

/** What the layout marker holds: nothing, bytes that do not parse, or this store's format at a version this code reads. */
type LayoutMarker = { state: "missing" } | { state: "torn"; text: string } | { state: "found"; version: number };

/**
 * Reads the layout marker without writing anything. A marker that parses but names another
 * format is refused (`corrupt`: not this store's directory), a newer layout `unsupported`.
 */
function readLayout(io: FsIo, paths: StorePaths): LayoutMarker {
  let text: string;
  try {
    text = io.readFileSync(paths.marker).toString("utf8");
  } catch (error) {
    if (isErrno(error, "ENOENT")) return { state: "missing" };
    throw error;
  }
  let marker: { format?: unknown; version?: unknown } | null;
  try {
    marker = JSON.parse(text) as typeof marker;
  } catch {
    return { state: "torn", text };
  }
  if (marker?.format !== STORE_LAYOUT.format || typeof marker.version !== "number") {
    throw new KeelError("corrupt", `${paths.marker} is not a Keel filesystem store marker; is ${paths.root} the right directory?`, {
      details: { location: paths.marker },
    });
  }
  if (marker.version > STORE_LAYOUT.version) {
    throw new KeelError("unsupported", `${paths.root} holds layout version ${marker.version}; this @keel/store-fs reads up to ${STORE_LAYOUT.version}: upgrade it`, {
      details: { location: paths.marker, version: marker.version, supported: STORE_LAYOUT.version },
    });
  }
  return { state: "found", version: marker.version };
}

const tornMarker = (text: string) => (text.length === 0 ? "empty" : `torn (${text.length} bytes that do not parse)`);

/**
 * Checks the layout marker, writing it on first use; a newer layout is refused (`unsupported`),
 * an older one upgraded (layout 1: its lease files become lease directories). A marker that is
 * empty or does not parse is what a power cut leaves of one written without fsync (as stores
 * before this one wrote it): it is written again, and the returned sentence says so. A marker
 * that parses but names another format is refused (`corrupt`: not this store's directory).
 */
export function checkLayout(io: FsIo, paths: StorePaths, holders: HolderBook): string | undefined {
  const marker = readLayout(io, paths);
  if (marker.state === "missing") {
    writeLayout(io, paths);
    return undefined;
  }
  if (marker.state === "torn") {
    writeLayout(io, paths);
    return `the layout marker ${paths.marker} was ${tornMarker(marker.text)}, as a power cut leaves a marker written without fsync; wrote it again (layout ${STORE_LAYOUT.version})`;
  }
  if (marker.version < STORE_LAYOUT.version) {
    migrateLegacyLeases(io, paths, (holder) => holders.codeSync(holder));
    writeLayout(io, paths);
  }
  return undefined;
}

/**
 * Checks, for a store opened with `create: false`, that the marker names a store this code can
 * use as it is, and writes nothing: no marker is `not_found` (not a store); an empty or torn
 * one is `corrupt`, and a layout older than this code's is `unsupported` (opening the store
 * once with `create: true` rewrites the marker, or upgrades the layout).
 */
export function requireLayout(io: FsIo, paths: StorePaths): void {
  const marker = readLayout(io, paths);
  const details = { location: paths.marker };
  if (marker.state === "missing") {
    throw new KeelError("not_found", `no Keel store at ${paths.root}: it has no _keel/store.json marker (nothing was created)`, { details: { ...details, dir: paths.root } });
  }
  if (marker.state === "torn") {
    throw new KeelError("corrupt", `the layout marker ${paths.marker} is ${tornMarker(marker.text)}, as a power cut leaves a marker written without fsync: open the store once with create: true to write it again (nothing was changed)`, { details });
  }
  if (marker.version < STORE_LAYOUT.version) {
    throw new KeelError("unsupported", `${paths.root} holds layout version ${marker.version}, which this @keel/store-fs upgrades to ${STORE_LAYOUT.version} only when it may write: open the store once with create: true (nothing was changed)`, {
      details: { ...details, version: marker.version, supported: STORE_LAYOUT.version },
    });
  }
}

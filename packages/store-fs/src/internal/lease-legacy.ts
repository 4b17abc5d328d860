import { createHash } from "node:crypto";
import path from "node:path";
import type { LeaseState } from "@keel/store/kit";
import { isErrno, type FsIo } from "./fs-io.js";
import type { StorePaths } from "./fs-paths.js";
import { createLeaseDirectorySync } from "./lease-entry.js";

/**
 * Layout 1 kept each lease in a checksummed JSON file, `_keel/leases/<name>.json`, rewritten in
 * place. Opening such a store moves each one into the lease directory of layout 2 with the same
 * state, so that no token is handed out twice across the upgrade.
 */
const LEGACY_FORMAT = "keel.lease.v1";

function legacyChecksum(name: string, state: LeaseState): string {
  return `sha256:${createHash("sha256").update(`${LEGACY_FORMAT}\n${name}\n${state.holder}\n${state.token}\n${state.expiresAt}`).digest("hex")}`;
}

/** Parses and verifies a layout-1 lease file: its state, or `undefined` when it is damaged. */
export function decodeLegacyLease(text: string, name: string): LeaseState | undefined {
  let parsed: Record<string, unknown>;
  try {
    parsed = JSON.parse(text) as Record<string, unknown>;
  } catch {
    return undefined;
  }
  if (typeof parsed !== "object" || parsed === null || parsed.format !== LEGACY_FORMAT || parsed.name !== name) return undefined;
  const { holder, token, expiresAt, checksum } = parsed;
  if (typeof holder !== "string" || typeof token !== "number" || typeof expiresAt !== "number") return undefined;
  const state = { holder, token, expiresAt };
  return checksum === legacyChecksum(name, state) ? state : undefined;
}

/**
 * Moves the layout-1 lease files of a store into lease directories (synchronously, when the
 * store is opened). A damaged one is left where it is for `check()` to report: its lease starts
 * again above the next boot epoch only, so the file is not deleted.
 */
export function migrateLegacyLeases(io: FsIo, paths: StorePaths, holders: (holder: string) => string): void {
  let names: string[];
  try {
    names = io.readdirSync(paths.leases).map((entry) => entry.name);
  } catch (error) {
    if (isErrno(error, "ENOENT")) return;
    throw error;
  }
  for (const file of names) {
    if (file.startsWith(".") || !file.endsWith(".json")) continue;
    const name = file.slice(0, -".json".length);
    const location = path.join(paths.leases, file);
    let text: string;
    try {
      text = io.readFileSync(location).toString("utf8");
    } catch (error) {
      // Another process opening the store moved it first.
      if (isErrno(error, "ENOENT")) continue;
      throw error;
    }
    const state = decodeLegacyLease(text, name);
    if (!state) continue;
    createLeaseDirectorySync(io, paths, name, state, holders(state.holder));
    try {
      io.unlinkSync(location);
    } catch (error) {
      if (!isErrno(error, "ENOENT")) throw error;
    }
  }
}

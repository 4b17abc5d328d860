import type { KeelStore } from "@keel/store";
import type { FsStoreOptions } from "./fs-store-options.js";
import { openFsStore } from "./internal/open-fs-store.js";

/**
 * Creates the filesystem store, Keel's embedded default: plain files under `dir` that people can
 * read, safe for several processes of one host, durable once a call resolves.
 *
 * - A document `["missions", "m1", "role-sessions", "engineer"]` is
 *   `<dir>/missions/m1/role-sessions/engineer.json`: an indented JSON envelope (format, key,
 *   version, updatedAt, tombstone flag, sha256 checksum, value), replaced by tmp + fsync + rename
 *   + directory fsync, with the previous version kept as `engineer.json.bak`. A damaged file with
 *   a good backup is served from the backup (and reported); both damaged is `corrupt`.
 * - A log is `<dir>/<key…>.jsonl`, one CRC-checked JSON line per record, one `write` and one
 *   `fdatasync` per group of concurrent appends; a torn last batch is cut before the next append,
 *   damage in the middle is `corrupt` with its byte offset.
 * - Every read-modify-write holds a per-key lock (a rename token in `<dir>/_keel/locks/`); a
 *   lock whose holder died is taken over at once, a hung one after `lockStaleMs`. A lease is a
 *   directory `<dir>/_keel/leases/<name>/` whose one entry names its state, judged by this host's clock.
 * - A lease change is one rename of that entry (a compare-and-swap), not fsynced: it survives any
 *   process crash, and a machine restart ends every lease of the earlier boot (its fences fail;
 *   the next token is above every earlier one, through a durable boot epoch in `<dir>/_keel/boot.json`).
 *
 * - Nothing under `dir` is followed out of it: a symbolic link, FIFO or device planted where the
 *   store keeps a file or directory is never followed or opened (`corrupt`, reported by `check()`,
 *   moved into quarantine by `check({ repair: true })`).
 *
 * Capabilities: scope `host`, durability `fsync` (of documents and logs). Not for network file systems (NFS, SMB) or for
 * processes on several hosts. Throws a `KeelError` at once for bad options (`invalid_input`), a
 * directory that cannot be created (`io_failed`) or a newer on-disk layout (`unsupported`). With
 * `create: false` nothing is created or changed when opening or by any read (no lock is taken):
 * no store there is `not_found`, and a store that opening would mend (a torn marker, an older
 * layout) is refused (see {@link FsStoreOptions.create}).
 *
 * @example
 * ```ts
 * const store = createFsStore({ dir: ".keel" });
 * await store.docs.put(["missions", "m1"], { objective: "ship" }, { create: true });
 * await store.logs.append(["runs", "r1"], [{ id: "call-0", value: { ok: true } }]);
 * await store.close();
 * ```
 */
export function createFsStore(options: FsStoreOptions): KeelStore {
  return openFsStore(options);
}

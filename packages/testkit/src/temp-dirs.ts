import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach } from "vitest";

/** Something a test opens and must close before its directory goes: a store, a transcript, a saver. */
export interface Closable {
  /** Closes it; a rejection fails the test's clean-up. */
  close(): unknown;
}

/** A scope of temporary directories and open stores, cleaned up after each test (see {@link useTempDirs}). */
export interface TempDirs {
  /** Makes a new empty directory under the OS's temporary directory; removed after the test. */
  dir(): string;
  /** Remembers `closable` to close after the test, before the directories are removed; returns it. */
  track<T extends Closable>(closable: T): T;
}

/**
 * Temporary directories and open stores for a test file: call once at the top of the file (it
 * registers a vitest `afterEach`), then `dirs.dir()` in a test for a fresh directory and
 * `dirs.track(store)` for a store to close. After each test every tracked store is closed, then
 * every directory is removed.
 *
 * @param prefix - the start of each directory's name, so a leftover says which test made it.
 * @example
 * ```ts
 * const dirs = useTempDirs("keel-leases-");
 * it("opens", async () => {
 *   const store = dirs.track(createFsStore({ dir: dirs.dir() }));
 * });
 * ```
 */
export function useTempDirs(prefix = "keel-test-"): TempDirs {
  const made: string[] = [];
  const open: Closable[] = [];
  afterEach(async () => {
    for (const closable of open.splice(0)) await closable.close();
    for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
  });
  return {
    dir() {
      const dir = mkdtempSync(path.join(tmpdir(), prefix));
      made.push(dir);
      return dir;
    },
    track(closable) {
      open.push(closable);
      return closable;
    },
  };
}

import { closeQuietly, OPEN_READ, type FsIo } from "./fs-io.js";
import type { LogIndexCache } from "./log-index.js";

/**
 * How long an append with `durable: false` may stay in the OS only (lost if the machine stops)
 * before the store syncs its log in the background. One `fdatasync` then covers every unsynced
 * append made to that log in the meantime.
 */
export const BACKGROUND_SYNC_MS = 1_000;

/** Syncs logs written without `fdatasync`, a little later and once for many appends. */
export interface BackgroundSync {
  /** Asks for `file` to be synced within {@link BACKGROUND_SYNC_MS}. */
  schedule(file: string): void;
  /** Syncs every scheduled file now (the store's `close()` waits for it). */
  flush(): Promise<void>;
}

/**
 * Creates the background syncer of one store. Best effort: a file that was replaced or removed
 * in the meantime, or a failing `fdatasync`, leaves the bytes where the OS has them (the next
 * synced batch of the log, or the OS's own write-back, makes them durable; until then they are
 * what a power loss may cost). The timer does not keep the process alive.
 */
export function createBackgroundSync(io: FsIo, logIndex: LogIndexCache, delayMs = BACKGROUND_SYNC_MS): BackgroundSync {
  const due = new Set<string>();
  let timer: ReturnType<typeof setTimeout> | undefined;
  let running: Promise<void> = Promise.resolve();

  const syncOne = async (file: string) => {
    let fd: number | undefined;
    try {
      let stat;
      ({ fd, stat } = io.openFileSync(file, OPEN_READ));
      await io.fdatasync(fd);
      logIndex.markDurable(file, stat.dev, stat.ino, stat.size);
    } catch {
      // best effort (see above)
    } finally {
      closeQuietly(io, fd);
    }
  };

  const flush = () => {
    if (timer) clearTimeout(timer);
    timer = undefined;
    const files = [...due];
    due.clear();
    running = running.then(async () => {
      for (const file of files) await syncOne(file);
    });
    return running;
  };

  return {
    schedule(file) {
      due.add(file);
      if (timer) return;
      timer = setTimeout(() => void flush(), delayMs);
      timer.unref?.();
    },
    flush,
  };
}

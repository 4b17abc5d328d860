/** What a crash-test worker prints: an acknowledgement that must reach the parent before any kill. */
import { writeSync } from "node:fs";

const pause = new Int32Array(new SharedArrayBuffer(4));

/**
 * Prints a line with a blocking write to fd 1: `process.stdout` may queue a write in memory when
 * the pipe is full, and a queued acknowledgement would die with the process. A full pipe
 * (`EAGAIN`) is waited out a millisecond at a time.
 */
export function sayBlocking(line: string): void {
  const bytes = Buffer.from(`${line}\n`);
  let written = 0;
  while (written < bytes.length) {
    try {
      written += writeSync(1, bytes, written);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EAGAIN") throw error;
      Atomics.wait(pause, 0, 0, 1);
    }
  }
}

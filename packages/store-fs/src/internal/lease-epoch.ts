import { createHash } from "node:crypto";
import { uptime } from "node:os";
import { KeelError } from "@keel/core";
import { writeFileDurably } from "./fs-durable-write.js";
import { isErrno, type FsIo } from "./fs-io.js";
import type { LockManager } from "./fs-lock.js";
import type { StorePaths } from "./fs-paths.js";

/**
 * Lease tokens stay monotonic across machine crashes although lease state is not fsynced.
 *
 * Lease changes are renames not followed by a directory fsync (see lease-entry.ts): a process crash loses
 * nothing, but a power loss or kernel crash can roll a lease back to an older state, and
 * the next acquisition could then hand out a token that was already handed out before the crash.
 * Every holder of that token died with the machine, yet a fence that outlived it (a host that
 * stored `{ lease, token }` somewhere and writes with it after the restart) would match again.
 *
 * So tokens carry an epoch: the store keeps a durable boot record (`_keel/boot.json`: this
 * machine's boot id and an epoch number), bumped — durably, once — by the first lease operation
 * after each boot. A token handed out in epoch `e` is above `e × EPOCH_SPAN`, and every token of
 * an earlier boot is below it: the epoch was written durably before any of them was handed out,
 * and no boot hands out `EPOCH_SPAN` (2³²) tokens for one lease name. A lease whose token is
 * below the floor belongs to an earlier boot: it is over (its holders died with the machine),
 * so its fences fail at once and it can be acquired at once.
 */

/** Tokens of epoch `e` are above `e × EPOCH_SPAN`. */
export const EPOCH_SPAN = 2 ** 32;
/** The last epoch whose tokens stay safe integers. Beyond it the epoch stops growing (2 million boots). */
const MAX_EPOCH = Math.floor(Number.MAX_SAFE_INTEGER / EPOCH_SPAN) - 1;
/** The format tag of the boot record. */
export const BOOT_FORMAT = "keel.boot.v1";
const BOOT_ID_FILE = "/proc/sys/kernel/random/boot_id";
/** Boot times (where there is no boot id) closer than this are the same boot: a reboot takes longer. */
const BOOT_TIME_TOLERANCE_SECONDS = 2;

/** What the boot record says. */
export interface BootRecord {
  /** The boot it was written in ({@link bootIdentity}). */
  boot: string;
  epoch: number;
}

/**
 * This machine's current boot: Linux's boot id (`boot_id:<uuid>`), or elsewhere the boot time in
 * seconds (`booted:<epoch seconds>`, from the uptime).
 */
export function bootIdentity(io: FsIo): string {
  try {
    const id = io.readFileSync(BOOT_ID_FILE).toString("utf8").trim();
    if (id.length > 0) return `boot_id:${id}`;
  } catch (error) {
    if (!isErrno(error, "ENOENT", "ENOTDIR", "EACCES", "EPERM")) throw error;
  }
  return `booted:${Math.round(Date.now() / 1000 - uptime())}`;
}

/**
 * True when two boot identities name the same boot. Boot times computed from the uptime wobble
 * by a second (and move with a clock step): those within {@link BOOT_TIME_TOLERANCE_SECONDS} are
 * one boot. Taking one boot for two only bumps the epoch once more, which is always safe.
 */
export function sameBoot(left: string, right: string): boolean {
  if (left === right) return true;
  const prefix = "booted:";
  if (!left.startsWith(prefix) || !right.startsWith(prefix)) return false;
  return Math.abs(Number(left.slice(prefix.length)) - Number(right.slice(prefix.length))) <= BOOT_TIME_TOLERANCE_SECONDS;
}

function checksumOf(record: BootRecord): string {
  return `sha256:${createHash("sha256").update(`${BOOT_FORMAT}\n${record.boot}\n${record.epoch}`).digest("hex")}`;
}

/** The text of a boot record file. */
export function encodeBootRecord(record: BootRecord): string {
  return `${JSON.stringify({ format: BOOT_FORMAT, boot: record.boot, epoch: record.epoch, checksum: checksumOf(record) }, null, 2)}\n`;
}

/** Parses and verifies a boot record file: the record, or why it is damaged. */
export function decodeBootRecord(text: string): { record: BootRecord } | { problem: string } {
  let parsed: Record<string, unknown>;
  try {
    parsed = JSON.parse(text) as Record<string, unknown>;
  } catch {
    return { problem: "not valid JSON" };
  }
  if (typeof parsed !== "object" || parsed === null || parsed.format !== BOOT_FORMAT) return { problem: "not a boot record" };
  const { boot, epoch, checksum } = parsed;
  if (typeof boot !== "string" || typeof epoch !== "number" || !Number.isSafeInteger(epoch) || epoch < 0) return { problem: "malformed boot record" };
  const record = { boot, epoch };
  if (checksum !== checksumOf(record)) return { problem: "fails its checksum" };
  return { record };
}

/** What the epoch needs of a store. */
export interface LeaseEpochDependencies {
  io: FsIo;
  paths: StorePaths;
  locks: LockManager;
  /** The store's path guard: the boot record is never read or written through a link on the way. */
  contain: (directory: string) => void;
}

/** Reads the boot record (`undefined` before the first acquisition); a damaged one is `corrupt`. */
export function readBootRecord(context: Pick<LeaseEpochDependencies, "io" | "paths">): BootRecord | undefined {
  let text: string;
  try {
    text = context.io.readFileSync(context.paths.boot).toString("utf8");
  } catch (error) {
    if (isErrno(error, "ENOENT")) return undefined;
    throw error;
  }
  const decoded = decodeBootRecord(text);
  if ("problem" in decoded) {
    throw new KeelError("corrupt", `the boot record ${context.paths.boot} is damaged (${decoded.problem}); leases cannot hand out tokens safely until it is restored`, {
      details: { location: context.paths.boot, problem: decoded.problem },
      retryable: false,
    });
  }
  return decoded.record;
}

/**
 * The token floor of this store instance's boot: every token handed out in this boot is above
 * it, every token of an earlier boot below it.
 */
export interface LeaseEpoch {
  floor(): Promise<number>;
  /** The floor once it is known (after the first {@link LeaseEpoch.floor}), without waiting. */
  known(): number | undefined;
  /**
   * The floor a read uses, without writing (a store opened with `create: false`): the boot
   * record's when it names this boot (then remembered, as by {@link LeaseEpoch.floor}); after a
   * reboot, the floor the next lease change will write (one epoch up, or 0 with no record) —
   * every state of an earlier boot is below it, as it will be once that change has landed — not
   * remembered, since it is not durable yet: the next call reads the record again.
   */
  readFloor(): number;
}

/** The epoch the first lease change of a new boot writes after `record`. */
function nextEpoch(record: BootRecord | undefined): number {
  return record ? Math.min(record.epoch + 1, MAX_EPOCH) : 0;
}

/**
 * Creates the epoch of one store instance: the boot record is read (and, after a reboot, bumped
 * durably under a lock) at the first lease operation or fenced write, then remembered — a boot
 * never changes while a process runs. Taking the boot lock never waits for another lock, so it
 * may be taken while holding one.
 */
export function createLeaseEpoch(context: LeaseEpochDependencies): LeaseEpoch {
  let loading: Promise<number> | undefined;
  let known: number | undefined;

  const load = async (): Promise<number> => {
    context.contain(context.paths.internal);
    const boot = bootIdentity(context.io);
    const seen = readBootRecord(context);
    if (seen && sameBoot(seen.boot, boot)) return seen.epoch;
    const release = await context.locks.acquire(["boot:store"]);
    try {
      const current = readBootRecord(context);
      if (current && sameBoot(current.boot, boot)) return current.epoch;
      const epoch = nextEpoch(current);
      await writeFileDurably(context.io, context.paths.boot, Buffer.from(encodeBootRecord({ boot, epoch })), { root: context.paths.root, backup: false });
      return epoch;
    } finally {
      release();
    }
  };

  return {
    floor: async () => {
      loading ??= load().then(
        (epoch) => (known = epoch * EPOCH_SPAN),
        (error: unknown) => {
          loading = undefined;
          throw error;
        },
      );
      return loading;
    },
    known: () => known,
    readFloor: () => {
      if (known !== undefined) return known;
      context.contain(context.paths.internal);
      const seen = readBootRecord(context);
      if (seen && sameBoot(seen.boot, bootIdentity(context.io))) return (known = seen.epoch * EPOCH_SPAN);
      return nextEpoch(seen) * EPOCH_SPAN;
    },
  };
}

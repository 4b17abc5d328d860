import { createHash } from "node:crypto";
import { KeelError, isSafeName } from "@keel/core";
import {
  checkFence,
  decideAcquire,
  decideRelease,
  decideRenew,
  leaseHeld,
  leaseLost,
  pollUntil,
  validateAcquire,
  validateLease,
  validateLeaseName,
  validateRenewOptions,
  type Attempt,
  type Fence,
  type Lease,
  type LeaseState,
  type LeaseStore,
} from "@keel/store";
import { err, errAsync, okAsync, type Result } from "neverthrow";
import { leaseFloor, type FsContext } from "./fs-context.js";
import { writeFileDurably } from "./fs-durable-write.js";
import { closeQuietly, isErrno, readAt, writeAll } from "./fs-io.js";

/** The format tag of a lease file. */
export const LEASE_FORMAT = "keel.lease.v1";

/** The lock resource of a lease name. */
export function leaseResource(name: string): string {
  return `lease:${name}`;
}

/** The lock resources of the fences of a write, in the global lock order (sorted, safe names only). */
export function fenceResources(fences: readonly (Fence | undefined)[]): string[] {
  const names = new Set<string>();
  for (const fence of fences) if (fence && isSafeName(fence.lease)) names.add(fence.lease);
  return [...names].sort().map(leaseResource);
}

/** A lease file rewritten in place stays within one page (a write of it cannot be torn by a crash of its process). */
const IN_PLACE_MAX_BYTES = 4096;
/** The first read of a lease file asks for this much. */
const LEASE_READ_BYTES = 4096;

function checksumOf(name: string, state: LeaseState): string {
  return `sha256:${createHash("sha256").update(`${LEASE_FORMAT}\n${name}\n${state.holder}\n${state.token}\n${state.expiresAt}`).digest("hex")}`;
}

/** Parses and verifies a lease file: its state, or the reason it is damaged. */
export function decodeLease(text: string, name: string): { state: LeaseState } | { problem: string } {
  let parsed: Record<string, unknown>;
  try {
    parsed = JSON.parse(text) as Record<string, unknown>;
  } catch {
    return { problem: "not valid JSON" };
  }
  if (typeof parsed !== "object" || parsed === null || parsed.format !== LEASE_FORMAT || parsed.name !== name) return { problem: "not a lease file of this name" };
  const { holder, token, expiresAt, checksum } = parsed;
  if (typeof holder !== "string" || typeof token !== "number" || typeof expiresAt !== "number") return { problem: "malformed lease" };
  const state = { holder, token, expiresAt };
  if (checksum !== checksumOf(name, state)) return { problem: "fails its checksum" };
  return { state };
}

/** A lease file's verified state and its size in bytes. */
interface LeaseRead {
  state: LeaseState;
  bytes: number;
}

function leaseCorrupt(file: string, problem: string): KeelError {
  return new KeelError("corrupt", `lease file ${file} is damaged: ${problem}`, { details: { location: file, problem }, retryable: false });
}

/** An open lease file and what it holds. */
interface LeaseFile {
  file: string;
  /** The open file (the caller closes it), or `undefined` when the lease never existed. */
  fd: number | undefined;
  read: LeaseRead | undefined;
}

/**
 * Opens and reads a lease file. A damaged lease file is `corrupt`: falling back to an older
 * state could hand out a token twice. Callers that do not hold the lease's lock use
 * {@link readLeaseStateUnlocked}.
 */
function openLease(context: FsContext, name: string, flags: "r" | "r+"): LeaseFile {
  const file = context.paths.leaseFile(name);
  let fd: number;
  try {
    fd = context.io.openSync(file, flags);
  } catch (error) {
    if (isErrno(error, "ENOENT")) return { file, fd: undefined, read: undefined };
    throw error;
  }
  try {
    // A lease file is far smaller than a page: one read usually gets all of it.
    let bytes = readAt(context.io, fd, 0, LEASE_READ_BYTES);
    if (bytes.length === LEASE_READ_BYTES) bytes = readAt(context.io, fd, 0, context.io.fstatSync(fd).size);
    const decoded = decodeLease(bytes.toString("utf8"), name);
    if ("problem" in decoded) throw leaseCorrupt(file, decoded.problem);
    return { file, fd, read: { state: decoded.state, bytes: bytes.length } };
  } catch (error) {
    closeQuietly(context.io, fd);
    throw error;
  }
}

/** Reads the state of a lease, holding its lock (`undefined` when it never existed). */
export function readLeaseState(context: FsContext, name: string): LeaseState | undefined {
  const lease = openLease(context, name, "r");
  closeQuietly(context.io, lease.fd);
  return lease.read?.state;
}

/**
 * Reads the state of a lease without its lock. A lease file is rewritten in place, so a reader
 * racing a writer can see a mix of two states; the checksum fails, and the file is read again
 * under the lock, where only real damage still fails it.
 */
export async function readLeaseStateUnlocked(context: FsContext, name: string): Promise<LeaseState | undefined> {
  try {
    return readLeaseState(context, name);
  } catch (error) {
    if (!KeelError.is(error, "corrupt")) throw error;
    return underLeaseLock(context, name, () => readLeaseState(context, name));
  }
}

/**
 * A stored lease state as this boot sees it: one of an earlier boot (its token below `floor`,
 * see lease-epoch.ts) is over — its holders died with the machine.
 */
export function inThisBoot(state: LeaseState | undefined, floor: number): LeaseState | undefined {
  return state && state.token < floor ? { ...state, expiresAt: 0 } : state;
}

/**
 * Checks a fence against a stored lease state at store time `now`, `floor` being this boot's
 * token floor: a fence of an earlier boot is `lease_lost` even where a machine crash rolled the
 * lease file back to the state that handed it out.
 */
export function checkFenceInThisBoot(state: LeaseState | undefined, fence: Fence, now: number, floor: number): Result<void, KeelError> {
  if (state && state.token < floor && state.token === fence.token) {
    return err(leaseLost(fence, "was taken before this machine restarted (every lease of an earlier boot is over)"));
  }
  return checkFence(state, fence, now);
}

/**
 * Checks fences against the stored leases, by the store's clock. The caller holds the lease
 * locks ({@link fenceResources}), so no takeover can slip in before its write, and passes this
 * boot's token floor ({@link leaseFloor}).
 */
export function assertFences(context: FsContext, fences: readonly (Fence | undefined)[], floor: number): void {
  const now = context.clock.now();
  for (const fence of fences) {
    if (!fence) continue;
    const state = isSafeName(fence.lease) ? readLeaseState(context, fence.lease) : undefined;
    const checked = checkFenceInThisBoot(state, fence, now, floor);
    if (checked.isErr()) throw checked.error;
  }
}

/** The bytes of a lease file, padded with spaces (JSON allows them) to at least `minBytes`. */
function encodeLease(name: string, state: LeaseState, minBytes: number): Buffer {
  const text = JSON.stringify({ format: LEASE_FORMAT, name, ...state, checksum: checksumOf(name, state) }, null, 2);
  const length = Buffer.byteLength(text) + 1;
  return Buffer.from(`${text}${length < minBytes ? " ".repeat(minBytes - length) : ""}\n`);
}

/**
 * Writes a lease's new state, holding its lock. Lease state is not fsynced (docs/storage.md,
 * "Leases without fsync", says why that is safe):
 * - a new lease file is created durably (tmp + fsync + rename + directory fsync), once per name,
 *   so it exists with its blocks allocated;
 * - then each change is ONE `pwrite` at offset 0 of the whole file, padded to its size: it
 *   overwrites allocated blocks in the page cache, so no process crash can leave half of it
 *   (a write of at most one page is copied whole or not at all), no other process ever reads a
 *   stale state, and nothing is allocated that could fail. It costs a few microseconds, where a
 *   tmp + rename over the file costs ~0.1 ms even without fsync (ext4 flushes the new file's
 *   data on a rename that replaces a file) and a durable replace two fsyncs;
 * - a state that does not fit in the file (a longer holder name) replaces it durably instead.
 */
async function writeLease(context: FsContext, lease: LeaseFile, name: string, state: LeaseState): Promise<void> {
  if (lease.fd !== undefined && lease.read) {
    const bytes = encodeLease(name, state, lease.read.bytes);
    if (bytes.length === lease.read.bytes && bytes.length <= IN_PLACE_MAX_BYTES) {
      writeAll(context.io, lease.fd, bytes, 0);
      return;
    }
  }
  await writeFileDurably(context.io, lease.file, encodeLease(name, state, 0), { root: context.paths.root, backup: false });
}

/** Runs `work` on the open lease file `name`, holding the lease's lock; closes the file after. */
function changeLease<T>(context: FsContext, name: string, work: (lease: LeaseFile) => Promise<T>): Promise<T> {
  return underLeaseLock(context, name, async () => {
    const lease = openLease(context, name, "r+");
    try {
      return await work(lease);
    } finally {
      closeQuietly(context.io, lease.fd);
    }
  });
}

/** Runs `work` holding the lock of lease `name`. */
async function underLeaseLock<T>(context: FsContext, name: string, work: () => Promise<T> | T): Promise<T> {
  const release = await context.locks.acquire([leaseResource(name)]);
  try {
    return await work();
  } finally {
    release();
  }
}

/**
 * A stored state as an acquisition must see it: a lease of an earlier boot is over, and its
 * token is raised to this boot's floor, so that the next token is above every token handed out
 * before this machine's last restart.
 */
function forAcquisition(state: LeaseState | undefined, floor: number): LeaseState | undefined {
  if (floor === 0 || (state && state.token >= floor)) return state;
  return { holder: state?.holder ?? "", token: floor, expiresAt: 0 };
}

/**
 * The lease store: one file per lease name under `_keel/leases/`, changed under its lock, written
 * in place without fsync (see {@link writeLease}), its tokens above the boot epoch's floor.
 */
export function createFsLeaseStore(context: FsContext): LeaseStore {
  return {
    acquire: (name, holder, options) => {
      const parsed = validateAcquire(name, holder, options);
      if (parsed.isErr()) return errAsync(parsed.error);
      const { ttlMs, waitMs } = parsed.value;
      const attempt = () =>
        context.operation("acquire lease", async () => {
          const floor = await leaseFloor(context);
          return changeLease(context, parsed.value.name, async (lease): Promise<Attempt<Lease, Lease>> => {
            const previous = lease.read?.state;
            const decision = decideAcquire(forAcquisition(previous, floor), parsed.value.name, parsed.value.holder, context.clock.now(), ttlMs);
            if (!decision.acquired) return { done: false, last: previous ? { name: parsed.value.name, ...previous } : decision.held };
            const { holder: owner, token, expiresAt } = decision.lease;
            await writeLease(context, lease, parsed.value.name, { holder: owner, token, expiresAt });
            return { done: true, value: decision.lease };
          });
        });
      const settle = (outcome: Attempt<Lease, Lease>) => (outcome.done ? okAsync(outcome.value) : errAsync(leaseHeld(outcome.last, waitMs)));
      // The first try runs at once; only a held lease enters the polling loop.
      return attempt().andThen((first) => (first.done || waitMs === 0 ? settle(first) : pollUntil(attempt, waitMs).andThen(settle)));
    },
    renew: (lease, options) => {
      const parsed = validateLease(lease);
      if (parsed.isErr()) return errAsync(parsed.error);
      const renewOptions = validateRenewOptions(options);
      if (renewOptions.isErr()) return errAsync(renewOptions.error);
      return context.operation("renew lease", async () => {
        const floor = await leaseFloor(context);
        return changeLease(context, parsed.value.name, async (lease) => {
          const now = context.clock.now();
          const ttl = renewOptions.value.ttlMs ?? Math.max(1, parsed.value.expiresAt - now);
          const decided = decideRenew(inThisBoot(lease.read?.state, floor), parsed.value, now, ttl);
          if (decided.isErr()) throw decided.error;
          const { holder, token, expiresAt } = decided.value;
          await writeLease(context, lease, parsed.value.name, { holder, token, expiresAt });
          return decided.value;
        });
      });
    },
    release: (lease) => {
      const parsed = validateLease(lease);
      if (parsed.isErr()) return errAsync(parsed.error);
      return context.operation("release lease", async () => {
        const floor = await leaseFloor(context);
        return changeLease(context, parsed.value.name, async (lease) => {
          // A lease of an earlier boot is over already: nothing to write.
          const next = decideRelease(inThisBoot(lease.read?.state, floor), parsed.value);
          if (next) await writeLease(context, lease, parsed.value.name, next);
        });
      });
    },
    current: (name) => {
      const parsed = validateLeaseName(name);
      if (parsed.isErr()) return errAsync(parsed.error);
      return context.operation("read lease", async () => {
        const floor = await leaseFloor(context);
        const state = inThisBoot(await readLeaseStateUnlocked(context, parsed.value), floor);
        return state && state.expiresAt > context.clock.now() ? { name: parsed.value, ...state } : undefined;
      });
    },
  };
}

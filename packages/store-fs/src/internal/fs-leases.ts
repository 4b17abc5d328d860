import path from "node:path";
import { KeelError, isSafeName } from "@keel/core";
import { type Fence, type Lease, type LeaseStore } from "@keel/store";
import { checkFence, decideAcquire, decideRelease, decideRenew, leaseHeld, leaseLost, leaseWaitAborted, pollUntil, remainingTtl, validateAcquire, validateLease, validateLeaseName, validateRenewOptions, type Attempt, type LeaseState } from "@keel/store/kit";
import { ResultAsync, err, errAsync, ok, type Result } from "neverthrow";
import { leaseFloor, leaseReadFloor, type FsContext } from "./fs-context.js";
import { isErrno } from "./fs-io.js";
import { NEVER_HELD, createLeaseDirectory, entryExists, entryName, leaseDirectory, listLeaseEntry, type LeaseEntry } from "./lease-entry.js";

/**
 * The lease store of the filesystem store. Each lease is a directory, `_keel/leases/<name>/`,
 * whose one entry names its state; every change is a compare-and-swap by rename (see
 * lease-entry.ts). A fenced write that checks its fence the safe way holds the lease's lock until
 * its write has landed, and first marks the entry as watched (`.w`, one more rename). A change
 * that ends a watched token — a release, a takeover of an expired lease — takes that lock too, so
 * it waits for such a write; every other change needs no lock: a token nobody watched has no
 * safe-way write in flight, and a write that starts watching it after the change finds its
 * rename failing and its fence ended.
 */

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

/** At most this many lease entries are remembered per store instance. */
const MAX_REMEMBERED_ENTRIES = 4096;

/** Remembers the entry last seen or written of lease `name`. */
function rememberEntry(context: FsContext, name: string, entry: LeaseEntry): void {
  if (context.leaseEntries.size >= MAX_REMEMBERED_ENTRIES && !context.leaseEntries.has(name)) context.leaseEntries.clear();
  context.leaseEntries.set(name, entry);
}

/** How often a change is decided again after losing a compare-and-swap race before it gives up (`unavailable`). */
const MAX_RACES = 1000;

/**
 * The directory of lease `name`, through the store's path guard: one replaced by a symbolic
 * link (or with one on the way) is refused as `corrupt`, never listed or renamed into.
 */
function containedLeaseDirectory(context: FsContext, name: string): string {
  const directory = leaseDirectory(context.paths, name);
  context.guard.contain(directory);
  return directory;
}

/**
 * Reads lease `name`: from the entry this store instance last saw, when it is still there (one
 * `stat`), else by listing the directory. `undefined` when the lease never existed.
 */
export function readLeaseEntry(context: FsContext, name: string): LeaseEntry | undefined {
  const directory = containedLeaseDirectory(context, name);
  const cached = context.leaseEntries.get(name);
  if (cached && entryExists(context.io, directory, cached.entry)) return cached;
  const listed = listLeaseEntry(context.io, directory, context.holders);
  if (listed) rememberEntry(context, name, listed);
  else context.leaseEntries.delete(name);
  return listed;
}

/** Reads the state of a lease (`undefined` when it was never held). */
export function readLeaseState(context: FsContext, name: string): LeaseState | undefined {
  return readLeaseEntry(context, name)?.state;
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
 * lease back to the state that handed it out.
 */
export function checkFenceInThisBoot(state: LeaseState | undefined, fence: Fence, now: number, floor: number): Result<void, KeelError> {
  if (state && state.token < floor && state.token === fence.token) {
    return err(leaseLost(fence, "was taken before this machine restarted (every lease of an earlier boot is over)"));
  }
  return checkFence(state, fence, now);
}

/**
 * Checks a fence the safe way, by the store's clock, and marks its token as watched so that no
 * change ending it can land without the lease's lock. The caller holds that lock (both halves:
 * {@link fenceResources}) until its write has landed, and passes this boot's token floor
 * ({@link leaseFloor}). Resolves the lease state the fence was checked against.
 */
export function watchFence(context: FsContext, fence: Fence, floor: number): LeaseState {
  if (!isSafeName(fence.lease)) {
    const checked = checkFenceInThisBoot(undefined, fence, context.clock.now(), floor);
    throw checked.isErr() ? checked.error : leaseLost(fence, "is not a lease name");
  }
  const directory = leaseDirectory(context.paths, fence.lease);
  for (let races = 0; ; races++) {
    const current = readLeaseEntry(context, fence.lease);
    const checked = checkFenceInThisBoot(current?.state, fence, context.clock.now(), floor);
    if (checked.isErr()) throw checked.error;
    // The fence passed, so the entry names a state.
    const { state, code, entry } = current!;
    if (current!.watched) return state!;
    const watched = entryName(state!, code, true);
    try {
      context.io.renameSync(`${directory}${path.sep}${entry}`, `${directory}${path.sep}${watched}`);
    } catch (error) {
      // Changed meanwhile by a change that takes no lock: check again.
      if (!isErrno(error, "ENOENT")) throw error;
      context.leaseEntries.delete(fence.lease);
      if (races >= MAX_RACES) throw raced(fence.lease);
      continue;
    }
    rememberEntry(context, fence.lease, { entry: watched, state, code, watched: true });
    return state!;
  }
}

/** The error of a change that lost the compare-and-swap race {@link MAX_RACES} times in a row. */
function raced(name: string): KeelError {
  return new KeelError("unavailable", `lease "${name}" changed under ${MAX_RACES} tries in a row; try again`, { details: { lease: name }, retryable: true });
}

/**
 * Holds a fence for a document write until the returned function is called; throws the fence's
 * error when it fails. The caller holds the document's lock, and keeps what this returns until
 * its write has landed.
 *
 * The safe way takes the lease's lock (both halves) and marks the token as watched
 * ({@link watchFence}), so that no change that ends the token can slip in between the check and
 * the write. The fast way, for a lease this store instance acquired or renewed itself, takes only
 * the in-process half of that lock and checks that the lease's entry is still the one it wrote
 * (one `stat`). It is as safe, because:
 * - every change of the lease made in this process (a release, a renewal, another holder's
 *   acquisition after expiry) waits for the in-process half, so none lands during the write;
 * - another process can only take the lease once it has expired, and the fast way is taken only
 *   when the lease still has more than `lockStaleMs` to live. The write lands while the caller's
 *   document lock is fresh (younger than `lockStaleMs`), which every write of this store already
 *   assumes (a holder stalled longer loses its lock: the `lock-lost` warning), so it lands before
 *   the lease can expire;
 * - only the holder releases a lease, and the holder is in this process (a lease object handed
 *   to another process and released there is the one case this does not cover).
 */
export async function holdFence(context: FsContext, fence: Fence, floor: number): Promise<() => void> {
  if (!isSafeName(fence.lease)) {
    watchFence(context, fence, floor);
    return () => {};
  }
  const resource = leaseResource(fence.lease);
  const local = await context.locks.acquireLocal(resource);
  try {
    const own = context.ownLeases.get(fence.lease);
    if (own === fence.token) {
      const entry = context.leaseEntries.get(fence.lease);
      if (entry?.state && entryExists(context.io, containedLeaseDirectory(context, fence.lease), entry.entry)) {
        const now = context.clock.now();
        const checked = checkFenceInThisBoot(entry.state, fence, now, floor);
        if (checked.isErr()) throw checked.error;
        if (entry.state.expiresAt - now > context.lockStaleMs) return local;
      }
    }
    const crossProcess = await context.locks.acquireCrossProcess(resource);
    try {
      watchFence(context, fence, floor);
    } catch (error) {
      crossProcess();
      throw error;
    }
    return () => {
      crossProcess();
      local();
    };
  } catch (error) {
    local();
    throw error;
  }
}

/** What a change decided on a lease's current entry: nothing to write, or a new state. */
type Change<T> = { write: false; value: T } | { write: true; next: LeaseState; code: string; watched: boolean; endsToken: boolean; value: T };

/**
 * Changes lease `name`: `decide` sees its current entry and answers; a new state is written by
 * renaming the entry the decision was made on (a compare-and-swap: when another process changed
 * it meanwhile, the rename fails and `decide` runs again on what is there now). Holds the
 * in-process half of the lease's lock throughout, and the cross-process half too for a change
 * that ends a watched token (see {@link watchFence}).
 */
async function changeLease<T>(context: FsContext, name: string, decide: (current: LeaseEntry) => Change<T>): Promise<T> {
  const resource = leaseResource(name);
  const directory = containedLeaseDirectory(context, name);
  const local = await context.locks.acquireLocal(resource);
  let crossProcess: (() => void) | undefined;
  try {
    for (let races = 0; ; races++) {
      let current = context.leaseEntries.get(name);
      // A remembered entry is tried as it is: a rename from a stale one fails and is decided again.
      let verified = false;
      let exists = true;
      if (!current) {
        current = readLeaseEntry(context, name);
        verified = true;
        exists = current !== undefined;
        current ??= NEVER_HELD;
      }
      const change = decide(current);
      if (change.write && !exists) {
        // The first change of this lease: its directory is made (never held), then the change is decided again.
        await createLeaseDirectory(context.io, context.paths, name);
        continue;
      }
      if (!change.write) {
        // Nothing to write: the answer must come from the current state, not from a remembered one.
        if (verified || entryExists(context.io, directory, current.entry)) return change.value;
        context.leaseEntries.delete(name);
        continue;
      }
      if (change.endsToken && !crossProcess) {
        crossProcess = await context.locks.acquireCrossProcess(resource);
        continue;
      }
      const next = entryName(change.next, change.code, change.watched);
      try {
        context.io.renameSync(`${directory}${path.sep}${current.entry}`, `${directory}${path.sep}${next}`);
      } catch (error) {
        if (!isErrno(error, "ENOENT")) throw error;
        context.leaseEntries.delete(name);
        if (races >= MAX_RACES) throw raced(name);
        continue;
      }
      rememberEntry(context, name, { entry: next, state: change.next, code: change.code, watched: change.watched });
      return change.value;
    }
  } finally {
    crossProcess?.();
    local();
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
 * True when an acquisition that hands out `token` ends the token of `state`, which may still have
 * a fenced write in flight: one that checked its fence the safe way (under the lease's lock)
 * before the lease expired. A released lease, one of an earlier boot, or a holder taking its own
 * live lease again (the token stays) ends no such token.
 */
function endsLiveToken(state: LeaseState | undefined, token: number, floor: number): boolean {
  return state !== undefined && state.token >= floor && state.expiresAt !== 0 && state.token !== token;
}

/** The store's time in whole milliseconds, as lease states are kept (a fraction is dropped: a lease ends at most 1 ms early). */
function leaseNow(context: FsContext): number {
  return Math.floor(context.clock.now());
}

/** The lease store over lease directories, its tokens above the boot epoch's floor. */
export function createFsLeaseStore(context: FsContext): LeaseStore {
  const remember = (name: string, token: number) => context.ownLeases.set(name, token);
  return {
    acquire: (name, holder, options) => {
      const parsed = validateAcquire(name, holder, options);
      if (parsed.isErr()) return errAsync(parsed.error);
      const { ttlMs, waitMs, signal } = parsed.value;
      const attempt = () =>
        context.operation("acquire lease", async () => {
          const floor = await leaseFloor(context);
          const code = await context.holders.code(parsed.value.holder);
          const outcome = await changeLease(context, parsed.value.name, (current): Change<Attempt<Lease, Lease>> => {
            const previous = current.state;
            const decision = decideAcquire(forAcquisition(previous, floor), parsed.value.name, parsed.value.holder, leaseNow(context), ttlMs);
            if (!decision.acquired) return { write: false, value: { done: false, last: previous ? { name: parsed.value.name, ...previous } : decision.held } };
            const { holder: owner, token, expiresAt } = decision.lease;
            // A holder taking its live lease again keeps the token, and what watches it.
            const keeps = previous !== undefined && previous.token === token;
            return {
              write: true,
              next: { holder: owner, token, expiresAt },
              code,
              watched: keeps && current.watched,
              endsToken: current.watched && endsLiveToken(previous, token, floor),
              value: { done: true, value: decision.lease },
            };
          });
          if (outcome.done) remember(outcome.value.name, outcome.value.token);
          return outcome;
        });
      // The first try runs at once; only a held lease enters the polling loop. Awaited, not chained:
      // role sessions take a lease on every turn.
      const acquire = async (): Promise<Result<Lease, KeelError>> => {
        if (signal?.aborted) return err(leaseWaitAborted(signal));
        let outcome = await attempt();
        if (outcome.isOk() && !outcome.value.done && waitMs > 0) outcome = await pollUntil(attempt, waitMs, signal);
        if (outcome.isErr()) return err(outcome.error);
        return outcome.value.done ? ok(outcome.value.value) : err(leaseHeld(outcome.value.last, waitMs));
      };
      return new ResultAsync(acquire());
    },
    renew: (lease, options) => {
      const parsed = validateLease(lease);
      if (parsed.isErr()) return errAsync(parsed.error);
      const renewOptions = validateRenewOptions(options);
      if (renewOptions.isErr()) return errAsync(renewOptions.error);
      return context.operation("renew lease", async () => {
        const floor = await leaseFloor(context);
        const renewed = await changeLease(context, parsed.value.name, (current): Change<Result<Lease, KeelError>> => {
          const now = leaseNow(context);
          const ttl = renewOptions.value.ttlMs ?? remainingTtl(parsed.value.expiresAt, now);
          const decided = decideRenew(inThisBoot(current.state, floor), parsed.value, now, ttl);
          if (decided.isErr()) return { write: false, value: decided };
          const { holder, token, expiresAt } = decided.value;
          return { write: true, next: { holder, token, expiresAt }, code: current.code, watched: current.watched, endsToken: false, value: decided };
        });
        if (renewed.isErr()) throw renewed.error;
        remember(renewed.value.name, renewed.value.token);
        return renewed.value;
      });
    },
    release: (lease) => {
      const parsed = validateLease(lease);
      if (parsed.isErr()) return errAsync(parsed.error);
      return context.operation("release lease", async () => {
        const floor = await leaseFloor(context);
        if (context.ownLeases.get(parsed.value.name) === parsed.value.token) context.ownLeases.delete(parsed.value.name);
        await changeLease(context, parsed.value.name, (current): Change<void> => {
          // A lease of an earlier boot is over already: nothing to write.
          const next = decideRelease(inThisBoot(current.state, floor), parsed.value);
          return next ? { write: true, next, code: current.code, watched: false, endsToken: current.watched, value: undefined } : { write: false, value: undefined };
        });
      });
    },
    current: (name) => {
      const parsed = validateLeaseName(name);
      if (parsed.isErr()) return errAsync(parsed.error);
      return context.operation("read lease", async () => {
        const floor = await leaseReadFloor(context);
        const state = inThisBoot(readLeaseState(context, parsed.value), floor);
        return state && state.expiresAt > context.clock.now() ? { name: parsed.value, ...state } : undefined;
      });
    },
  };
}

/** Reads a lease directory for `check()`: a problem message, or `undefined` when it is sound. */
export function inspectLeaseDirectory(context: FsContext, name: string): string | undefined {
  try {
    listLeaseEntry(context.io, leaseDirectory(context.paths, name), context.holders);
    return undefined;
  } catch (error) {
    if (KeelError.is(error, "corrupt")) return error.message;
    throw error;
  }
}


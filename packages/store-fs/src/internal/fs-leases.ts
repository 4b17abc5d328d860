import { createHash } from "node:crypto";
import { KeelError, isSafeName } from "@keel/core";
import {
  checkFence,
  decideAcquire,
  decideRelease,
  decideRenew,
  leaseHeld,
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
import { errAsync, okAsync } from "neverthrow";
import type { FsContext } from "./fs-context.js";
import { writeFileDurably } from "./fs-durable-write.js";
import { isErrno } from "./fs-io.js";

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

/**
 * Reads the state of a lease (`undefined` when it never existed). A damaged lease file is
 * `corrupt`: falling back to an older state could hand out a token twice.
 */
export function readLeaseState(context: FsContext, name: string): LeaseState | undefined {
  const file = context.paths.leaseFile(name);
  let text: string;
  try {
    text = context.io.readFileSync(file).toString("utf8");
  } catch (error) {
    if (isErrno(error, "ENOENT")) return undefined;
    throw error;
  }
  const decoded = decodeLease(text, name);
  if ("problem" in decoded) {
    throw new KeelError("corrupt", `lease file ${file} is damaged: ${decoded.problem}`, {
      details: { location: file, problem: decoded.problem },
      retryable: false,
    });
  }
  return decoded.state;
}

/**
 * Checks fences against the stored leases, by the store's clock. The caller holds the lease
 * locks ({@link fenceResources}), so no takeover can slip in before its write.
 */
export function assertFences(context: FsContext, fences: readonly (Fence | undefined)[]): void {
  const now = context.clock.now();
  for (const fence of fences) {
    if (!fence) continue;
    const state = isSafeName(fence.lease) ? readLeaseState(context, fence.lease) : undefined;
    const checked = checkFence(state, fence, now);
    if (checked.isErr()) throw checked.error;
  }
}

async function writeLease(context: FsContext, name: string, state: LeaseState): Promise<void> {
  const text = `${JSON.stringify({ format: LEASE_FORMAT, name, ...state, checksum: checksumOf(name, state) }, null, 2)}\n`;
  await writeFileDurably(context.io, context.paths.leaseFile(name), Buffer.from(text), { root: context.paths.root, backup: false });
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

/** The lease store: one durable file per lease name under `_keel/leases/`, changed under its lock. */
export function createFsLeaseStore(context: FsContext): LeaseStore {
  return {
    acquire: (name, holder, options) => {
      const parsed = validateAcquire(name, holder, options);
      if (parsed.isErr()) return errAsync(parsed.error);
      const { ttlMs, waitMs } = parsed.value;
      const attempt = () =>
        context.operation("acquire lease", () =>
          underLeaseLock(context, parsed.value.name, async (): Promise<Attempt<Lease, Lease>> => {
            const decision = decideAcquire(readLeaseState(context, parsed.value.name), parsed.value.name, parsed.value.holder, context.clock.now(), ttlMs);
            if (!decision.acquired) return { done: false, last: decision.held };
            const { holder: owner, token, expiresAt } = decision.lease;
            await writeLease(context, parsed.value.name, { holder: owner, token, expiresAt });
            return { done: true, value: decision.lease };
          }),
        );
      return pollUntil(attempt, waitMs).andThen((outcome) => (outcome.done ? okAsync(outcome.value) : errAsync(leaseHeld(outcome.last, waitMs))));
    },
    renew: (lease, options) => {
      const parsed = validateLease(lease);
      if (parsed.isErr()) return errAsync(parsed.error);
      const renewOptions = validateRenewOptions(options);
      if (renewOptions.isErr()) return errAsync(renewOptions.error);
      return context.operation("renew lease", () =>
        underLeaseLock(context, parsed.value.name, async () => {
          const now = context.clock.now();
          const ttl = renewOptions.value.ttlMs ?? Math.max(1, parsed.value.expiresAt - now);
          const decided = decideRenew(readLeaseState(context, parsed.value.name), parsed.value, now, ttl);
          if (decided.isErr()) throw decided.error;
          const { holder, token, expiresAt } = decided.value;
          await writeLease(context, parsed.value.name, { holder, token, expiresAt });
          return decided.value;
        }),
      );
    },
    release: (lease) => {
      const parsed = validateLease(lease);
      if (parsed.isErr()) return errAsync(parsed.error);
      return context.operation("release lease", () =>
        underLeaseLock(context, parsed.value.name, async () => {
          const next = decideRelease(readLeaseState(context, parsed.value.name), parsed.value);
          if (next) await writeLease(context, parsed.value.name, next);
        }),
      );
    },
    current: (name) => {
      const parsed = validateLeaseName(name);
      if (parsed.isErr()) return errAsync(parsed.error);
      return context.operation("read lease", () => {
        const state = readLeaseState(context, parsed.value);
        return state && state.expiresAt > context.clock.now() ? { name: parsed.value, ...state } : undefined;
      });
    },
  };
}

import { createEventBus, createManualClock, type ManualClock } from "@keel/core";
import { createRoleSessions, type RoleSessionTurnRequest } from "@keel/sessions";
import { roleLeaseName } from "@keel/sessions/schemas";
import { createMemoryStore, type KeelStore } from "@keel/store";
import { createFsStore } from "@keel/store-fs";
import { ResultAsync } from "neverthrow";
import { afterEach, describe, expect, it, vi } from "vitest";
import { temporaryDirectory } from "./support/sessions-fixture-dirs.js";

const request: RoleSessionTurnRequest = { missionId: "m1", role: "engineer", backend: { id: "codex", resumable: true }, model: null, branch: "main", objectiveRevision: 1 };
const cleanups: (() => void | Promise<void>)[] = [];
afterEach(async () => {
  vi.useRealTimers();
  while (cleanups.length > 0) await cleanups.pop()!();
});

/** The store a turn runs on, and a second view of it (another process, on the filesystem store). */
const stores: [string, (clock: ManualClock) => { store: KeelStore; other: KeelStore }][] = [
  [
    "memory",
    (clock) => {
      const store = createMemoryStore({ clock });
      return { store, other: store };
    },
  ],
  [
    "filesystem",
    (clock) => {
      const { dir, remove } = temporaryDirectory("renewal");
      const [store, other] = [createFsStore({ dir, clock }), createFsStore({ dir, clock })];
      cleanups.push(remove, () => store.close(), () => other.close());
      return { store, other };
    },
  ],
];

describe("the role's lease during a long turn", () => {
  it.each(stores)("is renewed while the turn outlives its time to live: no one else can take it, and the turn saves (%s store)", async (_name, open) => {
    // The renewal runs on timers and expiry on the store's clock: both advance together here.
    vi.useFakeTimers();
    const clock = createManualClock();
    const { store, other } = open(clock);
    const sessions = createRoleSessions({ store, clock, events: createEventBus({ clock }), policy: "rolling", lease: { ttlMs: 1_000 } });
    (await sessions.initMissionCheckpoint("m1"))._unsafeUnwrap();
    const leaseName = roleLeaseName("m1", "engineer");
    const attempts: string[] = [];
    const result = await sessions.runTurn(request, () =>
      ResultAsync.fromSafePromise(
        (async () => {
          // Five times the lease's time to live, in steps that the renewal (every third of it) keeps up with.
          for (let step = 0; step < 25; step++) {
            clock.advance(200);
            await vi.advanceTimersByTimeAsync(200);
            if (step % 5 === 4) {
              const taken = await other.leases.acquire(leaseName, "other-process", { ttlMs: 60_000 });
              attempts.push(taken.isErr() ? taken.error.code : "acquired");
            }
          }
          return { text: "long", threadId: "t-1", usage: null, promptBytes: 1, openCheckpointItems: ["x"] };
        })(),
      ),
    );
    expect(attempts).toEqual(["lease_held", "lease_held", "lease_held", "lease_held", "lease_held"]);
    expect(result._unsafeUnwrap().warnings).toEqual([]);
    expect((await sessions.readCapsule("m1", "engineer"))._unsafeUnwrap()?.counters.totalTurns).toBe(1);
    expect((await sessions.readMissionCheckpoint("m1"))._unsafeUnwrap()?.checkpoint.roles.engineer?.openItems).toEqual(["x"]);
    await sessions.close();
    // Released after the turn: another process takes it at once.
    expect((await other.leases.acquire(leaseName, "other-process", { ttlMs: 60_000 })).isOk()).toBe(true);
  });
});

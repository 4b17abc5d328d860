import { KeelError } from "@keel/core";
import { createRoleSessions } from "@keel/sessions";
import { RoleLeaseOptionsSchema } from "@keel/sessions/schemas";
import { createMemoryStore } from "@keel/store";
import { describe, expect, it } from "vitest";
import { expectThrowsKeel } from "../../../test/support/hostile.js";

describe("the lease options", () => {
  it("accept a renewal interval below the time to live, and refuse one at or above it", () => {
    expect(RoleLeaseOptionsSchema.safeParse({ ttlMs: 6_000, renewIntervalMs: 1_000, waitMs: 0 }).success).toBe(true);
    expect(RoleLeaseOptionsSchema.safeParse({ renewIntervalMs: 29_999 }).success).toBe(true);
    for (const lease of [{ renewIntervalMs: 30_000 }, { ttlMs: 1_000, renewIntervalMs: 1_000 }, { renewIntervalMs: 5 }, { ttlMs: 99 }]) {
      const error = expectThrowsKeel(() => createRoleSessions({ store: createMemoryStore(), lease }));
      expect(error).toBeInstanceOf(KeelError);
      expect(error.code).toBe("invalid_input");
    }
  });
});

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { updateDoc } from "@keel/store/kit";
import { afterEach, expect, it } from "vitest";
import { createSqliteStore } from "./index.js";

const made: string[] = [];
afterEach(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
});

it("runs the README example", async () => {
  const dir = mkdtempSync(path.join(tmpdir(), "keel-sqlite-readme-"));
  made.push(dir);
  const file = path.join(dir, "keel.db");

  // --- the README example, with `file` for "keel.db" ---
  const store = createSqliteStore({ file });
  await store.docs.put(["missions", "m1", "role-sessions", "engineer"], { turns: 0 }, { create: true });
  await updateDoc<{ turns: number }>(store.docs, ["missions", "m1", "role-sessions", "engineer"], (current) => ({
    turns: (current?.value.turns ?? 0) + 1,
  }));
  await store.logs.append(["runs", "r1"], [{ id: "call-0", value: { ok: true } }]);
  const lease = await store.leases.acquire("mission.m1", "worker-1", { ttlMs: 30_000 });
  const report = await store.check();
  // --- end of the example (close comes after the assertions) ---

  expect(report._unsafeUnwrap()).toEqual({ ok: true, repaired: [], problems: [] });
  expect(lease._unsafeUnwrap()).toMatchObject({ holder: "worker-1", token: 1 });
  expect((await store.docs.get(["missions", "m1", "role-sessions", "engineer"]))._unsafeUnwrap()).toMatchObject({ value: { turns: 1 }, version: 2 });
  await store.close();
});

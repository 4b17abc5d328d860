import { readFileSync } from "node:fs";
import path from "node:path";
import { updateDoc } from "@keel/store/kit";
import { useTempDirs } from "@keel/testkit";
import { expect, it } from "vitest";
import { createFsStore, type FsStoreWarning } from "./index.js";

const dirs = useTempDirs("keel-fs-readme-");

it("runs the README example", async () => {
  const dir = path.join(dirs.dir(), ".keel");
  const warnings: FsStoreWarning[] = [];

  // --- the README example, with `dir` for ".keel" ---
  const store = createFsStore({ dir, onWarning: (warning) => warnings.push(warning) });
  await store.docs.put(["missions", "m1", "role-sessions", "engineer"], { turns: 0 }, { create: true });
  await updateDoc<{ turns: number }>(store.docs, ["missions", "m1", "role-sessions", "engineer"], (current) => ({
    turns: (current?.value.turns ?? 0) + 1,
  }));
  await Promise.all([
    store.logs.append(["runs", "r1"], [{ id: "call-0", value: { ok: true } }]),
    store.logs.append(["runs", "r1"], [{ id: "call-1", value: { ok: true } }]),
  ]);
  await store.logs.append(["runs", "r1"], [{ id: "note-0", value: { cheap: true } }], { durable: false });
  const report = await store.check({ repair: true });
  // --- end of the example ---

  expect(report.isOk() && report.value).toEqual({ ok: true, repaired: [], problems: [], quarantined: [] });
  expect(JSON.parse(readFileSync(path.join(dir, "missions", "m1", "role-sessions", "engineer.json"), "utf8")).value).toEqual({ turns: 1 });
  expect(JSON.parse(readFileSync(path.join(dir, "missions", "m1", "role-sessions", "engineer.json.bak"), "utf8")).value).toEqual({ turns: 0 });
  expect((await store.logs.read(["runs", "r1"]))._unsafeUnwrap().map((record) => record.id).sort()).toEqual(["call-0", "call-1", "note-0"]);
  expect(warnings).toEqual([]);
  await store.close();
});

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { createSqliteStore } from "@keel/store-sqlite";
import { afterAll } from "vitest";
import { describeMultiProcess } from "./support/store-sql-multiprocess.js";

const made: string[] = [];
afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

describeMultiProcess(
  "@keel/store-sqlite with several processes on one file",
  async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "keel-sqlite-multiprocess-"));
    made.push(dir);
    const file = path.join(dir, "keel.db");
    return { kind: "sqlite", location: file, schema: "-", open: () => createSqliteStore({ file }) };
  },
  async () => {},
);

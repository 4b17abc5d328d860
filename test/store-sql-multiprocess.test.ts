import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { createPostgresStore } from "@keel/store-postgres";
import { createSqliteStore } from "@keel/store-sqlite";
import { afterAll } from "vitest";
import { describeWithPostgres, dropSchema, freshSchemaName, testPostgresUrl } from "../packages/store-postgres/test-support/postgres-test-database.js";
import { describeMultiProcess } from "./support/store-multiprocess.js";

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

describeWithPostgres("@keel/store-postgres with several processes", () => {
  describeMultiProcess(
    "on one schema (as many hosts on one database)",
    async () => {
      const schema = freshSchemaName();
      return { kind: "postgres", location: testPostgresUrl, schema, open: () => createPostgresStore({ connectionString: testPostgresUrl, schema, poolSize: 2 }) };
    },
    async (target) => dropSchema(target.schema),
  );
});

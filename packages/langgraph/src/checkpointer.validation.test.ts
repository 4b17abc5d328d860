/**
 * LangGraph's own published conformance suite (`@langchain/langgraph-checkpoint-validation`) on
 * every Keel store. The suite uses Vitest's globals, so they are installed before it loads; each
 * checkpointer it creates gets a store of its own (memory, a fresh directory, a fresh SQLite file,
 * a fresh PostgreSQL schema), as the suite requires.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createMemoryStore, type KeelStore } from "@keel/store";
import { createFsStore } from "@keel/store-fs";
import { createPostgresStore } from "@keel/store-postgres";
import { createSqliteStore } from "@keel/store-sqlite";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, test } from "vitest";
import { dropSchema, freshSchemaName, testPostgresUrl } from "../../store-postgres/test-support/postgres-test-database.js";
import { createKeelCheckpointer, type KeelCheckpointSaver } from "./index.js";

Object.assign(globalThis, { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, test });
const { validate } = await import("@langchain/langgraph-checkpoint-validation");

const cleanups = new WeakMap<KeelCheckpointSaver, () => Promise<void>>();

function initializer(name: string, open: () => Promise<{ store: KeelStore; cleanup: () => Promise<void> }>) {
  return {
    checkpointerName: `@keel/langgraph (${name})`,
    async createCheckpointer() {
      const { store, cleanup } = await open();
      const checkpointer = createKeelCheckpointer({ store });
      cleanups.set(checkpointer, async () => {
        await store.close();
        await cleanup();
      });
      return checkpointer;
    },
    async destroyCheckpointer(checkpointer: KeelCheckpointSaver) {
      await cleanups.get(checkpointer)?.();
    },
  };
}

validate(initializer("memory", async () => ({ store: createMemoryStore(), cleanup: async () => undefined })));

validate(
  initializer("fs", async () => {
    const dir = await mkdtemp(join(tmpdir(), "keel-langgraph-fs-"));
    return { store: createFsStore({ dir }), cleanup: () => rm(dir, { recursive: true, force: true }) };
  }),
);

validate(
  initializer("sqlite", async () => {
    const dir = await mkdtemp(join(tmpdir(), "keel-langgraph-sqlite-"));
    return { store: createSqliteStore({ file: join(dir, "keel.db") }), cleanup: () => rm(dir, { recursive: true, force: true }) };
  }),
);

validate(
  initializer("postgres", async () => {
    const schema = freshSchemaName();
    return { store: createPostgresStore({ connectionString: testPostgresUrl, schema, poolSize: 3 }), cleanup: () => dropSchema(schema) };
  }),
);

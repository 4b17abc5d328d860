export { createPostgresStore } from "./postgres-store.js";
export type { PostgresStore } from "./postgres-store.js";
export { PostgresStoreOptionsSchema } from "./postgres-store-options.js";
export type { PostgresStoreOptions } from "./postgres-store-options.js";
export { POSTGRES_SCHEMA_VERSION } from "./internal/postgres-schema.js";
export type { PostgresMigration } from "./internal/postgres-schema.js";

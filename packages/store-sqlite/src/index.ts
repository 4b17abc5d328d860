export { createSqliteStore } from "./sqlite-store.js";
export type { SqliteStore } from "./sqlite-store.js";
export { SqliteStoreOptionsSchema } from "./sqlite-store-options.js";
export type { SqliteStoreOptions } from "./sqlite-store-options.js";
export { SQLITE_SCHEMA_VERSION } from "./internal/sqlite-schema.js";
export type { SqliteMigration } from "./internal/sqlite-schema.js";

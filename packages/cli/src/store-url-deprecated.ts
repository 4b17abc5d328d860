import type { KeelError } from "@keel/core";
import { openStore, type StoreLocation } from "@keel/runtime";
import type { KeelStore } from "@keel/store";
import type { ResultAsync } from "neverthrow";

/**
 * Opens a parsed store location for reading only: nothing is created or migrated.
 *
 * @deprecated use `openStore(location, { mode: "read" })` of `@keel/runtime`, which opens store
 * URLs now (and loads the SQL adapters only when a URL names one).
 */
export function openStoreForReading(location: StoreLocation): ResultAsync<KeelStore, KeelError> {
  return openStore(location, { mode: "read" });
}

import { KeelError } from "@keel/core";
import type { Backend } from "@keel/backend";
import { listBuiltInAdapters } from "@keel/backends";
import { err, ok, type Result } from "neverthrow";

/**
 * What the demo passes to an adapter: its environment and whether it inherits this process's
 * (the fake provider gives each CLI a sandboxed one), and the settings a fake-provider setup adds
 * (`FakeProviderAdapterOptions` of `@keel/testkit/provider`). Each adapter reads the fields it knows.
 */
export interface DemoAdapterOptions {
  env?: Record<string, string>;
  inheritEnv?: boolean;
  provider?: string;
  model?: string;
  extraArgs?: string[];
  skipGitRepoCheck?: boolean;
  allowAll?: boolean;
}

// The CLI adapters of @keel/backends, each of which creates its own backend. Loaded when the
// demo command loads (as its static imports of every adapter did), so the help and the
// argument checks stay synchronous.
const CLI_ADAPTERS = (await listBuiltInAdapters()).filter((adapter) => adapter.kind === "cli");

/** The CLI backends `keel demo --backend` accepts: every CLI adapter of `@keel/backends`. */
export const CLI_BACKEND_IDS: readonly string[] = CLI_ADAPTERS.map((adapter) => adapter.id);

/** A real CLI backend by id, with `options` (default: the adapter's own defaults); `invalid_input` for an unknown id. */
export function createCliBackendById(id: string, options: DemoAdapterOptions = {}): Result<Backend, KeelError> {
  const adapter = CLI_ADAPTERS.find((candidate) => candidate.id === id);
  if (!adapter) {
    return err(new KeelError("invalid_input", `unknown backend "${id}": use scripted or one of ${CLI_BACKEND_IDS.join(", ")}`, { details: { id } }));
  }
  return ok(adapter.create({ ...options }));
}

import { readFileSync } from "node:fs";
import { KeelError, validate } from "@keel/core";
import { errAsync, okAsync, ResultAsync } from "neverthrow";
import { z } from "zod";
import type { BackendAdapterInfo } from "./kit/index.js";

/**
 * Subpaths of this package that are not adapters. `./claude-agent-sdk` is a backend over an
 * in-process SDK the host installs and passes in, not a command `keel doctor` can find and probe.
 */
const NOT_ADAPTERS = new Set([".", "./kit", "./scripted", "./claude-agent-sdk", "./package.json", "./internal/*"]);

let adapterIds: readonly string[] | undefined;

/**
 * The ids of the adapters of `@keel/backends`, read from its own `exports` map: every subpath but
 * the root, `./kit`, `./scripted` and `./claude-agent-sdk` is an adapter folder exporting `adapterInfo`. Adding an
 * adapter is one folder and one `exports` entry; nothing else lists them. Synchronous, and no
 * adapter is loaded (for schemas and help texts).
 */
export function builtInAdapterIds(): readonly string[] {
  if (adapterIds === undefined) {
    const manifest = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { exports: Record<string, unknown> };
    adapterIds = Object.freeze(
      Object.keys(manifest.exports)
        .filter((key) => !NOT_ADAPTERS.has(key))
        .map((key) => key.slice(2)),
    );
  }
  return adapterIds;
}

function importAdapter(id: string): Promise<{ adapterInfo?: BackendAdapterInfo }> {
  // Sources (`@keel/source`, tests) are .ts, the built package .js: load the sibling of this file's kind.
  const extension = new URL(import.meta.url).pathname.endsWith(".ts") ? "ts" : "js";
  return import(/* @vite-ignore */ new URL(`./${id}/index.${extension}`, import.meta.url).href) as Promise<{ adapterInfo?: BackendAdapterInfo }>;
}

/**
 * The `adapterInfo` of every adapter of `@keel/backends` ({@link builtInAdapterIds}), in the
 * order of its `exports` map. Loads every adapter.
 */
export async function listBuiltInAdapters(): Promise<BackendAdapterInfo[]> {
  const modules = await Promise.all(builtInAdapterIds().map(importAdapter));
  return modules.flatMap((module) => (module.adapterInfo ? [module.adapterInfo] : []));
}

const AdapterIdSchema = z.string().min(1).max(64);

/**
 * The built-in adapter `id` (`"codex"`, `"claude-code"`, …), loading only its own subpath: its
 * `adapterInfo`, whose `create(options)` builds the backend. This is how a host picks an adapter
 * by id (the CLI's demo, the MCP server's executor) without a table of its own.
 *
 * @returns the adapter, `invalid_input` when `id` is not a string, `not_found` (with
 * `details.known`, the ids there are) when no adapter has that id, or `unavailable` when its
 * module fails to load.
 *
 * @example
 * ```ts
 * const adapter = await loadBuiltInAdapter("codex");
 * if (adapter.isOk()) {
 *   const backend = adapter.value.create({ command: "/opt/codex/bin/codex" });
 * }
 * ```
 */
export function loadBuiltInAdapter(id: string): ResultAsync<BackendAdapterInfo, KeelError> {
  const valid = validate(AdapterIdSchema, id, "adapter id");
  if (valid.isErr()) return errAsync(valid.error);
  const known = builtInAdapterIds();
  if (!known.includes(valid.value)) {
    return errAsync(new KeelError("not_found", `no built-in backend adapter "${valid.value}": use one of ${known.join(", ")}`, { details: { id: valid.value, known: [...known] } }));
  }
  return ResultAsync.fromThrowable(importAdapter, (cause) =>
    new KeelError("unavailable", `could not load the ${valid.value} adapter: ${cause instanceof Error ? cause.message : String(cause)}`, { details: { id: valid.value }, cause }),
  )(valid.value).andThen((module) =>
    module.adapterInfo
      ? okAsync(module.adapterInfo)
      : errAsync(new KeelError("unavailable", `@keel/backends/${valid.value} exports no adapterInfo`, { details: { id: valid.value } })),
  );
}

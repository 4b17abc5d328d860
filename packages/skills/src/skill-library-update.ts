import { join, relative, sep } from "node:path";
import { KeelError, toKeelError, validate } from "@keel/core";
import { errAsync, ResultAsync } from "neverthrow";
import { z } from "zod";
import { readLibraryState, writeLibraryState } from "./internal/library-state.js";
import { withRoleLock } from "./internal/role-lock.js";
import { prepareSkill, type PreparedSkill } from "./internal/skill-source.js";
import { digestOfInstalled } from "./internal/skill-swap.js";
import { importLocked, metadataFor, readSkillMetadata } from "./skill-import.js";
import { errnoOf } from "./skill-io.js";
import { decideLibraryUpdate, type LibraryPlanEntry } from "./skill-library-decision.js";
import { type ManagedContext, managedContext, type ManagedLayerOptions, managedOptionsSchema } from "./skill-manage-options.js";
import { moveToTrash } from "./skill-withdraw.js";

/** Options of {@link updateLibrary} and {@link installLibrary}. */
export interface UpdateLibraryOptions extends ManagedLayerOptions {
  /** The library source: a directory (a checkout of a skills repository). Its inventory is every directory holding a SKILL.md, up to 3 levels down. */
  source: string;
  /** Routing of skills added by this update (updated skills keep theirs). Required: `'unclassified'` must be asked for. */
  routing: { routes: string[] } | "unclassified";
  /** The source's revision (a commit id), recorded in each installed skill's metadata. */
  revision?: string;
  /** Execute the plan (default false: a dry run that only returns it). */
  apply?: boolean;
  /** Overwrite locally modified skills and skills of the same name the library did not install. */
  force?: boolean;
  /** Remove (to the trash) skills that are gone upstream. */
  prune?: boolean;
}

/** One line of the report: the plan entry and whether it was carried out. */
export interface LibraryUpdateEntry extends LibraryPlanEntry {
  /** True when `apply` carried out its operation. */
  done: boolean;
}

/** The plan of an update, or what was applied. */
export interface LibraryUpdateReport {
  /** Real path of the library source. */
  library: string;
  /** True when the plan was applied. */
  applied: boolean;
  /** One entry per skill name, sorted by name. */
  entries: LibraryUpdateEntry[];
}

const Schema = managedOptionsSchema({
  source: z.string().min(1).max(4096),
  routing: z.union([z.literal("unclassified"), z.object({ routes: z.array(z.string()).min(1).max(64) }).strict()]),
  revision: z.string().min(1).max(256).optional(),
  apply: z.boolean().optional(),
  force: z.boolean().optional(),
  prune: z.boolean().optional(),
});

const INVENTORY_DEPTH = 3;

/** The skill directories of a source: every directory holding a SKILL.md (not searched further), dot directories and node_modules skipped. */
async function inventory(context: ManagedContext, library: string): Promise<string[]> {
  const found: string[] = [];
  const walk = async (directory: string, depth: number): Promise<void> => {
    const names = (await context.io.readdir(directory)).sort();
    if (depth > 0 && names.includes("SKILL.md")) {
      found.push(directory);
      return;
    }
    if (depth >= INVENTORY_DEPTH) return;
    for (const name of names) {
      if (name.startsWith(".") || name === "node_modules") continue;
      const path = join(directory, name);
      if ((await context.io.lstat(path)).isDirectory()) await walk(path, depth + 1);
    }
  };
  await walk(library, 0);
  return found;
}

type Upstream = Map<string, { prepared: PreparedSkill; path: string } | { invalid: string; path: string }>;

async function readUpstream(context: ManagedContext, library: string): Promise<Upstream> {
  const upstream: Upstream = new Map();
  for (const directory of await inventory(context, library)) {
    const path = relative(library, directory).split(sep).join("/");
    try {
      const prepared = await prepareSkill(context.io, directory, context.limits);
      if (upstream.has(prepared.name)) upstream.set(prepared.name, { invalid: `two skills are named "${prepared.name}" upstream`, path });
      else upstream.set(prepared.name, { prepared, path });
    } catch (error) {
      if (!KeelError.is(error, "invalid_input")) throw error;
      const name = path.split("/").pop()!;
      if (!upstream.has(name)) upstream.set(name, { invalid: error.message, path });
    }
  }
  return upstream;
}

async function plan(context: ManagedContext, library: string, upstream: Upstream, options: { force: boolean; prune: boolean }): Promise<LibraryPlanEntry[]> {
  const state = await readLibraryState(context);
  const names = [...new Set([...upstream.keys(), ...Object.keys(state.skills)])].sort();
  const entries: LibraryPlanEntry[] = [];
  for (const name of names) {
    const recorded = state.skills[name];
    const found = upstream.get(name);
    const current = await digestOfInstalled(context.io, context.roleDirectory, name, context.limits);
    const entry = decideLibraryUpdate(
      {
        name,
        recorded: recorded ? { library: recorded.library, digest: recorded.digest, withdrawn: recorded.withdrawn === true } : null,
        current,
        upstream: found ? ("prepared" in found ? { digest: found.prepared.digest } : { invalid: found.invalid }) : null,
      },
      library,
      options,
    );
    if (recorded || found) entries.push(entry);
  }
  return entries.filter((entry) => !(entry.action === "unchanged" && entry.reason === "not from this library"));
}

const sameEntry = (left: LibraryPlanEntry, right: LibraryPlanEntry | undefined) =>
  right !== undefined && left.name === right.name && left.operation === right.operation && left.current === right.current && left.upstream === right.upstream;

async function applyPlan(context: ManagedContext, library: string, upstream: Upstream, entries: LibraryPlanEntry[], options: UpdateLibraryOptions): Promise<LibraryUpdateEntry[]> {
  const state = await readLibraryState(context);
  const done: LibraryUpdateEntry[] = [];
  for (const entry of entries) {
    const found = upstream.get(entry.name);
    if (entry.operation === "install" && found && "prepared" in found) {
      const target = join(context.roleDirectory, entry.name);
      const previous = entry.current === null ? undefined : await readSkillMetadata(target, context.io).unwrapOr(undefined);
      const routing = previous ? (previous.routing.status === "unclassified" ? ("unclassified" as const) : { routes: previous.routing.routes }) : options.routing;
      const source = { library, ...(options.revision ? { revision: options.revision } : {}) };
      const metadata = metadataFor(found.prepared, { routing, source }, "unverified", context.clock.now());
      await importLocked(context, found.prepared, metadata, { overwrite: true, expect: entry.current === null ? { absent: true } : { digest: entry.current } });
      state.skills[entry.name] = { library, path: found.path, digest: found.prepared.digest };
      await writeLibraryState(context, state);
    } else if (entry.operation === "remove") {
      await moveToTrash(context, entry.name);
      delete state.skills[entry.name];
      await writeLibraryState(context, state);
    } else if (entry.operation === "forget") {
      delete state.skills[entry.name];
      await writeLibraryState(context, state);
    } else {
      done.push({ ...entry, done: false });
      continue;
    }
    done.push({ ...entry, done: true });
  }
  return done;
}

/**
 * Updates a role directory from a library source, comparing per skill three digests — the one
 * recorded at install, the one on disk now, the one upstream (see `decideLibraryUpdate`):
 * unchanged → update; locally modified → conflict, skipped unless `force`; removed upstream →
 * kept unless `prune`; new upstream → added. A dry run by default: the plan is returned and
 * nothing is written. With `apply`, the plan is made again under the role's cross-process lock
 * and carried out skill by skill, each with the atomic swap of `importSkill`; if the layer
 * changed since the plan (another process imported or updated meanwhile) nothing is applied and
 * the result is `conflict`. Visibility (`explicit-only`) is kept: it lives beside the skills.
 * The state document (`<layer>/<role>/.keel-library.json`) is written after each skill.
 */
export function updateLibrary(options: UpdateLibraryOptions): ResultAsync<LibraryUpdateReport, KeelError> {
  const checked = validate(Schema, options, "library options");
  if (checked.isErr()) return errAsync(checked.error);
  const context = managedContext(options);
  const flags = { force: options.force ?? false, prune: options.prune ?? false };
  const run = async (): Promise<LibraryUpdateReport> => {
    let library: string;
    try {
      library = await context.io.realpath(options.source);
    } catch (error) {
      if (errnoOf(error) === "ENOENT") throw new KeelError("not_found", `library source ${options.source} does not exist`, { details: { source: options.source } });
      throw error;
    }
    const upstream = await readUpstream(context, library);
    const planned = await plan(context, library, upstream, flags);
    if (!options.apply) return { library, applied: false, entries: planned.map((entry) => ({ ...entry, done: false })) };
    return withRoleLock(context, `updating from ${library}`, async () => {
      const again = await plan(context, library, upstream, flags);
      if (again.length !== planned.length || again.some((entry, index) => !sameEntry(entry, planned[index]))) {
        throw new KeelError("conflict", `role "${options.role}" of ${context.layerDirectory} changed while the update was planned (another import or update ran): nothing was applied; plan again`, {
          details: { changed: again.filter((entry, index) => !sameEntry(entry, planned[index])).map((entry) => entry.name) },
          retryable: true,
        });
      }
      return { library, applied: true, entries: await applyPlan(context, library, upstream, again, options) };
    });
  };
  return ResultAsync.fromThrowable(run, (error) => (KeelError.is(error) ? error : toKeelError(error, "io_failed", `updating from library ${options.source} failed`)))();
}

/** Installs a library into a role directory: {@link updateLibrary} (a first install is an update whose entries are all `add`). */
export function installLibrary(options: UpdateLibraryOptions): ResultAsync<LibraryUpdateReport, KeelError> {
  return updateLibrary(options);
}

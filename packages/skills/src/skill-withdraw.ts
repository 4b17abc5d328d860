import { join } from "node:path";
import { KeelError, newId, toKeelError, validate } from "@keel/core";
import { errAsync, ResultAsync } from "neverthrow";
import { z } from "zod";
import { writeDocument } from "./internal/document-write.js";
import { readLibraryState, writeLibraryState } from "./internal/library-state.js";
import { withRoleLock } from "./internal/role-lock.js";
import { makeDirectories, removeCreated } from "./internal/skill-swap.js";
import { inspectInstalled, isInstalled } from "./internal/skill-version.js";
import { errnoOf } from "./skill-io.js";
import { type ManagedContext, managedContext, type ManagedLayerOptions, managedOptionsSchema } from "./skill-manage-options.js";
import { hiddenNames, writeHiddenNames } from "./skill-visibility.js";

/** Options of {@link withdrawSkill}. */
export interface WithdrawSkillOptions extends ManagedLayerOptions {
  /** The skill's directory name in the role directory. */
  name: string;
  /** Check only; move nothing (`trash` is then the trash directory it would go to). */
  dryRun?: boolean;
}

/** What {@link withdrawSkill} did. */
export interface WithdrawSkillReport {
  name: string;
  /** False for a dry run. */
  applied: boolean;
  /** Where the skill now is: `<layer>/.keel/trash/<role>/<name>.<id>` (its metadata with it). */
  trash: string;
}

/** Options of {@link purgeWithdrawnSkills}. */
export interface PurgeWithdrawnOptions extends ManagedLayerOptions {
  /** Only what was withdrawn at least this long ago (default 0: everything). */
  olderThanMs?: number;
}

/** The file written beside a withdrawn skill in the trash. */
const WITHDRAWAL_FILE = ".keel-withdrawn.json";

/** The trash directory of a role: `<layer>/.keel/trash/<role>`. */
export function trashDirectory(context: ManagedContext): string {
  return join(context.layerDirectory, ".keel", "trash", context.role);
}

/**
 * Moves a skill into the trash (the caller holds the role lock); its path there. A managed skill
 * first disappears from the role directory in one rename of its link (to
 * `.keel-withdrawing.<name>.<id>`), then its version directory moves to the trash and the link is
 * removed; an interrupted withdrawal is undone by the next sweep. A plain directory (the layout
 * before versions) is renamed into the trash.
 */
export async function moveToTrash(context: ManagedContext, name: string): Promise<string> {
  const { io, roleDirectory } = context;
  const installed = await inspectInstalled(io, roleDirectory, name);
  const trash = trashDirectory(context);
  const created = await makeDirectories(io, trash);
  const id = newId();
  const target = join(trash, `${name}.${id}`);
  const source = join(roleDirectory, name);
  try {
    if (installed.kind === "managed") {
      const withdrawing = join(roleDirectory, `.keel-withdrawing.${name}.${id}`);
      await io.rename(source, withdrawing);
      try {
        await io.rename(join(roleDirectory, installed.version), target);
      } catch (error) {
        // Put the link back; if even that fails, the next sweep renames it back.
        await io.rename(withdrawing, source).catch(() => undefined);
        throw error;
      }
      await io.unlink(withdrawing).catch(() => undefined);
    } else {
      await io.rename(source, target);
    }
  } catch (error) {
    await removeCreated(io, created);
    throw error;
  }
  await io.syncDirectory(roleDirectory);
  await io.syncDirectory(trash);
  await writeDocument(io, join(target, WITHDRAWAL_FILE), { version: 1, name, role: context.role, withdrawnAt: context.clock.now() });
  return target;
}

const WithdrawSchema = managedOptionsSchema({ name: z.string().min(1).max(128), dryRun: z.boolean().optional() });
const PurgeSchema = managedOptionsSchema({ olderThanMs: z.number().int().min(0).optional() });

/**
 * Withdraws a skill: moves `<layer>/<role>/<name>` whole, with its metadata, into the layer's
 * trash (`<layer>/.keel/trash/<role>/`) until {@link purgeWithdrawnSkills}. The next `resolve`
 * no longer offers it, and a library update does not bring it back (it is recorded as
 * withdrawn). What withdrawal cannot do: text of the skill already sent to a provider, or copied
 * into a running agent's context or a staged directory, is not recalled.
 * `not_found` when there is no such skill.
 */
export function withdrawSkill(options: WithdrawSkillOptions): ResultAsync<WithdrawSkillReport, KeelError> {
  const checked = validate(WithdrawSchema, options, "withdraw options");
  if (checked.isErr()) return errAsync(checked.error);
  const context = managedContext(options);
  const run = () =>
    withRoleLock(context, `withdrawing ${options.name}`, async () => {
      if (!(await isInstalled(context.io, context.roleDirectory, options.name))) {
        throw new KeelError("not_found", `role "${options.role}" of ${context.layerDirectory} has no skill "${options.name}" to withdraw`, { details: { name: options.name } });
      }
      if (options.dryRun) return { name: options.name, applied: false, trash: trashDirectory(context) };
      const state = await readLibraryState(context);
      const hidden = await hiddenNames(context);
      const trash = await moveToTrash(context, options.name);
      const recorded = state.skills[options.name];
      if (recorded) {
        state.skills[options.name] = { ...recorded, withdrawn: true };
        await writeLibraryState(context, state);
      }
      if (hidden.delete(options.name)) await writeHiddenNames(context, hidden);
      return { name: options.name, applied: true, trash };
    });
  return ResultAsync.fromThrowable(run, (error) => (KeelError.is(error) ? error : toKeelError(error, "io_failed", "withdrawing the skill failed")))();
}

/** Deletes withdrawn skills of a role from the trash for good; the paths removed. */
export function purgeWithdrawnSkills(options: PurgeWithdrawnOptions): ResultAsync<string[], KeelError> {
  const checked = validate(PurgeSchema, options, "purge options");
  if (checked.isErr()) return errAsync(checked.error);
  const context = managedContext(options);
  const run = () =>
    withRoleLock(context, "purging withdrawn skills", async () => {
      const trash = trashDirectory(context);
      let names: string[];
      try {
        names = await context.io.readdir(trash);
      } catch (error) {
        if (errnoOf(error) === "ENOENT") return [];
        throw error;
      }
      const removed: string[] = [];
      const cutoff = context.clock.now() - (options.olderThanMs ?? 0);
      for (const name of names.sort()) {
        const path = join(trash, name);
        const record = await context.io.readFile(join(path, WITHDRAWAL_FILE)).then(
          (bytes) => JSON.parse(bytes.toString("utf8")) as { withdrawnAt?: number },
          () => ({}) as { withdrawnAt?: number },
        );
        if ((record.withdrawnAt ?? 0) > cutoff) continue;
        await context.io.rm(path);
        removed.push(path);
      }
      return removed;
    });
  return ResultAsync.fromThrowable(run, (error) => (KeelError.is(error) ? error : toKeelError(error, "io_failed", "purging withdrawn skills failed")))();
}

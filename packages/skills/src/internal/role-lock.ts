import { KeelError, toKeelError } from "@keel/core";
import type { ManagedContext } from "../skill-manage-options.js";
import { acquireLayerLock } from "./layer-lock.js";
import { makeDirectories, removeCreated } from "./skill-swap.js";
import { sweepRoleDirectory } from "./skill-version.js";

/**
 * Runs `work` holding the cross-process lock of the context's role directory. The layer
 * directory is created when missing, and removed again (where still empty) when `work` fails,
 * so that a failed operation leaves no trace. Before `work`, the role directory is swept
 * (`sweepRoleDirectory`: an interrupted operation's pieces finished or undone, versions past
 * their grace removed); `work` gets the paths the sweep could not remove. Errors become
 * `KeelError`s (`io_failed` for unexpected I/O errors).
 */
export async function withRoleLock<T>(context: ManagedContext, what: string, work: (leftovers: string[]) => Promise<T>): Promise<T> {
  const created = await makeDirectories(context.io, context.layerDirectory);
  let release: (() => Promise<void>) | undefined;
  try {
    release = await acquireLayerLock(context.io, context.layerDirectory, context.role, context.lock);
    const leftovers = await sweepRoleDirectory(context.io, context.roleDirectory, { now: context.clock.now(), graceMs: context.versionGraceMs });
    return await work(leftovers);
  } catch (error) {
    if (release) {
      await release();
      release = undefined;
    }
    await removeCreated(context.io, created);
    throw KeelError.is(error) ? error : toKeelError(error, "io_failed", `${what} failed`);
  } finally {
    await release?.();
  }
}

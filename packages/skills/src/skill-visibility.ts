import { join } from "node:path";
import { KeelError, toKeelError, validate } from "@keel/core";
import { errAsync, ResultAsync } from "neverthrow";
import { z } from "zod";
import { readDocument, writeDocument } from "./internal/document-write.js";
import { withRoleLock } from "./internal/role-lock.js";
import { isInstalled } from "./internal/skill-version.js";
import { VISIBILITY_FILE, VisibilityDocumentSchema } from "./internal/visibility-file.js";
import { type ManagedContext, managedContext, type ManagedLayerOptions, managedOptionsSchema } from "./skill-manage-options.js";

/**
 * Whether discovery offers a skill: `automatic` (default: in the catalogue) or `explicit-only`
 * (left out of `resolve`'s catalogue, found by `library.get(name)`, reported in `view.hidden`).
 */
export type SkillVisibility = "automatic" | "explicit-only";

/** Options of {@link setSkillVisibility}. */
export interface SetSkillVisibilityOptions extends ManagedLayerOptions {
  /** The skill's directory name in the role directory. */
  name: string;
  /** The visibility to set. */
  visibility: SkillVisibility;
}

/** What {@link setSkillVisibility} did. */
export interface SkillVisibilityReport {
  name: string;
  visibility: SkillVisibility;
  /** False when the skill already had that visibility. */
  changed: boolean;
}

const Schema = managedOptionsSchema({ name: z.string().min(1).max(128), visibility: z.enum(["automatic", "explicit-only"]) });
const GetSchema = managedOptionsSchema({ name: z.string().min(1).max(128) });

/** The `explicit-only` names of the context's role directory. */
export async function hiddenNames(context: ManagedContext): Promise<Set<string>> {
  const path = join(context.roleDirectory, VISIBILITY_FILE);
  const data = await readDocument(context.io, path).catch((error: unknown) => {
    throw error instanceof SyntaxError ? new KeelError("corrupt", `${path} is not valid JSON: fix or remove it`, { details: { location: path } }) : error;
  });
  if (data === undefined) return new Set();
  const parsed = VisibilityDocumentSchema.safeParse(data);
  if (!parsed.success) throw new KeelError("corrupt", `${path} does not match its schema: fix or remove it`, { details: { location: path } });
  return new Set(parsed.data.explicitOnly);
}

/** Writes the context's `explicit-only` names (the caller holds the role lock). */
export async function writeHiddenNames(context: ManagedContext, names: ReadonlySet<string>): Promise<void> {
  const path = join(context.roleDirectory, VISIBILITY_FILE);
  await writeDocument(context.io, path, names.size === 0 ? null : { version: 1, explicitOnly: [...names].sort() });
}

/**
 * Sets a skill's visibility: `explicit-only` hides it from automatic discovery without deleting
 * it; `automatic` offers it again. Kept in the role directory (`.keel-visibility.json`), apart
 * from the skill, so it survives imports and library updates of the skill. `not_found` when
 * the role directory has no such skill; `unavailable` while another operation holds the role.
 */
export function setSkillVisibility(options: SetSkillVisibilityOptions): ResultAsync<SkillVisibilityReport, KeelError> {
  const checked = validate(Schema, options, "visibility options");
  if (checked.isErr()) return errAsync(checked.error);
  const context = managedContext(options);
  const run = () =>
    withRoleLock(context, `setting the visibility of ${options.name}`, async () => {
      if (!(await isInstalled(context.io, context.roleDirectory, options.name))) {
        throw new KeelError("not_found", `role "${options.role}" of ${context.layerDirectory} has no skill directory "${options.name}"`, { details: { name: options.name } });
      }
      const names = await hiddenNames(context);
      const hide = options.visibility === "explicit-only";
      const changed = names.has(options.name) !== hide;
      if (changed) {
        if (hide) names.add(options.name);
        else names.delete(options.name);
        await writeHiddenNames(context, names);
      }
      return { name: options.name, visibility: options.visibility, changed };
    });
  return ResultAsync.fromThrowable(run, (error) => (KeelError.is(error) ? error : toKeelError(error, "io_failed", "setting skill visibility failed")))();
}

/**
 * Reads a skill's visibility in its role directory: `explicit-only` when
 * `.keel-visibility.json` lists it, else `automatic`. Takes no lock and writes nothing.
 * `not_found` when the role directory has no such skill; `corrupt` when the visibility file is
 * not valid JSON or breaks its schema (discovery then hides nothing).
 *
 * @example
 * ```ts
 * const shown = await getSkillVisibility({ layer: ".keel/skills", role: "writer", name: "internal-comms" });
 * if (shown.isOk()) console.log(shown.value.visibility); // "explicit-only" or "automatic"
 * ```
 */
export function getSkillVisibility(options: Omit<SetSkillVisibilityOptions, "visibility">): ResultAsync<Pick<SkillVisibilityReport, "name" | "visibility">, KeelError> {
  const checked = validate(GetSchema, options, "visibility options");
  if (checked.isErr()) return errAsync(checked.error);
  const context = managedContext(options);
  const run = async (): Promise<Pick<SkillVisibilityReport, "name" | "visibility">> => {
    if (!(await isInstalled(context.io, context.roleDirectory, options.name))) {
      throw new KeelError("not_found", `role "${options.role}" of ${context.layerDirectory} has no skill directory "${options.name}"`, { details: { name: options.name } });
    }
    const names = await hiddenNames(context);
    return { name: options.name, visibility: names.has(options.name) ? "explicit-only" : "automatic" };
  };
  return ResultAsync.fromThrowable(run, (error) => (KeelError.is(error) ? error : toKeelError(error, "io_failed", "reading skill visibility failed")))();
}

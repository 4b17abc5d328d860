import { join } from "node:path";
import { canonicalJson, digest, KeelError, toKeelError, validate } from "@keel/core";
import { errAsync, ResultAsync } from "neverthrow";
import { z } from "zod";
import { withRoleLock } from "./internal/role-lock.js";
import { prepareSkill, type PreparedSkill } from "./internal/skill-source.js";
import { writeSkill } from "./internal/skill-swap.js";
import { inspectInstalled } from "./internal/skill-version.js";
import { nodeSkillIo, type SkillIo } from "./skill-io.js";
import {
  decideAdmission,
  ManualAdmissionSchema,
  VerificationSummarySchema,
  type ManualAdmission,
  type VerificationSummary,
} from "./skill-admission.js";
import { managedContext, managedOptionsSchema, type ManagedContext, type ManagedLayerOptions } from "./skill-manage-options.js";
import { SkillMetadataSchema, type SkillMetadata, type SkillRouting } from "./skill-metadata.js";

/** Options of {@link importSkill}. */
export interface ImportSkillOptions extends ManagedLayerOptions {
  /** The skill directory to import (SKILL.md plus its `scripts/`, `references/`, `assets/`). */
  from: string;
  /**
   * Replace a skill of the same name (default false: `conflict`). The replacement is one atomic
   * rename of the skill's link; the previous version stays in place for `versionGraceMs`.
   */
  overwrite?: boolean;
  /**
   * Required: the routes assigned to the skill (`{ routes: ["engineer"] }`, at least one), or
   * `'unclassified'`, the explicit manual path.
   */
  routing: { routes: string[] } | "unclassified";
  /** The library source the skill belongs to and its revision, for the metadata. */
  source?: { library?: string; revision?: string };
  /**
   * The caller's verification summary (see {@link VerificationSummary}; from a file:
   * `readVerificationSummary`). The metadata keeps its digest and who verified and when; a
   * summary naming another `skillDigest` than the skill's is refused.
   */
  verification?: VerificationSummary;
  /** An explicit manual decision that admits the skill whatever the verification says. */
  manualDecision?: ManualAdmission;
  /** Validate and check the target only; write nothing (the report says what would happen). */
  dryRun?: boolean;
}

/** What {@link importSkill} did. */
export interface ImportSkillReport {
  /** The skill name (its directory name in the layer). */
  name: string;
  /** The skill's path in the layer, `<layer>/<role>/<name>` (a managed link to its version directory). */
  target: string;
  /** True when a previous version was replaced (with `dryRun`: would be). */
  replaced: boolean;
  /** False for a dry run: nothing was written. */
  applied: boolean;
  /** The metadata written beside the skill. */
  metadata: SkillMetadata;
  /** Pieces of earlier interrupted operations that could not be cleaned (tried again next time); safe to delete. */
  leftovers: string[];
}

const ImportOptionsSchema = managedOptionsSchema({
    from: z.string().min(1).max(4096),
    overwrite: z.boolean().optional(),
    routing: z.union([z.literal("unclassified"), z.object({ routes: z.array(z.string()).min(1).max(64) }).strict()]),
    source: z.object({ library: z.string().min(1).max(4096).optional(), revision: z.string().min(1).max(256).optional() }).strict().optional(),
    verification: VerificationSummarySchema.optional(),
    manualDecision: ManualAdmissionSchema.optional(),
    dryRun: z.boolean().optional(),
  });

/** Builds the metadata of a prepared skill. Throws `invalid_input` for routes that are not safe names. */
export function metadataFor(
  prepared: Pick<PreparedSkill, "name" | "source" | "digest">,
  options: Pick<ImportSkillOptions, "routing" | "source" | "verification" | "manualDecision">,
  decision: SkillMetadata["admission"]["decision"],
  importedAt: number,
): SkillMetadata {
  const routing: SkillRouting = options.routing === "unclassified" ? { status: "unclassified", routes: [] } : { status: "classified", routes: [...options.routing.routes] };
  const metadata: SkillMetadata = {
    version: 1,
    name: prepared.name,
    source: { path: prepared.source, ...(options.source?.library ? { library: options.source.library } : {}), ...(options.source?.revision ? { revision: options.source.revision } : {}) },
    digest: prepared.digest,
    routing,
    admission: {
      summaryDigest: options.verification ? digest(options.verification as never) : null,
      decision,
      ...(decision === "manual" && options.manualDecision ? { by: options.manualDecision.by } : {}),
      ...(options.verification?.verifiedBy ? { verifiedBy: options.verification.verifiedBy } : {}),
      ...(options.verification?.verifiedAt ? { verifiedAt: options.verification.verifiedAt } : {}),
    },
    importedAt,
  };
  const checked = validate(SkillMetadataSchema, metadata, "skill metadata");
  if (checked.isErr()) throw checked.error;
  return metadata;
}

/** The metadata document's bytes: canonical JSON and a newline. */
export function metadataBytes(metadata: SkillMetadata): Uint8Array {
  return Buffer.from(`${canonicalJson(metadata as never)}\n`, "utf8");
}

/** Imports into an already locked context (shared with library install and update). */
export async function importLocked(
  context: ManagedContext,
  prepared: PreparedSkill,
  metadata: SkillMetadata,
  options: { overwrite: boolean; expect?: { absent: true } | { digest: string }; leftovers?: string[] },
): Promise<ImportSkillReport> {
  const written = await writeSkill({
    io: context.io,
    roleDirectory: context.roleDirectory,
    name: prepared.name,
    directories: prepared.directories,
    files: prepared.files,
    metadata: metadataBytes(metadata),
    overwrite: options.overwrite,
    expect: options.expect,
    limits: context.limits,
    installedAt: context.clock.now(),
  });
  return { name: prepared.name, target: written.target, replaced: written.replaced, applied: true, metadata, leftovers: options.leftovers ?? [] };
}

/**
 * Imports a skill directory into `<layer>/<role>/<name>/` (`name` from its frontmatter) as one
 * atomic, validated, reversible operation:
 *
 * 1. validates the whole source first (strict frontmatter, regular files only, portable names,
 *    limits), that a verification summary naming a `skillDigest` names this content's, and the
 *    admission gate (`decideAdmission`): `invalid_input` before anything is written;
 * 2. under the role directory's cross-process lock (`unavailable` past `lockWaitMs`), stages the
 *    copy and its `.keel-skill.json` as a new version directory `<role>/.<name>@<installedAt>-<tag>`,
 *    every file and directory fsynced;
 * 3. swaps it in by renaming a new link over `<role>/<name>`: one atomic step, so a reader finds
 *    the previous version or the new one, never nothing. An existing skill is replaced only with
 *    `overwrite` (else `conflict`); its version stays in place for `versionGraceMs`.
 *
 * On any failure the layer is restored exactly as it was; if the restore itself fails, what was
 * kept is named in the error (`io_failed`, `details.restored: false`).
 *
 * @example
 * ```ts
 * const report = await importSkill({ from: "./vendor/pdf", layer: ".keel/skills", role: "engineer", routing: { routes: ["engineer"] } });
 * if (report.isOk()) console.log(report.value.target, report.value.metadata.digest);
 * ```
 */
export function importSkill(options: ImportSkillOptions): ResultAsync<ImportSkillReport, KeelError> {
  const checked = validate(ImportOptionsSchema, options, "import options");
  if (checked.isErr()) return errAsync(checked.error);
  const context = managedContext(options);
  const run = async (): Promise<ImportSkillReport> => {
    const prepared = await prepareSkill(context.io, options.from, context.limits);
    const covered = options.verification?.skillDigest;
    if (covered !== undefined && covered !== prepared.digest) {
      throw new KeelError(
        "invalid_input",
        `the verification summary covers ${covered}, but skill "${prepared.name}" at ${options.from} has digest ${prepared.digest}: verify this content, or import the content that was verified`,
        { details: { reason: "verification_digest_mismatch", verified: covered, digest: prepared.digest }, retryable: false },
      );
    }
    const verdict = decideAdmission(options.verification, options.manualDecision);
    if (!verdict.admitted) {
      throw new KeelError("invalid_input", `skill "${prepared.name}" is not admitted: ${verdict.refusals.map((refusal) => refusal.message).join("; ")}; resolve them or record a manual decision`, {
        details: { reason: "admission_refused", refusals: verdict.refusals.map((refusal) => ({ ...refusal })) },
        retryable: false,
      });
    }
    const metadata = metadataFor(prepared, options, verdict.decision, context.clock.now());
    if (options.dryRun) return dryRunReport(context, prepared.name, metadata, options.overwrite ?? false);
    return withRoleLock(context, `importing ${options.from}`, (leftovers) => importLocked(context, prepared, metadata, { overwrite: options.overwrite ?? false, leftovers }));
  };
  return ResultAsync.fromThrowable(run, (error) => (KeelError.is(error) ? error : toKeelError(error, "io_failed", `importing skill ${options.from} failed`)))();
}

async function dryRunReport(context: ManagedContext, name: string, metadata: SkillMetadata, overwrite: boolean): Promise<ImportSkillReport> {
  const target = join(context.roleDirectory, name);
  const installed = await inspectInstalled(context.io, context.roleDirectory, name);
  if (installed.kind === "other") {
    throw new KeelError("conflict", `${target} exists and is neither a skill directory nor a managed skill's link (a file or another link): remove it first`, { details: { target }, retryable: false });
  }
  const present = installed.kind !== "absent";
  if (present && !overwrite) {
    throw new KeelError("conflict", `skill "${name}" already exists at ${target}: pass overwrite to replace it`, { details: { target }, retryable: false });
  }
  return { name, target, replaced: present, applied: false, metadata, leftovers: [] };
}

/** Reads the metadata beside a managed skill; `not_found` when there is none, `corrupt` when it does not match its schema. */
export function readSkillMetadata(skillDirectory: string, io: SkillIo = nodeSkillIo): ResultAsync<SkillMetadata, KeelError> {
  const checked = validate(z.string().min(1).max(4096), skillDirectory, "skill directory");
  if (checked.isErr()) return errAsync(checked.error);
  const path = join(skillDirectory, ".keel-skill.json");
  const run = async (): Promise<SkillMetadata> => {
    let text: string;
    try {
      text = (await io.readFile(path)).toString("utf8");
    } catch (error) {
      if ((error as { code?: string }).code === "ENOENT") throw new KeelError("not_found", `${skillDirectory} has no ${".keel-skill.json"}: it is not a managed skill`, { details: { path } });
      throw error;
    }
    let data: unknown;
    try {
      data = JSON.parse(text);
    } catch {
      throw new KeelError("corrupt", `${path} is not valid JSON`, { details: { location: path } });
    }
    const parsed = SkillMetadataSchema.safeParse(data);
    if (!parsed.success) throw new KeelError("corrupt", `${path} does not match the skill metadata schema: ${parsed.error.issues[0]?.message ?? ""}`, { details: { location: path } });
    return parsed.data;
  };
  return ResultAsync.fromThrowable(run, (error) => (KeelError.is(error) ? error : toKeelError(error, "io_failed", `reading ${path} failed`)))();
}

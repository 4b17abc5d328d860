import { SafeNameSchema } from "@keel/core";
import { z } from "zod";

/** Where a managed skill came from. */
export interface SkillSource {
  /** Real path of the directory it was copied from. */
  path: string;
  /** The library source (a checkout of a skills repository) it belongs to, if installed from one. */
  library?: string;
  /** The revision of that source (a commit id or a tag), when the caller knows it. */
  revision?: string;
}

/** Routing of a managed skill: `classified` with the routes assigned, or `unclassified` (the explicit manual path). */
export type SkillRouting = { status: "classified"; routes: string[] } | { status: "unclassified"; routes: [] };

/**
 * The runtime metadata beside a managed skill (`<skill>/.keel-skill.json`). Minimal on purpose:
 * no rationale or evidence (those belong to the caller's own records).
 */
export interface SkillMetadata {
  /** Always 1. */
  version: 1;
  /** The skill name (its directory name). */
  name: string;
  /** The source identity. */
  source: SkillSource;
  /** Content digest of the skill tree (`sha256:<hex>`, paths + bytes, the metadata file excluded). */
  digest: string;
  /** Routing status and assigned routes. */
  routing: SkillRouting;
  /**
   * The admission: the verification summary's digest (or `null`), the decision, who made a
   * manual one (`by`), and who verified and when (`verifiedBy`, `verifiedAt`) when the summary
   * said so. A `verified` decision covers exactly `digest`: a skill whose tree no longer has that
   * digest is not verified any more (see `requireVerified` of `createSkillLibrary`).
   */
  admission: { summaryDigest: string | null; decision: "verified" | "manual" | "unverified"; by?: string; verifiedBy?: string; verifiedAt?: string };
  /** Epoch ms of the import. */
  importedAt: number;
}

const DigestSchema = z.string().regex(/^sha256:[0-9a-f]{64}$/);

/** zod schema of {@link SkillRouting}. */
export const SkillRoutingSchema: z.ZodType<SkillRouting> = z.union([
  z.object({ status: z.literal("classified"), routes: z.array(SafeNameSchema).min(1).max(64) }).strict(),
  z.object({ status: z.literal("unclassified"), routes: z.tuple([]) }).strict(),
]) as z.ZodType<SkillRouting>;

/** zod schema of {@link SkillSource}. */
export const SkillSourceSchema: z.ZodType<SkillSource> = z
  .object({ path: z.string().min(1).max(4096), library: z.string().min(1).max(4096).optional(), revision: z.string().min(1).max(256).optional() })
  .strict() as z.ZodType<SkillSource>;

/** zod schema of {@link SkillMetadata} (strict: unknown fields are refused). */
export const SkillMetadataSchema: z.ZodType<SkillMetadata> = z
  .object({
    version: z.literal(1),
    name: z.string().min(1).max(64),
    source: SkillSourceSchema,
    digest: DigestSchema,
    routing: SkillRoutingSchema,
    admission: z
      .object({
        summaryDigest: DigestSchema.nullable(),
        decision: z.enum(["verified", "manual", "unverified"]),
        by: z.string().min(1).max(256).optional(),
        verifiedBy: z.string().min(1).max(256).optional(),
        verifiedAt: z.iso.datetime({ offset: true }).optional(),
      })
      .strict(),
    importedAt: z.number().int().nonnegative(),
  })
  .strict() as z.ZodType<SkillMetadata>;

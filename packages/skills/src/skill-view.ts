import { z } from "zod";

/**
 * How strictly SKILL.md files are judged.
 *
 * - `lenient` (default): loads with a warning where clients do (name/directory mismatch, bad
 *   name, unknown fields, over-long description, a malformed optional field); skips only what
 *   cannot be used (no description, unparseable YAML, no frontmatter).
 * - `strict`: every Agent Skills spec violation is an error for that skill, which is skipped.
 */
export type SkillDiscoveryMode = "strict" | "lenient";

/** Whether a skill or root belongs to the role of the view (`own`) or to another role (`reference`). */
export type SkillOwnership = "own" | "reference";

/** One ordered skill root of a role's view: a role directory of one layer. */
export interface SkillRoot {
  /** Real (canonical) path of the role directory. */
  path: string;
  /** The layer the directory is in. */
  layer: string;
  /** The role whose directory this is. */
  role: string;
  /** `own` for the view's role, `reference` for every other role. */
  ownership: SkillOwnership;
}

/** A skill found by discovery, from its frontmatter only. */
export interface SkillEntry {
  /** The frontmatter `name` (or, in lenient mode when it is missing, the directory name). */
  name: string;
  /** The frontmatter `description`, with runs of whitespace collapsed to one space. */
  description: string;
  /** The frontmatter `license`, or `null`. */
  license: string | null;
  /** The frontmatter `compatibility` (environment requirements), or `null`. */
  compatibility: string | null;
  /** The frontmatter `metadata` string map (numbers and booleans coerced to strings). */
  metadata: Readonly<Record<string, string>>;
  /**
   * The frontmatter `allowed-tools`, split on spaces and commas outside parentheses
   * (`Bash(git status:*) Read` → `["Bash(git status:*)", "Read"]`), or `null` when absent.
   */
  allowedTools: readonly string[] | null;
  /**
   * True when the (non-spec, lenient-only) field `disable-model-invocation: true` is set: such a
   * skill is left out of the rendered catalogue, as clients do.
   */
  disableModelInvocation: boolean;
  /**
   * Real (canonical) path of the SKILL.md file. For a managed skill (imported or installed from
   * a library) the path through its link, `<real role directory>/<name>/SKILL.md`, which stays
   * valid when the skill is replaced (the link then leads to the new version).
   */
  path: string;
  /** Real path of the skill directory (the parent of `path`; a managed skill's link); resources resolve against it. */
  directory: string;
  /** The skill directory relative to its root, `/`-separated (e.g. `pdf` or `tools/pdf`). */
  relativePath: string;
  /** Real path of the root the skill was found in. */
  root: string;
  /** The layer of that root. */
  layer: string;
  /** The role whose directory holds the skill. */
  role: string;
  /** `own` when that role is the view's role, else `reference`. */
  ownership: SkillOwnership;
  /** Size of the SKILL.md file in bytes when it was discovered. */
  bytes: number;
}

/** Where a skill sits (used in {@link ShadowedSkill}). */
export interface SkillLocation {
  /** Real path of the SKILL.md file. */
  path: string;
  /** The layer of its root. */
  layer: string;
  /** The role whose directory holds it. */
  role: string;
  /** Its ownership for the view's role. */
  ownership: SkillOwnership;
}

/** A skill that lost a name collision to a skill of an earlier root (or earlier in the same root). */
export interface ShadowedSkill {
  /** The shared name. */
  name: string;
  /** The skill that is used. */
  winner: SkillLocation;
  /** The skill that is hidden. */
  loser: SkillLocation;
}

/**
 * Stable codes of skill diagnostics.
 *
 * File content: `no_frontmatter`, `unterminated_frontmatter`, `frontmatter_too_large`,
 * `invalid_yaml` (unparseable, or not a mapping), `missing_description`, `invalid_description`,
 * `description_too_long`, `missing_name`, `invalid_name`, `name_mismatch`, `invalid_field`
 * (license, compatibility, metadata or allowed-tools of the wrong type or length),
 * `unknown_field`, `file_too_large`, `unreadable`.
 * Tree: `symlink_escape` (a link leaving its layer root), `symlink_loop`, `broken_symlink`,
 * `depth_exceeded`, `skill_limit`, `directory_limit`, `role_limit`, `duplicate_path` (the same real
 * file reached twice; the later one is dropped), `invalid_role_name`, `not_a_directory`.
 * Verification (only with `requireVerified`): `unverified` (not a managed skill admitted as
 * `verified`), `verification_stale` (its tree no longer has the verified digest).
 */
export type SkillDiagnosticCode = (typeof SKILL_DIAGNOSTIC_CODES)[number];

/** Every {@link SkillDiagnosticCode}, in the order documented there. */
export const SKILL_DIAGNOSTIC_CODES = [
  "no_frontmatter",
  "unterminated_frontmatter",
  "frontmatter_too_large",
  "invalid_yaml",
  "missing_description",
  "invalid_description",
  "description_too_long",
  "missing_name",
  "invalid_name",
  "name_mismatch",
  "invalid_field",
  "unknown_field",
  "file_too_large",
  "unreadable",
  "symlink_escape",
  "symlink_loop",
  "broken_symlink",
  "depth_exceeded",
  "skill_limit",
  "directory_limit",
  "role_limit",
  "duplicate_path",
  "invalid_role_name",
  "not_a_directory",
  "unverified",
  "verification_stale",
] as const;

/**
 * How serious a diagnostic is: `error` (the skill or directory is not used), `warning` (it is
 * used, but breaks a rule), `info` (nothing wrong, worth knowing).
 */
export type SkillDiagnosticSeverity = "error" | "warning" | "info";

/** A problem found by discovery. Never thrown: discovery goes on with the other skills. */
export interface SkillDiagnostic {
  /** How serious it is. */
  severity: SkillDiagnosticSeverity;
  /** The stable code to switch on. */
  code: SkillDiagnosticCode;
  /** What was wrong and what to do about it. */
  message: string;
  /** The file or directory concerned (canonical where it exists inside the layer). */
  path: string;
  /** Layer of the path, or `null`. */
  layer: string | null;
  /** Role directory of the path, or `null` (a layer-level problem). */
  role: string | null;
  /** For symlinks: where the link points. */
  target?: string;
}

/** Counters of one resolve: how much was read, how much came from the cache. */
export interface SkillScanStats {
  /** SKILL.md files considered (read or taken from the cache). */
  skillFiles: number;
  /** Of those, how many were unchanged on disk and taken from the cache without reading. */
  cacheHits: number;
  /** Directories listed. */
  directories: number;
}

/**
 * A role's resolved skills: `library.resolve(role)`. Plain JSON, deterministic, and frozen (an
 * immutable snapshot: resolves that find nothing changed share its parts).
 */
export interface SkillView {
  /** The role the view is for. */
  readonly role: string;
  /** The discovery mode used. */
  readonly mode: SkillDiscoveryMode;
  /** Ordered roots: per layer, the role's own directory, then the other roles' directories. */
  readonly roots: readonly SkillRoot[];
  /** Winning skills found in the role's own directories, in precedence order. */
  readonly own: readonly SkillEntry[];
  /** Winning skills found in other roles' directories, in precedence order. */
  readonly reference: readonly SkillEntry[];
  /** Every winning skill in precedence (root) order: names are unique. `explicit-only` skills are not in it. */
  readonly skills: readonly SkillEntry[];
  /**
   * Winning skills hidden from automatic discovery (`visibility: 'explicit-only'`): left out of
   * `skills`, `own`, `reference` and the contract, found by `library.get(name)`.
   */
  readonly hidden: readonly SkillEntry[];
  /** Skills hidden by an earlier skill of the same name. */
  readonly shadowed: readonly ShadowedSkill[];
  /** Everything that was wrong or skipped, in root order then path order. */
  readonly diagnostics: readonly SkillDiagnostic[];
  /** Scan counters (not part of the contract text; useful to check caching). */
  readonly stats: Readonly<SkillScanStats>;
}

const OwnershipSchema = z.enum(["own", "reference"]);

/** zod schema of a {@link SkillRoot}. */
export const SkillRootSchema: z.ZodType<SkillRoot> = z.object({
  path: z.string().min(1),
  layer: z.string().min(1),
  role: z.string().min(1),
  ownership: OwnershipSchema,
});

/** zod schema of a {@link SkillEntry}. */
export const SkillEntrySchema: z.ZodType<SkillEntry> = z.object({
  name: z.string().min(1),
  description: z.string(),
  license: z.string().nullable(),
  compatibility: z.string().nullable(),
  metadata: z.record(z.string(), z.string()),
  allowedTools: z.array(z.string()).nullable(),
  disableModelInvocation: z.boolean(),
  path: z.string().min(1),
  directory: z.string().min(1),
  relativePath: z.string(),
  root: z.string().min(1),
  layer: z.string().min(1),
  role: z.string().min(1),
  ownership: OwnershipSchema,
  bytes: z.number().int().nonnegative(),
});

const LocationSchema = z.object({
  path: z.string().min(1),
  layer: z.string(),
  role: z.string(),
  ownership: OwnershipSchema,
});

/** zod schema of a {@link SkillView} (for hosts that store or receive views). */
export const SkillViewSchema: z.ZodType<SkillView> = z.object({
  role: z.string().min(1),
  mode: z.enum(["strict", "lenient"]),
  roots: z.array(SkillRootSchema),
  own: z.array(SkillEntrySchema),
  reference: z.array(SkillEntrySchema),
  skills: z.array(SkillEntrySchema),
  hidden: z.array(SkillEntrySchema),
  shadowed: z.array(z.object({ name: z.string(), winner: LocationSchema, loser: LocationSchema })),
  diagnostics: z.array(
    z.object({
      severity: z.enum(["error", "warning", "info"]),
      code: z.enum(SKILL_DIAGNOSTIC_CODES),
      message: z.string(),
      path: z.string(),
      layer: z.string().nullable(),
      role: z.string().nullable(),
      target: z.string().exactOptional(),
    }),
  ),
  stats: z.object({
    skillFiles: z.number().int().nonnegative(),
    cacheHits: z.number().int().nonnegative(),
    directories: z.number().int().nonnegative(),
  }),
});

import { resolve as resolvePath } from "node:path";
import { type Clock, type EventBus, KeelError, parseSafeName, SafeNameSchema, systemClock, toKeelError, validate, validateOrThrow } from "@keel/core";
import { errAsync, type Result, ResultAsync } from "neverthrow";
import { z } from "zod";
import { createScanCache, type ScanCache } from "./internal/scan-cache.js";
import { sameScan } from "./internal/scan-compare.js";
import { scanLayers, type ScanResult } from "./internal/skill-scan.js";
import { createVerifiedCheck, type VerifiedCheck } from "./internal/verified-check.js";
import { buildView, type HiddenSkills } from "./internal/view-build.js";
import { readHiddenNames } from "./internal/visibility-file.js";
import { readSkillBody, type SkillBody } from "./skill-body.js";
import { SkillDeliveryModeSchema, type SkillDeliveryMode } from "./skill-delivery.js";
import { searchSkills, type SkillSearchHit, type SkillSearchOptions } from "./skill-search.js";
import type { SkillDiagnostic, SkillDiscoveryMode, SkillEntry, SkillView } from "./skill-view.js";
import { stageSkills, type StageReport, type StageSkillsOptions } from "./skill-staging.js";

/** One layer of skills: a directory holding one directory per role. */
export interface SkillLayer {
  /** The layer name (a `SafeName`), e.g. `project`, `domain`, `global`. */
  name: string;
  /** The layer directory. Relative paths are resolved against the current directory at creation. */
  dir: string;
}

/** Limits that keep discovery bounded whatever is on disk. */
export interface SkillLimits {
  /** Largest SKILL.md accepted, in bytes (discovery and `readBody`). Default 262,144. */
  maxFileBytes: number;
  /** Most bytes read from the start of a SKILL.md to find the closing `---`. Default 16,384. */
  maxFrontmatterBytes: number;
  /** Most skills taken from one root (role directory). Default 10,000. */
  maxSkillsPerRoot: number;
  /** Most directories listed under one root. Default 50,000. */
  maxDirectoriesPerRoot: number;
  /** Deepest skill directory below its root (`<root>/<skill>` is depth 1). Default 4. */
  maxDepth: number;
  /** Most role directories taken from one layer. Default 256. */
  maxRolesPerLayer: number;
}

/** The default {@link SkillLimits}. */
export const DEFAULT_SKILL_LIMITS: Readonly<SkillLimits> = Object.freeze({
  maxFileBytes: 262_144,
  maxFrontmatterBytes: 16_384,
  maxSkillsPerRoot: 10_000,
  maxDirectoriesPerRoot: 50_000,
  maxDepth: 4,
  maxRolesPerLayer: 256,
});

/** Options of {@link createSkillLibrary}. */
export interface SkillLibraryOptions {
  /** The layers, in precedence order (typically project, domain, global). 1 to 16, unique names. */
  layers: SkillLayer[];
  /** `lenient` (default) or `strict`; see `SkillDiscoveryMode`. */
  mode?: SkillDiscoveryMode;
  /** Overrides of {@link DEFAULT_SKILL_LIMITS}. */
  limits?: Partial<SkillLimits>;
  /** Where `skill.library.available` and `agent.io.read` are emitted. */
  events?: EventBus;
  /**
   * The time used to judge whether a file changed too recently to be cached (compared with file
   * timestamps, so it must be the filesystem's time). Default `systemClock`.
   */
  clock?: Clock;
  /**
   * Offer only verified skills (default false): managed skills admitted as `verified` (see
   * `importSkill`'s `verification`) whose tree still has the digest that was verified. Every
   * other skill — unmanaged, admitted as `unverified` or `manual`, or changed since — is left out
   * of `resolve` (and `get` answers `not_found`) and reported as an `error` diagnostic
   * (`unverified` or `verification_stale`); it keeps its precedence, so it still shadows a later
   * skill of its name. Checking reads each skill's files once and again only when one changed.
   */
  requireVerified?: boolean;
}

/** Options of {@link SkillLibrary.resolve}. */
export interface ResolveSkillsOptions {
  /** How the view's skills reach the backend it is for (`backend.capabilities.skills`); reported in the event. */
  deliveryMode?: SkillDeliveryMode;
}

/** Who reads a body, for the `agent.io.read` record. */
export interface ReadBodyContext {
  /** The role reading (a `SafeName`). */
  role: string;
  /** The mission, if any (a `SafeName`). */
  missionId?: string | null;
}

/** Options of {@link SkillLibrary.get}. */
export interface GetSkillOptions {
  /** Look the name up in this role's view (own before reference); default: every role directory, layer by layer. */
  role?: string;
}

/** A skill found by {@link SkillLibrary.get}. */
export interface FoundSkill {
  /** The skill (ownership judged from `role`, or from the role directory that holds it). */
  skill: SkillEntry;
  /** True when it is `explicit-only`: present, but left out of the catalogue. */
  hidden: boolean;
}

const GetOptionsSchema = z.object({ name: z.string().min(1).max(1024), role: SafeNameSchema.optional() }).strict();

/** Which skills each scanned root hides, and a key that changes when that does. */
function hiddenSkillsOf(scan: ScanResult): { hidden: HiddenSkills; key: string } {
  const hidden = new Map<string, ReadonlySet<string>>();
  const parts: string[] = [];
  for (const layer of scan.layers) {
    for (const root of layer.roots) {
      const { names } = readHiddenNames(root.path);
      if (names.size === 0) continue;
      hidden.set(root.path, names);
      parts.push(`${root.path}\u0000${[...names].sort().join("\u0000")}`);
    }
  }
  return { hidden, key: parts.join("\u0001") };
}

/**
 * A view without the skills `check` refuses, each reported as a diagnostic (after the others of
 * its root). The refused skills keep their precedence: buildView already chose the winners.
 */
async function verifiedView(view: SkillView, verified: VerifiedCheck): Promise<SkillView> {
  const refused = new Map<string, SkillDiagnostic>();
  for (const skill of [...view.skills, ...view.hidden]) {
    const diagnostic = await verified.check(skill);
    if (diagnostic) refused.set(skill.path, Object.freeze(diagnostic));
  }
  if (refused.size === 0) return view;
  const keep = (skills: readonly SkillEntry[]) => Object.freeze(skills.filter((skill) => !refused.has(skill.path)));
  return Object.freeze({
    ...view,
    own: keep(view.own),
    reference: keep(view.reference),
    skills: keep(view.skills),
    hidden: keep(view.hidden),
    diagnostics: Object.freeze([...view.diagnostics, ...refused.values()]),
  });
}

/** A layered skill library. Create with {@link createSkillLibrary}. */
export interface SkillLibrary {
  /** The layers, in precedence order, with absolute directories. */
  readonly layers: readonly SkillLayer[];
  /** The discovery mode. */
  readonly mode: SkillDiscoveryMode;
  /** The limits in force. */
  readonly limits: Readonly<SkillLimits>;
  /** True when only verified skills are offered (the `requireVerified` option). */
  readonly requireVerified: boolean;
  /**
   * Discovers the skills of `role` from frontmatter only and emits `skill.library.available`.
   * Reflects the disk as it is now: files unchanged since the last resolve (same inode, size,
   * mtime and ctime) are not read again. Bad skills become diagnostics; `invalid_input` only for
   * a bad role or options.
   */
  resolve(role: string, options?: ResolveSkillsOptions): ResultAsync<SkillView, KeelError>;
  /**
   * Finds one skill by name, `explicit-only` ones included (`not_found` when there is none).
   * Reads the disk as `resolve` does.
   */
  get(name: string, options?: GetSkillOptions): ResultAsync<FoundSkill, KeelError>;
  /** Lexical search of a view (see `searchSkills`). */
  search(view: Pick<SkillView, "skills">, query: string, options?: SkillSearchOptions): Result<SkillSearchHit[], KeelError>;
  /**
   * Reads one skill's body (the text after the frontmatter), capped at `maxFileBytes`, and emits
   * `agent.io.read`. The path must be a SKILL.md inside one of the library's layers.
   * `not_found` when the file is gone, `too_large` past the cap, `invalid_input` for a path that
   * is not a skill of this library.
   */
  readBody(skill: Pick<SkillEntry, "name" | "path">, context: ReadBodyContext): ResultAsync<SkillBody, KeelError>;
  /**
   * `stageSkills` bound to this library: every skill staged must really be inside one of its
   * layers (`invalid_input` otherwise, nothing staged), whatever the view says.
   */
  stage(view: Pick<SkillView, "role" | "own" | "skills">, dir: string, options?: Omit<StageSkillsOptions, "layers">): ResultAsync<StageReport, KeelError>;
}

const positive = (max: number) => z.number().int().min(1).max(max);

const LimitsSchema = z
  .object({
    maxFileBytes: positive(64 * 1024 * 1024),
    maxFrontmatterBytes: positive(1024 * 1024),
    maxSkillsPerRoot: positive(1_000_000),
    maxDirectoriesPerRoot: positive(10_000_000),
    maxDepth: positive(64),
    maxRolesPerLayer: positive(100_000),
  })
  .partial()
  .strict();

const OptionsSchema = z
  .object({
    layers: z
      .array(z.object({ name: SafeNameSchema, dir: z.string().min(1).max(4096) }).strict())
      .min(1)
      .max(16)
      .refine((layers) => new Set(layers.map((layer) => layer.name)).size === layers.length, { message: "layer names must be unique" }),
    mode: z.enum(["strict", "lenient"]).optional(),
    limits: LimitsSchema.optional(),
    events: z.custom<EventBus>((value) => typeof (value as EventBus | null)?.emit === "function", { message: "must be an EventBus" }).optional(),
    clock: z.custom<Clock>((value) => typeof (value as Clock | null)?.now === "function", { message: "must be a Clock" }).optional(),
    requireVerified: z.boolean().optional(),
  })
  .strict();

const MAX_REMEMBERED_VIEWS = 64;

const ResolveOptionsSchema = z.object({ deliveryMode: SkillDeliveryModeSchema.optional() }).strict();

/**
 * Creates a layered skill library. Throws `invalid_input` at once for bad options (no layers,
 * a layer name that is not a `SafeName`, duplicate names, bad limits). Missing directories are
 * not an error: they are simply absent from the views.
 *
 * @example
 * ```ts
 * const library = createSkillLibrary({
 *   layers: [{ name: "project", dir: ".keel/skills" }, { name: "global", dir: "/opt/skills" }],
 * });
 * const view = (await library.resolve("engineer"))._unsafeUnwrap();
 * console.log(renderSkillContract(view)._unsafeUnwrap());
 * ```
 */
export function createSkillLibrary(options: SkillLibraryOptions): SkillLibrary {
  const parsed = validateOrThrow(OptionsSchema, options, "skill library options");
  const layers = parsed.layers.map((layer) => Object.freeze({ name: layer.name as string, dir: resolvePath(layer.dir) }));
  const mode = parsed.mode ?? "lenient";
  const overrides = Object.fromEntries(Object.entries(parsed.limits ?? {}).filter(([, value]) => value !== undefined));
  const limits: Readonly<SkillLimits> = Object.freeze({ ...DEFAULT_SKILL_LIMITS, ...overrides });
  const clock = parsed.clock ?? systemClock;
  const events = parsed.events;
  const requireVerified = parsed.requireVerified ?? false;
  const verified = requireVerified ? createVerifiedCheck(() => clock.now()) : undefined;
  let cache: ScanCache = createScanCache();
  // Views of the last scan by role: reused (with fresh stats) while scans find the tree unchanged.
  let lastScan: ScanResult | undefined;
  let lastHidden = "";
  let hidden: HiddenSkills = new Map();
  const views = new Map<string, SkillView>();
  const viewOf = (scan: ScanResult, role: string): SkillView => {
    const found = hiddenSkillsOf(scan);
    if (!lastScan || !sameScan(lastScan, scan) || found.key !== lastHidden) {
      lastScan = scan;
      lastHidden = found.key;
      hidden = found.hidden;
      views.clear();
    }
    let view = views.get(role);
    if (!view) {
      if (views.size >= MAX_REMEMBERED_VIEWS) views.clear();
      view = buildView(lastScan, role, mode, hidden);
      views.set(role, view);
    }
    return Object.freeze({ ...view, stats: Object.freeze({ ...scan.stats }) });
  };
  const scan = async (): Promise<ScanResult> => {
    const scanned = await scanLayers({ layers, mode, limits, previous: cache, now: () => clock.now() });
    cache = scanned.cache;
    return scanned.result;
  };

  const resolve = (role: string, resolveOptions: ResolveSkillsOptions = {}): ResultAsync<SkillView, KeelError> => {
    const checked = parseSafeName(role, "role").andThen(() => validate(ResolveOptionsSchema, resolveOptions, "resolve options"));
    if (checked.isErr()) return errAsync(checked.error);
    const run = async (): Promise<SkillView> => {
      const scanned = viewOf(await scan(), role);
      const view = verified ? await verifiedView(scanned, verified) : scanned;
      events?.emit({
        type: "skill.library.available",
        role,
        roots: view.roots.map((root) => ({ ...root })),
        own: view.own.map((skill) => skill.path),
        reference: view.reference.map((skill) => skill.path),
        discoveryMode: mode,
        ...(resolveOptions.deliveryMode ? { deliveryMode: resolveOptions.deliveryMode } : {}),
      });
      return view;
    };
    return ResultAsync.fromThrowable(run, (error) => toKeelError(error, "io_failed", "skill discovery failed"))();
  };

  const get = (name: string, getOptions: GetSkillOptions = {}): ResultAsync<FoundSkill, KeelError> => {
    const checked = validate(GetOptionsSchema, { name, ...getOptions }, "get options");
    if (checked.isErr()) return errAsync(checked.error);
    const run = async (): Promise<FoundSkill> => {
      const scanned = await scan();
      const roles = getOptions.role ? [getOptions.role] : [...new Set(scanned.layers.flatMap((layer) => layer.roots.map((root) => root.role)))];
      // Without a role, the first holder in layer order (roles by name) is judged from its own role.
      const candidates = roles
        .map((role) => viewOf(scanned, role))
        .flatMap((view) => [...view.skills, ...view.hidden].filter((skill) => skill.name === name && (getOptions.role !== undefined || skill.ownership === "own")));
      const order = (skill: SkillEntry) => layers.findIndex((layer) => layer.name === skill.layer);
      const skill = candidates.sort((left, right) => order(left) - order(right))[0];
      if (!skill) throw new KeelError("not_found", `no skill named "${name}" in this library${getOptions.role ? ` for role "${getOptions.role}"` : ""}`, { details: { name } });
      const refused = verified ? await verified.check(skill) : null;
      if (refused) throw new KeelError("not_found", `skill "${name}" is ${refused.message}`, { details: { name, reason: refused.code, path: skill.path } });
      return { skill, hidden: hidden.get(skill.root)?.has(skill.name) === true };
    };
    return ResultAsync.fromThrowable(run, (error) => toKeelError(error, "io_failed", `looking up skill ${name} failed`))();
  };

  return {
    layers: Object.freeze(layers),
    get,
    mode,
    limits,
    requireVerified,
    resolve,
    search: (view, query, searchOptions) => searchSkills(view, query, searchOptions),
    stage: (view, dir, stageOptions = {}) => stageSkills(view, dir, { ...stageOptions, layers: layers.map((layer) => layer.dir) }),
    readBody: (skill, context) => readSkillBody({ layers, maxFileBytes: limits.maxFileBytes, ...(events ? { events } : {}) }, skill, context),
  };
}

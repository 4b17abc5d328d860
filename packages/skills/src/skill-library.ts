import { resolve as resolvePath } from "node:path";
import { type Clock, type EventBus, type KeelError, parseSafeName, SafeNameSchema, systemClock, toKeelError, validate, validateOrThrow } from "@keel/core";
import { errAsync, type Result, ResultAsync } from "neverthrow";
import { z } from "zod";
import { createScanCache, type ScanCache } from "./internal/scan-cache.js";
import { sameScan } from "./internal/scan-compare.js";
import { scanLayers, type ScanResult } from "./internal/skill-scan.js";
import { buildView } from "./internal/view-build.js";
import { readSkillBody, type SkillBody } from "./skill-body.js";
import { SkillDeliveryModeSchema, type SkillDeliveryMode } from "./skill-delivery.js";
import { searchSkills, type SkillSearchHit, type SkillSearchOptions } from "./skill-search.js";
import type { SkillDiscoveryMode, SkillEntry, SkillView } from "./skill-view.js";

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

/** A layered skill library. Create with {@link createSkillLibrary}. */
export interface SkillLibrary {
  /** The layers, in precedence order, with absolute directories. */
  readonly layers: readonly SkillLayer[];
  /** The discovery mode. */
  readonly mode: SkillDiscoveryMode;
  /** The limits in force. */
  readonly limits: Readonly<SkillLimits>;
  /**
   * Discovers the skills of `role` from frontmatter only and emits `skill.library.available`.
   * Reflects the disk as it is now: files unchanged since the last resolve (same inode, size,
   * mtime and ctime) are not read again. Bad skills become diagnostics; `invalid_input` only for
   * a bad role or options.
   */
  resolve(role: string, options?: ResolveSkillsOptions): ResultAsync<SkillView, KeelError>;
  /** Lexical search of a view (see `searchSkills`). */
  search(view: Pick<SkillView, "skills">, query: string, options?: SkillSearchOptions): Result<SkillSearchHit[], KeelError>;
  /**
   * Reads one skill's body (the text after the frontmatter), capped at `maxFileBytes`, and emits
   * `agent.io.read`. The path must be a SKILL.md inside one of the library's layers.
   * `not_found` when the file is gone, `too_large` past the cap, `invalid_input` for a path that
   * is not a skill of this library.
   */
  readBody(skill: Pick<SkillEntry, "name" | "path">, context: ReadBodyContext): ResultAsync<SkillBody, KeelError>;
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
  let cache: ScanCache = createScanCache();
  // Views of the last scan by role: reused (with fresh stats) while scans find the tree unchanged.
  let lastScan: ScanResult | undefined;
  const views = new Map<string, SkillView>();
  const viewOf = (scan: ScanResult, role: string): SkillView => {
    if (!lastScan || !sameScan(lastScan, scan)) {
      lastScan = scan;
      views.clear();
    }
    let view = views.get(role);
    if (!view) {
      if (views.size >= MAX_REMEMBERED_VIEWS) views.clear();
      view = buildView(lastScan, role, mode);
      views.set(role, view);
    }
    return Object.freeze({ ...view, stats: Object.freeze({ ...scan.stats }) });
  };

  const resolve = (role: string, resolveOptions: ResolveSkillsOptions = {}): ResultAsync<SkillView, KeelError> => {
    const checked = parseSafeName(role, "role").andThen(() => validate(ResolveOptionsSchema, resolveOptions, "resolve options"));
    if (checked.isErr()) return errAsync(checked.error);
    const run = async (): Promise<SkillView> => {
      const scanned = await scanLayers({ layers, mode, limits, previous: cache, now: () => clock.now() });
      cache = scanned.cache;
      const view = viewOf(scanned.result, role);
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

  return {
    layers: Object.freeze(layers),
    mode,
    limits,
    resolve,
    search: (view, query, searchOptions) => searchSkills(view, query, searchOptions),
    readBody: (skill, context) => readSkillBody({ layers, maxFileBytes: limits.maxFileBytes, ...(events ? { events } : {}) }, skill, context),
  };
}

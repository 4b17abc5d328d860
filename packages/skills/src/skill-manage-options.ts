import { resolve } from "node:path";
import { type Clock, SafeNameSchema, systemClock } from "@keel/core";
import { z } from "zod";
import { nodeSkillIo, type SkillIo } from "./skill-io.js";

/** Bounds of a skill tree that is imported (and of one digested for a library update). */
export interface ManagedSkillLimits {
  /** Most regular files in one skill. Default 1,000. */
  maxFiles: number;
  /** Largest file, in bytes. Default 10 MiB. */
  maxFileBytes: number;
  /** Most bytes of all files together. Default 50 MiB. */
  maxTotalBytes: number;
  /** Deepest directory below the skill directory. Default 8. */
  maxDepth: number;
  /** Largest SKILL.md, in bytes. Default 262,144 (the discovery limit). */
  maxSkillFileBytes: number;
}

/** The default {@link ManagedSkillLimits}. */
export const DEFAULT_MANAGED_SKILL_LIMITS: Readonly<ManagedSkillLimits> = Object.freeze({
  maxFiles: 1_000,
  maxFileBytes: 10 * 1024 * 1024,
  maxTotalBytes: 50 * 1024 * 1024,
  maxDepth: 8,
  maxSkillFileBytes: 262_144,
});

/** Options every managing operation (import, install, update, withdraw, visibility) shares. */
export interface ManagedLayerOptions {
  /** The layer directory (`<layer>/<role>/<skill>/SKILL.md`). Created when missing. */
  layer: string;
  /** The role directory to manage (a `SafeName`). */
  role: string;
  /** Overrides of {@link DEFAULT_MANAGED_SKILL_LIMITS}. */
  limits?: Partial<ManagedSkillLimits>;
  /** How long to wait for another operation on the same role directory (default 5,000 ms) before `unavailable`. */
  lockWaitMs?: number;
  /** The file system (default {@link nodeSkillIo}); tests pass one that injects faults. */
  io?: SkillIo;
  /** The clock of `importedAt`, version install times and trash times (default `systemClock`). */
  clock?: Clock;
  /**
   * How long a replaced version of a managed skill stays in place after the version that replaced
   * it was installed, so that a reader that resolved the skill just before the swap (an agent
   * running a script from its directory) keeps a valid path. Default 600,000 (10 minutes);
   * removed by the first managed operation on the role after that.
   */
  versionGraceMs?: number;
}

/** The default {@link ManagedLayerOptions.versionGraceMs}: 10 minutes. */
export const DEFAULT_VERSION_GRACE_MS = 10 * 60_000;

const positive = (max: number) => z.number().int().min(1).max(max);

const managedLayerShape = {
  layer: z.string().min(1).max(4096),
  role: SafeNameSchema,
  limits: z
    .object({
      maxFiles: positive(1_000_000),
      maxFileBytes: positive(1024 * 1024 * 1024),
      maxTotalBytes: positive(16 * 1024 * 1024 * 1024),
      maxDepth: positive(64),
      maxSkillFileBytes: positive(64 * 1024 * 1024),
    })
    .partial()
    .strict()
    .optional(),
  lockWaitMs: z.number().int().min(0).max(3_600_000).optional(),
  io: (z.custom<SkillIo>((value) => typeof (value as SkillIo | null)?.rename === "function", { message: "must be a SkillIo" }) as z.ZodType<SkillIo>).optional(),
  clock: (z.custom<Clock>((value) => typeof (value as Clock | null)?.now === "function", { message: "must be a Clock" }) as z.ZodType<Clock>).optional(),
  versionGraceMs: z.number().int().min(0).max(30 * 24 * 3_600_000).optional(),
};

/** A strict zod schema of {@link ManagedLayerOptions} plus an operation's own fields (`extra`). */
export function managedOptionsSchema(extra: z.ZodRawShape): z.ZodType<unknown> {
  return z.object({ ...managedLayerShape, ...extra }).strict();
}

/** The resolved form of {@link ManagedLayerOptions}. */
export interface ManagedContext {
  layerDirectory: string;
  roleDirectory: string;
  role: string;
  limits: ManagedSkillLimits;
  lock: { waitMs: number; staleMs: number };
  io: SkillIo;
  clock: Clock;
  versionGraceMs: number;
}

/** Resolves validated {@link ManagedLayerOptions}. */
export function managedContext(options: ManagedLayerOptions): ManagedContext {
  const layerDirectory = resolve(options.layer);
  const overrides = Object.fromEntries(Object.entries(options.limits ?? {}).filter(([, value]) => value !== undefined));
  return {
    layerDirectory,
    roleDirectory: resolve(layerDirectory, options.role),
    role: options.role,
    limits: { ...DEFAULT_MANAGED_SKILL_LIMITS, ...overrides },
    lock: { waitMs: options.lockWaitMs ?? 5_000, staleMs: 10 * 60_000 },
    io: options.io ?? nodeSkillIo,
    clock: options.clock ?? systemClock,
    versionGraceMs: options.versionGraceMs ?? DEFAULT_VERSION_GRACE_MS,
  };
}

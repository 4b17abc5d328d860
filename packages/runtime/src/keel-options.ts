import { SafeNameSchema, type Clock, type EventBus } from "@keel/core";
import type { Backend } from "@keel/backend";
import type { Limits } from "@keel/budget";
import type { SessionLimits, SessionPolicy } from "@keel/sessions";
import type { SkillLayer, SkillLibrary } from "@keel/skills";
import type { KeelStore } from "@keel/store";
import { z } from "zod";

/** Budget limits the runtime applies to every turn. */
export interface RuntimeBudgetOptions {
  /** Limits of each mission (the root scope `mission.<id>`). */
  mission?: Limits;
  /** Limits of each role within a mission (scope `role.<mission>.<role>`, a child of the mission). */
  role?: Limits;
  /** Output tokens reserved per turn on top of the prompt's estimate (default 4,096). */
  reserveOutputTokens?: number;
}

/** Options of {@link createKeel}. Every part is optional. */
export interface KeelOptions {
  /**
   * The store, or a store URL (a directory, `sqlite:<file>`, `postgres://…`) opened with
   * `openStore` (and closed by `keel.close()`). Default: the filesystem store in `dir`.
   */
  store?: KeelStore | string;
  /**
   * Opens a store URL given as `store`. The runtime names no store adapter itself: pass
   * `openStoreUrl` from `@keel/cli` (which knows fs, SQLite and PostgreSQL), or your own.
   */
  openStore?: (url: string) => KeelStore;
  /** The directory of the default filesystem store (default `./.keel`). Ignored when `store` is given. */
  dir?: string;
  /** The backends by id (or a list, keyed by their `id`). Default: none (a turn then needs one). */
  backends?: Backend[] | Record<string, Backend>;
  /** The backend a turn uses when it names none. Default: the first. */
  defaultBackend?: string;
  /** A skill library, or its layers. Default: no skills. */
  skills?: SkillLibrary | { layers: SkillLayer[]; mode?: "strict" | "lenient" };
  /** Budget limits. Default: none (turns are still accounted). */
  budget?: RuntimeBudgetOptions;
  /** The role-session policy. Default `auto`. */
  policy?: SessionPolicy;
  /** Rotation limits (max turns, max input tokens). Default 6 turns, 120,000 tokens. */
  limits?: Partial<SessionLimits>;
  /** Where every event goes. Default: a new bus (see `keel.events`). */
  events?: EventBus;
  /** The clock. Default the system clock. */
  clock?: Clock;
  /** The working directory of backend turns (absolute). Default `process.cwd()`. */
  cwd?: string;
  /** The time limit of one backend turn in ms (default 600,000). */
  turnTimeoutMs?: number;
}

const isObjectWith = (...methods: string[]) => (value: unknown) =>
  typeof value === "object" && value !== null && methods.every((method) => typeof (value as Record<string, unknown>)[method] === "function");

const LimitsShape = z.record(z.string(), z.unknown());

/** zod schema of {@link KeelOptions} (shallow: each part is validated again by its own package). */
export const KeelOptionsSchema: z.ZodType = z.strictObject({
  store: z.union([z.string().min(1), z.custom<KeelStore>((value) => isObjectWith("close", "check")(value), "store must be a KeelStore or a store URL")]).optional(),
  openStore: z.custom<(url: string) => KeelStore>((value) => typeof value === "function", "openStore must be a function").optional(),
  dir: z.string().min(1).optional(),
  backends: z
    .union([
      z.array(z.custom<Backend>(isObjectWith("runTurn"), "each backend must have runTurn()")),
      z.record(SafeNameSchema, z.custom<Backend>(isObjectWith("runTurn"), "each backend must have runTurn()")),
    ])
    .optional(),
  defaultBackend: SafeNameSchema.optional(),
  skills: z
    .union([
      z.custom<SkillLibrary>(isObjectWith("resolve"), "skills must be a SkillLibrary"),
      z.strictObject({ layers: z.array(z.unknown()).min(1), mode: z.enum(["strict", "lenient"]).optional() }),
    ])
    .optional(),
  budget: z
    .strictObject({
      mission: LimitsShape.optional(),
      role: LimitsShape.optional(),
      reserveOutputTokens: z.number().int().nonnegative().optional(),
    })
    .optional(),
  policy: z.enum(["auto", "fresh", "mission", "rolling"]).optional(),
  limits: z.record(z.string(), z.unknown()).optional(),
  events: z.custom<EventBus>(isObjectWith("emit", "on"), "events must be an EventBus").optional(),
  clock: z.custom<Clock>(isObjectWith("now"), "clock must have now()").optional(),
  cwd: z.string().min(1).refine((path) => path.startsWith("/") || /^[A-Za-z]:[\\/]/.test(path), "cwd must be an absolute path").optional(),
  turnTimeoutMs: z.number().int().positive().optional(),
});

import { SafeNameSchema, type Clock, type EventBus } from "@keel/core";
import type { Backend } from "@keel/backend";
import type { Limits } from "@keel/budget";
import type { RoleLeaseOptions, SessionLimits, SessionPolicy } from "@keel/sessions";
import { RoleLeaseOptionsSchema } from "@keel/sessions/schemas";
import type { SkillLayer, SkillLibrary } from "@keel/skills";
import type { KeelStore } from "@keel/store";
import { isKeelStore } from "@keel/store/kit";
import { z } from "zod";
import { RuntimeWorkSessionOptionsSchema, type RuntimeWorkSessionOptions } from "./work-session-runtime.js";

/** Budget limits the runtime applies to every turn. */
export interface RuntimeBudgetOptions {
  /** Limits of each mission (the root scope `mission.<id>`). */
  mission?: Limits;
  /** Limits of each role within a mission (scope `role.<role>`, a child of the mission's scope `mission.<id>`: one per mission). */
  role?: Limits;
  /** Output tokens reserved per turn on top of the prompt's estimate (default 4,096). */
  reserveOutputTokens?: number;
}

/** Where {@link createKeel} looks for project instruction files (see `discoverInstructions` in `@keel/skills`). */
export interface RuntimeInstructionOptions {
  /** The agent's own configuration directory, read first. Default: none. */
  agentDir?: string;
  /** File names looked for in each directory, first match wins. Default `AGENTS.md`, `CLAUDE.md`. */
  fileNames?: string[];
  /** Also read directories above the repository root. Default false. */
  trustOutsideRepository?: boolean;
}

/** Options of {@link createKeel}. Every part is optional. */
export interface KeelOptions {
  /**
   * The store, or a store URL (a directory, `sqlite:<file>`, `postgres://…`) opened with the
   * `openStore` option (and closed by `keel.close()`). Default: the filesystem store in `dir`.
   */
  store?: KeelStore | string;
  /**
   * Opens a store URL given as `store`, synchronously. The usual way is to open the URL first
   * with the `openStore` function of this package (which loads the SQL adapters only when a URL names one) and pass the
   * `KeelStore` it answers as `store`; this option is for a host with a synchronous opener of
   * its own.
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
  /**
   * The lease that lets one host at a time run a role's turn in a mission (`mission` and
   * `rolling` policies), for a runtime that shares its store with other processes or hosts:
   * `ttlMs` (default 30,000), `renewIntervalMs` (default a third of `ttlMs`), `waitMs`, the
   * longest a turn waits for the lease while another host's turn of the role holds it (default
   * 600,000, then `lease_held`), and `lingerMs` (default 0).
   *
   * A turn that gives up on the lease (`lease_held`, or another lease error such as
   * `unavailable`) never reached its backend and reserved nothing: a turn takes its budget
   * reservation only once it holds the lease and its prompt is built, right before the backend is
   * called, so the ledger is left as if the turn never ran and no `budget.*` event is emitted for
   * it. A signal that fires while the turn waits ends it `aborted` the same way, once the wait is
   * over (the wait itself does not watch the signal).
   *
   * The trade-off: a host that dies hands its roles over at most `ttlMs` after its last
   * renewal, so a short TTL fails over fast; but a live host that stalls for longer than
   * `ttlMs - renewIntervalMs` (a long GC pause, a stopped VM) then loses the lease, another host
   * may take the role over, and the stalled turn comes back superseded
   * (`RoleTurnResult.superseded`: its work was not recorded). A long TTL survives long pauses and
   * fails over slowly. See {@link RoleLeaseOptions}.
   */
  roleLease?: RoleLeaseOptions;
  /** Where every event goes. Default: a new bus (see `keel.events`). */
  events?: EventBus;
  /** The clock. Default the system clock. */
  clock?: Clock;
  /** The working directory of backend turns (absolute). Default `process.cwd()`. */
  cwd?: string;
  /** The time limit of one backend turn in ms (default 600,000). */
  turnTimeoutMs?: number;
  /**
   * Project instruction files for backends that do not load them themselves (capability
   * `instructions: "prompt"`): where to look and which names. `false` never adds them. Default:
   * `AGENTS.md` / `CLAUDE.md` from `cwd` up to its repository root, no agent directory.
   */
  instructions?: false | RuntimeInstructionOptions;
  /** Work-session limits (capacity gate) and audit cadence. Default 200 tool calls, 180 active minutes, idle after 15, an audit every 3 sessions. */
  workSessions?: RuntimeWorkSessionOptions;
}

const isObjectWith = (...methods: string[]) => (value: unknown) =>
  typeof value === "object" && value !== null && methods.every((method) => typeof (value as Record<string, unknown>)[method] === "function");

const LimitsShape = z.record(z.string(), z.unknown());

/** zod schema of {@link KeelOptions} (shallow: each part is validated again by its own package). */
export const KeelOptionsSchema: z.ZodType = z.strictObject({
  store: z
    .custom<string | KeelStore>((value) => (typeof value === "string" && value.length > 0) || isKeelStore(value), "store must be a KeelStore or a store URL")
    .optional(),
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
  roleLease: RoleLeaseOptionsSchema.optional(),
  events: z.custom<EventBus>(isObjectWith("emit", "on"), "events must be an EventBus").optional(),
  clock: z.custom<Clock>(isObjectWith("now"), "clock must have now()").optional(),
  cwd: z.string().min(1).refine((path) => path.startsWith("/") || /^[A-Za-z]:[\\/]/.test(path), "cwd must be an absolute path").optional(),
  turnTimeoutMs: z.number().int().positive().optional(),
  instructions: z
    .union([
      z.literal(false),
      z.strictObject({
        agentDir: z.string().min(1).optional(),
        fileNames: z.array(z.string().min(1).max(255)).min(1).max(16).optional(),
        trustOutsideRepository: z.boolean().optional(),
      }),
    ])
    .optional(),
  workSessions: RuntimeWorkSessionOptionsSchema.optional(),
});

/**
 * How a backend receives a role's skills (DESIGN.md §5). The runtime reads it from
 * {@link BackendCapabilities.skills} and delivers accordingly; no table of backend ids exists
 * anywhere else.
 *
 * - `native` — the adapter hands `BackendTurnRequest.skillPaths` to the CLI on every turn
 *   (a flag such as pi's `--skill`, a per-run configuration or a directory it is pointed at);
 *   nothing in `cwd` is touched.
 * - `staged` — the CLI only discovers skills in directories it scans; the host links them into
 *   `<cwd>/.agents/skills` first (`stageSkills` from `@keel/skills`) and the adapter ignores
 *   `skillPaths`.
 * - `prompt` — the CLI has no loader Keel can drive; the host puts the skill contract (names,
 *   descriptions, paths) into the prompt and the adapter ignores `skillPaths`.
 *
 * @see {@link BackendCapabilities}
 */
export type BackendSkillDelivery = "native" | "staged" | "prompt";

/**
 * How much token usage a backend reports for a turn:
 *
 * - `full` — input with its cache split and output (cost where the CLI prices it);
 * - `partial` — some buckets are known and others stay `null` (e.g. output tokens only);
 * - `none` — every bucket is `null`.
 *
 * A bucket the backend did not report is `null`, never 0: `none` must not be claimed as
 * `partial`.
 */
export type BackendUsageSupport = "full" | "partial" | "none";

/**
 * What a backend can do. Hosts and the session planner read these before a turn: a backend
 * whose `resume` is false is never asked to resume, and its role sessions always start fresh
 * from the capsule.
 */
export interface BackendCapabilities {
  /**
   * Whether a provider thread can be resumed with `BackendTurnRequest.threadId`. A
   * fresh-only backend answers a request that names a thread with `unsupported`.
   */
  resume: boolean;
  /** How skills reach the model. */
  skills: BackendSkillDelivery;
  /** How much usage the backend reports. */
  usage: BackendUsageSupport;
}

import type { CompactionPlan } from "./compaction-plan.js";
import type { TranscriptEntry } from "./entry-schema.js";

/**
 * What a hook decides:
 * - `continue` (or `undefined`): go on as planned;
 * - `cancel`: do nothing (the operation answers `aborted`, with `reason`);
 * - `supply`: use this summary instead of calling the summarizer (recorded with `source: "hook"`).
 */
export type HookDecision =
  | { action: "continue" }
  | { action: "cancel"; reason?: string }
  | { action: "supply"; summary: string; details?: Record<string, unknown> };

/** What `beforeCompaction` sees. */
export interface BeforeCompactionEvent {
  sessionId: string;
  plan: CompactionPlan;
  customInstructions: string | undefined;
}

/** What `beforeNavigation` sees. */
export interface BeforeNavigationEvent {
  sessionId: string;
  /** The leaf being left. */
  fromId: string | null;
  /** The entry navigated to. */
  targetId: string;
  /** The entries of the abandoned branch, oldest first (from below the common ancestor to the old leaf). */
  abandoned: readonly TranscriptEntry[];
  customInstructions: string | undefined;
}

/** Hooks a host sets on compaction and navigation; each may answer at once or with a promise. */
export interface TranscriptHooks {
  /** Before a compaction is summarized and written. */
  beforeCompaction?: (event: BeforeCompactionEvent) => HookDecision | undefined | Promise<HookDecision | undefined>;
  /** Before a navigation moves the leaf (and summarizes the branch left). */
  beforeNavigation?: (event: BeforeNavigationEvent) => HookDecision | undefined | Promise<HookDecision | undefined>;
}

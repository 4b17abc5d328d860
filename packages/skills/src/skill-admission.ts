import { z } from "zod";

/** One backend's verification outcome for a skill (from the caller's own verification run). */
export interface VerificationBackendResult {
  /** The backend id (any string the caller uses). */
  backend: string;
  /** Cases run on it. */
  cases: number;
  /** `passed`, `failed`, or `blocked` (could not be run: not installed, no credentials…). */
  status: "passed" | "failed" | "blocked";
  /** Whether admission needs this backend (a blocked required backend refuses the import). */
  required: boolean;
}

/**
 * The caller's verification summary of a skill. It stays outside the runtime tree: the skill's
 * metadata keeps only its digest and the admission decision.
 */
export interface VerificationSummary {
  /** Per backend: cases run and status. */
  backends: VerificationBackendResult[];
  /** Failures not resolved yet, by severity. */
  unresolved: { critical: number; high: number; medium: number; low: number };
}

/** An explicit manual decision that admits a skill whatever its verification says. */
export interface ManualAdmission {
  /** Always `manual`. */
  kind: "manual";
  /** Who decided (a person or a process id; no rationale: that belongs to the caller's records). */
  by: string;
}

/** How a skill was admitted: `verified` (the summary passed the gate), `manual` (an explicit decision), `unverified` (no summary given). */
export type AdmissionDecision = "verified" | "manual" | "unverified";

/** Why the gate refused, in a stable form. */
export interface AdmissionRefusal {
  /** `backend_blocked` (a required backend could not run) or `unresolved_failures` (high or critical ones). */
  code: "backend_blocked" | "unresolved_failures";
  /** What was wrong. */
  message: string;
}

/** The outcome of {@link decideAdmission}. */
export type AdmissionVerdict = { admitted: true; decision: AdmissionDecision } | { admitted: false; refusals: AdmissionRefusal[] };

const count = z.number().int().nonnegative().max(1_000_000_000);

/** zod schema of a {@link VerificationSummary}. */
export const VerificationSummarySchema: z.ZodType<VerificationSummary> = z
  .object({
    backends: z
      .array(z.object({ backend: z.string().min(1).max(128), cases: count, status: z.enum(["passed", "failed", "blocked"]), required: z.boolean() }).strict())
      .max(256),
    unresolved: z.object({ critical: count, high: count, medium: count, low: count }).strict(),
  })
  .strict();

/** zod schema of a {@link ManualAdmission}. */
export const ManualAdmissionSchema: z.ZodType<ManualAdmission> = z.object({ kind: z.literal("manual"), by: z.string().min(1).max(256) }).strict();

/**
 * Decides whether a skill may be admitted into a managed library. Pure and total.
 *
 * In order:
 * 1. a manual decision admits (`manual`), whatever the summary says;
 * 2. no summary admits (`unverified`): verification is the caller's to ask for;
 * 3. a required backend that is `blocked` refuses (`backend_blocked`);
 * 4. an unresolved high or critical failure refuses (`unresolved_failures`);
 * 5. otherwise admits (`verified`). Medium and low failures and failed optional backends are the
 *    caller's to weigh; they do not refuse.
 *
 * @example
 * ```ts
 * decideAdmission({ backends: [{ backend: "pi", cases: 4, status: "blocked", required: true }],
 *   unresolved: { critical: 0, high: 0, medium: 0, low: 0 } }, undefined);
 * // → { admitted: false, refusals: [{ code: "backend_blocked", … }] }
 * ```
 */
export function decideAdmission(summary: VerificationSummary | undefined, manual: ManualAdmission | undefined): AdmissionVerdict {
  if (manual) return { admitted: true, decision: "manual" };
  if (!summary) return { admitted: true, decision: "unverified" };
  const refusals: AdmissionRefusal[] = [];
  const blocked = summary.backends.filter((backend) => backend.required && backend.status === "blocked").map((backend) => backend.backend);
  if (blocked.length > 0) {
    refusals.push({ code: "backend_blocked", message: `required backend(s) ${blocked.join(", ")} could not run the verification` });
  }
  const serious = summary.unresolved.critical + summary.unresolved.high;
  if (serious > 0) {
    refusals.push({
      code: "unresolved_failures",
      message: `${summary.unresolved.critical} critical and ${summary.unresolved.high} high failure(s) are unresolved`,
    });
  }
  return refusals.length > 0 ? { admitted: false, refusals } : { admitted: true, decision: "verified" };
}

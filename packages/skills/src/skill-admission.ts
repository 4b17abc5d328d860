import { z } from "zod";

/** One backend's verification outcome for a skill (from the caller's own verification run). */
export interface VerificationBackendResult {
  /** The backend id (any string the caller uses). */
  backend: string;
  /** Cases run on it. */
  cases: number;
  /** `passed`, `failed`, or `blocked` (could not be run: not installed, no credentials…). */
  status: "passed" | "failed" | "blocked";
  /** Whether admission needs this backend (a required backend that is `blocked` or `failed` refuses the import). */
  required: boolean;
}

/**
 * The caller's verification summary of a skill: what was checked (cases per backend), what is
 * still failing, and — optionally — who verified, when, and which content. The summary itself
 * stays outside the runtime tree: the skill's metadata keeps its digest, the admission decision,
 * and who verified and when.
 *
 * As a file (`keel skills import --verification <file>`, `readVerificationSummary` of `@keel/skills/schemas`) it is
 * this object as JSON:
 *
 * ```json
 * { "verifiedBy": "ci@example", "verifiedAt": "2026-01-15T10:00:00Z",
 *   "skillDigest": "sha256:3f9a…", "backends": [{ "backend": "pi", "cases": 4, "status": "passed", "required": true }],
 *   "unresolved": { "critical": 0, "high": 0, "medium": 0, "low": 0 } }
 * ```
 */
export interface VerificationSummary {
  /** Per backend: cases run and status (what was checked). */
  backends: VerificationBackendResult[];
  /** Failures not resolved yet, by severity. */
  unresolved: { critical: number; high: number; medium: number; low: number };
  /** Who verified (a person or a process id); kept in the skill's metadata. */
  verifiedBy?: string;
  /** When the verification ran (ISO 8601 date-time with an offset or `Z`); kept in the skill's metadata. */
  verifiedAt?: string;
  /**
   * The content digest of the skill that was verified (`sha256:<hex>`, as `digestSkillTree` and
   * `keel skills import --dry-run --json` give it). When present, an import of any other content is
   * refused (`invalid_input`, `details.reason: "verification_digest_mismatch"`).
   */
  skillDigest?: string;
}

/** An explicit manual decision that admits a skill whatever its verification says. */
export interface ManualAdmission {
  /** Always `manual`. */
  kind: "manual";
  /** Who decided (a person or a process id; no rationale: that belongs to the caller's records). */
  by: string;
}

/**
 * How a skill was admitted: `verified` (the summary passed the gate with evidence: every required
 * backend passed cases, and at least one backend did), `manual` (an explicit decision),
 * `unverified` (no summary given, or a summary without that evidence).
 */
export type AdmissionDecision = "verified" | "manual" | "unverified";

/** Why the gate refused, in a stable form. */
export interface AdmissionRefusal {
  /**
   * `backend_blocked` (a required backend could not run), `backend_failed` (a required backend ran
   * and failed) or `unresolved_failures` (high or critical ones).
   */
  code: "backend_blocked" | "backend_failed" | "unresolved_failures";
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
    verifiedBy: z.string().min(1).max(256).optional(),
    verifiedAt: z.iso.datetime({ offset: true }).optional(),
    skillDigest: z.string().regex(/^sha256:[0-9a-f]{64}$/, "must be sha256:<64 lowercase hex digits>").optional(),
  })
  .strict() as z.ZodType<VerificationSummary>;

/** zod schema of a {@link ManualAdmission}. */
export const ManualAdmissionSchema: z.ZodType<ManualAdmission> = z.object({ kind: z.literal("manual"), by: z.string().min(1).max(256) }).strict();

/** True when a backend result is evidence: it ran at least one case and passed. */
function isEvidence(backend: VerificationBackendResult): boolean {
  return backend.status === "passed" && backend.cases > 0;
}

/**
 * Decides whether a skill may be admitted into a managed library. Pure and total.
 *
 * In order:
 * 1. a manual decision admits (`manual`), whatever the summary says;
 * 2. no summary admits (`unverified`): verification is the caller's to ask for;
 * 3. a required backend that is `blocked` refuses (`backend_blocked`);
 * 4. a required backend that `failed` refuses (`backend_failed`);
 * 5. an unresolved high or critical failure refuses (`unresolved_failures`);
 * 6. a summary without evidence — no backend that passed at least one case, or a required backend
 *    that passed none — admits as `unverified`, never `verified`;
 * 7. otherwise admits (`verified`). Medium and low failures and failed or blocked optional
 *    backends are the caller's to weigh; they do not refuse.
 *
 * @example
 * ```ts
 * decideAdmission({ backends: [{ backend: "pi", cases: 4, status: "failed", required: true }],
 *   unresolved: { critical: 0, high: 0, medium: 0, low: 0 } }, undefined);
 * // → { admitted: false, refusals: [{ code: "backend_failed", … }] }
 * decideAdmission({ backends: [], unresolved: { critical: 0, high: 0, medium: 0, low: 0 } }, undefined);
 * // → { admitted: true, decision: "unverified" }
 * ```
 */
export function decideAdmission(summary: VerificationSummary | undefined, manual: ManualAdmission | undefined): AdmissionVerdict {
  if (manual) return { admitted: true, decision: "manual" };
  if (!summary) return { admitted: true, decision: "unverified" };
  const refusals: AdmissionRefusal[] = [];
  const required = summary.backends.filter((backend) => backend.required);
  const blocked = required.filter((backend) => backend.status === "blocked").map((backend) => backend.backend);
  if (blocked.length > 0) {
    refusals.push({ code: "backend_blocked", message: `required backend(s) ${blocked.join(", ")} could not run the verification` });
  }
  const failed = required.filter((backend) => backend.status === "failed").map((backend) => backend.backend);
  if (failed.length > 0) {
    refusals.push({ code: "backend_failed", message: `required backend(s) ${failed.join(", ")} failed the verification` });
  }
  const serious = summary.unresolved.critical + summary.unresolved.high;
  if (serious > 0) {
    refusals.push({
      code: "unresolved_failures",
      message: `${summary.unresolved.critical} critical and ${summary.unresolved.high} high failure(s) are unresolved`,
    });
  }
  if (refusals.length > 0) return { admitted: false, refusals };
  const evidenced = summary.backends.some(isEvidence) && required.every(isEvidence);
  return { admitted: true, decision: evidenced ? "verified" : "unverified" };
}

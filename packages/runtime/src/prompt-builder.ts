import { utf8Bytes, validate, type KeelError } from "@keel/core";
import type { Capsule } from "@keel/sessions";
import type { Result } from "neverthrow";
import { z } from "zod";

/** The parts of a capsule a fresh prompt is seeded with. */
export type PromptCapsule = Pick<
  Capsule,
  "repositoryMap" | "referencedPaths" | "inspectedPaths" | "decisiveOutput" | "openCheckpointItems" | "objectiveRevision"
>;

/** What {@link buildRolePrompt} builds a prompt from. */
export interface RolePromptInput {
  /** The role (e.g. `engineer`). */
  role: string;
  /** The mission id. */
  missionId: string;
  /** The session action of the turn: only a `resumed` turn sends just the new part. */
  action: "fresh" | "resumed" | "rotated";
  /** The new part: what this turn asks of the role. */
  task: string;
  /** The mission objective, or `null`. */
  objective?: string | null;
  /** The objective revision. */
  objectiveRevision?: number | string | null;
  /** The role's capsule, to seed a fresh or rotated session; `null` when there is none. */
  capsule?: PromptCapsule | null;
  /** The skill contract text (from `renderSkillContract`), or `null` when the role has no skills. */
  skillContract?: string | null;
  /**
   * Project instructions (from `renderInstructions(discoverInstructions(…).files)` of
   * `@keel/skills`), for a backend that does not load AGENTS.md and the like itself; `null` or
   * absent for one that does (pi, Claude Code, Codex read them on their own: sending them again
   * doubles the text).
   */
  instructions?: string | null;
  /** Whether to ask for the report lines the runtime reads back (default true). */
  reportFormat?: boolean;
}

/** A built prompt. */
export interface RolePrompt {
  /** The prompt text to send. */
  text: string;
  /** Its size in UTF-8 bytes. */
  bytes: number;
  /** The section headings it holds, in order (for tests and telemetry). */
  sections: string[];
}

/** The report lines a role is asked to end with; {@link readReportLines} reads them back. */
export const REPORT_FORMAT = [
  "End your answer with these lines where they apply (one item per line):",
  "Decision: <your decisive output: the plan, the change summary or the verdict>",
  "Inspected: <a path you opened>",
  "Referenced: <a path you rely on without opening>",
  "Open: <an item still open for the next checkpoint>",
  "Repository-Map: <a one-line map of the repository, if you made one>",
].join("\n");

const InputSchema = z.strictObject({
  role: z.string().min(1).max(128),
  missionId: z.string().min(1).max(128),
  action: z.enum(["fresh", "resumed", "rotated"]),
  task: z.string().min(1, "the task must not be empty"),
  objective: z.string().nullable().optional(),
  objectiveRevision: z.union([z.number(), z.string()]).nullable().optional(),
  capsule: z
    .object({
      repositoryMap: z.string().nullable(),
      referencedPaths: z.array(z.string()),
      inspectedPaths: z.array(z.string()),
      decisiveOutput: z.string().nullable(),
      openCheckpointItems: z.array(z.string()),
      objectiveRevision: z.union([z.number(), z.string()]),
    })
    .nullable()
    .optional(),
  skillContract: z.string().nullable().optional(),
  instructions: z.string().nullable().optional(),
  reportFormat: z.boolean().optional(),
});

/**
 * Builds the prompt of one role turn. Pure: the same input gives the same text.
 *
 * - A `resumed` turn continues a provider thread that already holds the objective, the role's
 *   earlier work and the skill contract, so it sends only the new part: the task.
 * - A `fresh` or `rotated` turn starts a new thread, so it sends the role and mission, the
 *   objective, where the work stands (the capsule: repository map, paths, the latest decisive
 *   output, open checkpoint items), the project instructions when given, the skill contract,
 *   the report format and the task.
 *
 * @example
 * ```ts
 * const prompt = buildRolePrompt({ role: "reviewer", missionId: "m1", action: "fresh",
 *   task: "Review the change.", objective: "Add a --json flag", capsule: null })._unsafeUnwrap();
 * ```
 */
export function buildRolePrompt(input: RolePromptInput): Result<RolePrompt, KeelError> {
  return validate(InputSchema, input, "role prompt input").map((parsed) => {
    if (parsed.action === "resumed") return { text: parsed.task, bytes: utf8Bytes(parsed.task), sections: ["Task"] };
    const parts: { heading: string; body: string }[] = [];
    const revision = parsed.objectiveRevision ?? parsed.capsule?.objectiveRevision;
    parts.push({ heading: "Role", body: `You are the ${parsed.role} of mission ${parsed.missionId}.` });
    if (parsed.objective) {
      parts.push({ heading: revision === undefined || revision === null ? "Objective" : `Objective (revision ${revision})`, body: parsed.objective });
    }
    const standing = describeCapsule(parsed.capsule ?? null);
    if (standing) parts.push({ heading: "Where the work stands", body: standing });
    if (parsed.instructions?.trim()) parts.push({ heading: "Project instructions", body: parsed.instructions.trim() });
    if (parsed.skillContract) parts.push({ heading: "Skills", body: parsed.skillContract.trim() });
    if (parsed.reportFormat !== false) parts.push({ heading: "Report", body: REPORT_FORMAT });
    parts.push({ heading: "Task", body: parsed.task });
    const text = parts.map((part) => `## ${part.heading}\n${part.body}`).join("\n\n");
    return { text, bytes: utf8Bytes(text), sections: parts.map((part) => part.heading.replace(/ \(.*\)$/, "")) };
  });
}

function describeCapsule(capsule: PromptCapsule | null): string | null {
  if (!capsule) return null;
  const lines: string[] = [];
  if (capsule.repositoryMap) lines.push(`Repository map:\n${capsule.repositoryMap}`);
  if (capsule.decisiveOutput) lines.push(`Your latest decisive output:\n${capsule.decisiveOutput}`);
  if (capsule.inspectedPaths.length > 0) lines.push(`Paths you inspected: ${capsule.inspectedPaths.join(", ")}`);
  if (capsule.referencedPaths.length > 0) lines.push(`Paths you referenced: ${capsule.referencedPaths.join(", ")}`);
  if (capsule.openCheckpointItems.length > 0) lines.push(`Open checkpoint items:\n${capsule.openCheckpointItems.map((item) => `- ${item}`).join("\n")}`);
  return lines.length > 0 ? lines.join("\n\n") : null;
}

/** What a role reported in its report lines (see {@link REPORT_FORMAT}). */
export interface ReportLines {
  decisiveOutput?: string;
  paths?: { referenced?: string[]; inspected?: string[] };
  openCheckpointItems?: string[];
  repositoryMap?: string;
}

/**
 * Reads the report lines of a role's answer (`Decision:`, `Inspected:`, `Referenced:`, `Open:`,
 * `Repository-Map:`, case-insensitive, one item per line). Pure. Fields with no line are absent,
 * so they leave the capsule as it was.
 */
export function readReportLines(text: string): ReportLines {
  const decisions: string[] = [];
  const inspected: string[] = [];
  const referenced: string[] = [];
  const open: string[] = [];
  let repositoryMap: string | undefined;
  for (const raw of text.split(/\r?\n/)) {
    const match = /^\s*(decision|inspected|referenced|open|repository-map)\s*:\s*(.+?)\s*$/i.exec(raw);
    if (!match) continue;
    const value = match[2]!;
    switch (match[1]!.toLowerCase()) {
      case "decision":
        decisions.push(value);
        break;
      case "inspected":
        inspected.push(value);
        break;
      case "referenced":
        referenced.push(value);
        break;
      case "open":
        open.push(value);
        break;
      default:
        repositoryMap = value;
    }
  }
  const report: ReportLines = {};
  if (decisions.length > 0) report.decisiveOutput = decisions.join("\n");
  if (inspected.length > 0 || referenced.length > 0) {
    report.paths = {};
    if (inspected.length > 0) report.paths.inspected = [...new Set(inspected)];
    if (referenced.length > 0) report.paths.referenced = [...new Set(referenced)];
  }
  if (open.length > 0) report.openCheckpointItems = open;
  if (repositoryMap !== undefined) report.repositoryMap = repositoryMap;
  return report;
}

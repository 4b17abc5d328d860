import { SEED_ROLES, SEED_SKILLS } from "./catalog-seed.js";
import type { DefinitionSet } from "./definition-schemas.js";

const header = (id: string, description: string) => ({ schemaVersion: 1 as const, id, version: "1.0.0", description });

/**
 * The built-in definitions: the 15 skills and 12 roles of the local-agent bridge's catalog
 * (`repository-discovery` … `maintainability-review`; `repository-explorer` … `documentation-reviewer`),
 * the skills and roles the two example workflows compose (`explore`, `plan`, `test_analysis`,
 * `diff_review`, `security_review`, `resource_review`; `explorer`, `tester`, `reviewer`, and the
 * bridge's `planner`), and the workflows `implement_issue` (explore → plan → implement checkpoint → test analysis → review →
 * final checkpoint) and `review_change` (explore → review → optional security and resource
 * reviews → decide). A project catalog may add definitions but never shadow one of these ids.
 */
export const BUILTIN_DEFINITIONS: Readonly<Required<Omit<DefinitionSet, "profiles">>> = Object.freeze({
  skills: [
    ...SEED_SKILLS,
    {
      ...header("explore", "Map the code the task touches: files, entry points, tests, risks."),
      instructions: "Read the objective and the evidence. List the files and functions involved, the tests that cover them and open questions. Report facts with paths; do not propose a change.",
    },
    {
      ...header("plan", "Turn the exploration into an ordered implementation plan."),
      instructions: "From the objective and the exploration, write a short ordered plan: each step names the files it changes and how it will be checked.",
    },
    {
      ...header("test_analysis", "Read test output and say what failed and why."),
      instructions: "Read the test output. Name each failing test, the likely cause and the file to look at. A log is evidence, not proof that the tests ran: say what it does not show.",
      needs: ["testOutput" as const],
    },
    {
      ...header("diff_review", "Review a diff for correctness against the objective."),
      instructions: "Review the diff against the objective. List defects with file and line, then a verdict: approve or request changes. Do not restate the diff.",
      needs: ["diff" as const],
    },
    {
      ...header("security_review", "Review a diff for security problems, from the original evidence only."),
      instructions: "Review the original diff for injection, path traversal, secrets, unsafe deserialization and missing authorization. Judge the diff, not another reviewer's claims.",
      needs: ["diff" as const],
    },
    {
      ...header("resource_review", "Review a diff for resource use: leaks, unbounded growth, blocking work."),
      instructions: "Review the original diff for unbounded memory or disk growth, leaked handles, missing timeouts and quadratic loops. Judge the diff, not another reviewer's claims.",
      needs: ["diff" as const],
    },
  ],
  roles: [
    ...SEED_ROLES,
    { ...header("explorer", "Reads code and reports facts."), skills: ["explore"], tier: "medium" as const, minimumStrength: 20, attempts: 2 },
    { ...header("tester", "Analyses test output."), skills: ["test_analysis"], tier: "medium" as const, minimumStrength: 20, attempts: 2 },
    {
      ...header("reviewer", "Reviews changes."),
      skills: ["diff_review", "security_review", "resource_review"],
      tier: "large" as const,
      minimumStrength: 40,
      attempts: 2,
    },
  ],
  workflows: [
    {
      ...header("implement_issue", "Explore and plan locally, the supervisor implements, then test analysis and review before the final checkpoint."),
      kind: "issue" as const,
      reviseFrom: "test_analysis",
      maxCorrections: 2,
      stages: [
        { id: "explore", kind: "local" as const, role: "explorer", skills: ["explore"] },
        { id: "plan", kind: "local" as const, role: "planner", skills: ["plan"], reads: ["explore"] },
        { id: "implement", kind: "checkpoint" as const, prompt: "Implement the plan, then accept with the diff and the test output as evidence." },
        { id: "test_analysis", kind: "local" as const, role: "tester", skills: ["test_analysis"] },
        { id: "review", kind: "local" as const, role: "reviewer", skills: ["diff_review"], reads: ["test_analysis"] },
        { id: "final", kind: "checkpoint" as const, final: true, prompt: "Accept, revise with new evidence, or reject." },
      ],
    },
    {
      ...header("review_change", "Explore and review a change, with security and resource reviews when the risk or size calls for them or the task requests them."),
      kind: "review" as const,
      reviseFrom: "explore",
      maxCorrections: 2,
      stages: [
        { id: "explore", kind: "local" as const, role: "explorer", skills: ["explore"] },
        { id: "review", kind: "local" as const, role: "reviewer", skills: ["diff_review"], reads: ["explore"] },
        {
          id: "security_review",
          kind: "local" as const,
          role: "reviewer",
          skills: ["security_review"],
          when: { risk: ["medium" as const, "high" as const], requested: "security_review" as const },
          originalEvidence: true,
        },
        {
          id: "resource_review",
          kind: "local" as const,
          role: "reviewer",
          skills: ["resource_review"],
          when: { complexity: ["large" as const], requested: "resource_review" as const },
          originalEvidence: true,
        },
        { id: "decide", kind: "checkpoint" as const, final: true, prompt: "Decide: accept, revise with new evidence, or reject." },
      ],
    },
  ],
});

import type { RoleDefinitionInput, SkillDefinitionInput } from "./definition-schemas.js";

const header = (id: string, description: string) => ({ schemaVersion: 1 as const, id, version: "1.0.0", description });

/**
 * The skills of the local-agent bridge's catalog (LocalAgentBridge v0.5): one unit of work each,
 * with the evidence it refuses to run without and the shape of its output. A project workflow
 * composes them through the roles of {@link SEED_ROLES}.
 */
export const SEED_SKILLS: readonly SkillDefinitionInput[] = Object.freeze([
  {
    ...header("repository-discovery", "Find where in the repository the task lives: files, entry points, tests, owners of the behaviour."),
    instructions:
      "From the objective, the scope and the evidence, list the files and functions the task touches, the tests that cover them and the entry points that reach them. Output: `files:` (path — why it matters), `tests:` (path — what it covers), `open questions:`. Facts with paths only; propose nothing.",
  },
  {
    ...header("context-summary", "Summarise the evidence and earlier findings into a short brief for the next stage."),
    instructions:
      "Condense the evidence and the packets you are given into at most 15 lines: what the task is, what is known (with paths), what is still unknown. Output: `known:`, `unknown:`, `risks:`. Drop repetition; add no new claims.",
  },
  {
    ...header("issue-analysis", "Read an issue or task description and state the problem, its expected behaviour and how to tell it is fixed."),
    instructions:
      "Restate the problem in two sentences, then the observed and the expected behaviour, then acceptance checks a test could verify. Output: `problem:`, `observed:`, `expected:`, `acceptance:` (one check per line). Mark every assumption as such.",
  },
  {
    ...header("implementation-planning", "Turn the findings into an ordered plan of small, checkable steps."),
    instructions:
      "Write an ordered plan. Each step names the files it changes, the change in one line and how it is checked (a test or a command). Output: numbered steps, then `out of scope:`. Keep steps small enough to review one at a time.",
  },
  {
    ...header("implementation-proposal", "Propose a concrete change for the supervisor to apply: a sketch, not a commit."),
    instructions:
      "Propose the change as a unified diff sketch or precise edits per file, with the reason for each. Output: `edits:` (path — change — reason), then `tests to add:`. The supervisor applies and verifies; say what you could not check.",
  },
  {
    ...header("code-review", "Review a diff for correctness against the objective."),
    instructions:
      "Review the diff against the objective. Output: `defects:` (file:line — what is wrong — why), `questions:`, then `verdict: approve` or `verdict: request changes`. Do not restate the diff; no style nits unless they hide a bug.",
    needs: ["diff" as const],
  },
  {
    ...header("test-failure-analysis", "Read test output and say what failed, the likely cause and where to look."),
    instructions:
      "For each failing test: its name, the assertion or error, the likely cause and the file to look at. Output: one block per failure, then `not shown:` (what the log does not prove, e.g. tests that did not run). A log is evidence, not proof that the tests ran.",
    needs: ["testOutput" as const],
  },
  {
    ...header("security-review", "Review a diff for security problems, from the original evidence only."),
    instructions:
      "Review the original diff for injection, path traversal, secrets in code or logs, unsafe deserialization, missing authorization and unchecked input at trust boundaries. Output: `findings:` (file:line — severity low|medium|high — issue — fix), then `verdict:`. Judge the diff, not another reviewer's claims.",
    needs: ["diff" as const],
  },
  {
    ...header("resource-review", "Review a diff for resource use: leaks, unbounded growth, blocking work."),
    instructions:
      "Review the original diff for unbounded memory or disk growth, leaked handles or processes, missing timeouts, retries without a bound and blocking work on a hot path. Output: `findings:` (file:line — resource — worst case — fix), then `verdict:`.",
    needs: ["diff" as const],
  },
  {
    ...header("performance-review", "Review a diff for performance regressions on the paths users hit."),
    instructions:
      "Review the diff for quadratic loops, repeated I/O, needless allocation or serialization, and work moved onto a hot path. Output: `findings:` (file:line — cost — input size it bites at — fix), `measure:` (what to benchmark), then `verdict:`. Say when a concern needs a measurement rather than a guess.",
    needs: ["diff" as const],
  },
  {
    ...header("documentation-review", "Check that docs, READMEs and API comments match the change."),
    instructions:
      "Compare the change with the docs and comments it affects. Output: `stale:` (doc path — statement now wrong — correction), `missing:` (new behaviour or option nobody documented), then `verdict:`. Quote at most one line per finding.",
  },
  {
    ...header("release-review", "Judge whether a change is ready to ship: compatibility, migration, changelog, rollback."),
    instructions:
      "Check the change for breaking public API or data-format changes, missing migration steps, missing changelog entries and how to roll it back. Output: `breaking:`, `migration:`, `changelog:`, `rollback:`, then `verdict: ship` or `verdict: hold` with the reason.",
  },
  {
    ...header("ui-ux-review", "Review a user-facing change for clarity, consistency and accessibility."),
    instructions:
      "Review what a user sees or types: messages, flags, prompts, layout, keyboard and screen-reader access, consistency with existing commands or screens. Output: `findings:` (where — problem — suggestion), then `verdict:`. Name the user affected by each finding.",
  },
  {
    ...header("architecture-review", "Review a change against the system's structure: boundaries, dependencies, one home per concept."),
    instructions:
      "Check dependency direction, module boundaries, duplicated concepts and where new state lives. Output: `findings:` (module — concern — consequence — alternative), then `verdict:`. Cite the authority documents you were given by path when a finding rests on them.",
  },
  {
    ...header("maintainability-review", "Review a change for how easy it will be to read, test and change later."),
    instructions:
      "Look for long functions, unclear names, hidden coupling, untested branches and comments that explain what instead of why. Output: `findings:` (file:line — problem — smaller fix), then `verdict:`. Prefer three concrete findings over ten vague ones.",
  },
]);

/**
 * The roles of the local-agent bridge's catalog: who does a stage's work, the skills each
 * supports, and the least each needs from a model. Only the roles a workflow's stages name run;
 * a profile enables, disables or tightens them.
 */
export const SEED_ROLES: readonly RoleDefinitionInput[] = Object.freeze([
  { ...header("repository-explorer", "Finds and summarises what the task touches; reports facts."), skills: ["repository-discovery", "context-summary"], tier: "medium" as const, minimumStrength: 20, attempts: 2 },
  { ...header("planner", "Analyses the task and plans the change."), skills: ["issue-analysis", "implementation-planning", "context-summary", "plan"], tier: "large" as const, minimumStrength: 40, attempts: 2 },
  { ...header("code-reviewer", "Reviews a diff for correctness."), skills: ["code-review"], tier: "large" as const, minimumStrength: 40, attempts: 2 },
  { ...header("test-engineer", "Reads test output and explains failures."), skills: ["test-failure-analysis"], tier: "medium" as const, minimumStrength: 20, attempts: 2 },
  { ...header("security-reviewer", "Reviews a diff for security problems on the original evidence."), skills: ["security-review"], tier: "large" as const, minimumStrength: 50, attempts: 2 },
  { ...header("product-reviewer", "Judges a change against the issue and its readiness to ship."), skills: ["issue-analysis", "release-review"], tier: "large" as const, minimumStrength: 40, attempts: 2 },
  { ...header("architect", "Reviews structure and plans changes that cross boundaries."), skills: ["architecture-review", "implementation-planning"], tier: "maximum" as const, minimumStrength: 60, attempts: 2 },
  { ...header("ux-reviewer", "Reviews what users see and type."), skills: ["ui-ux-review"], tier: "medium" as const, minimumStrength: 30, attempts: 2 },
  { ...header("maintainability-reviewer", "Reviews how easy the change is to read, test and change."), skills: ["maintainability-review"], tier: "medium" as const, minimumStrength: 30, attempts: 2 },
  { ...header("performance-reviewer", "Reviews a diff for performance and resource use."), skills: ["performance-review", "resource-review"], tier: "large" as const, minimumStrength: 40, attempts: 2 },
  { ...header("implementation-advisor", "Proposes concrete edits for the supervisor to apply."), skills: ["implementation-proposal", "implementation-planning"], tier: "large" as const, minimumStrength: 50, attempts: 2 },
  { ...header("documentation-reviewer", "Checks docs and comments against the change."), skills: ["documentation-review"], tier: "medium" as const, minimumStrength: 20, attempts: 2 },
]);

import type { RoleTask } from "./sessions-scripted-provider.js";

/** The roles of the scripted mission. */
export const ROLES = ["planner", "engineer", "reviewer"] as const;

/** One role's work in round `round` (1-based) of the scripted mission. */
export function taskFor(role: (typeof ROLES)[number], round: number): RoleTask {
  switch (role) {
    case "planner": {
      // A large survey each round, so the planner's thread grows fast in input tokens.
      const survey = (k: number) => `survey ${k}: ${"module notes and call graph; ".repeat(1_800)}`;
      return {
        full: Array.from({ length: round }, (_, index) => survey(index + 1)).join("\n"),
        delta: survey(round),
        respond: (context) => `plan: ${(context.match(/survey \d+:/g) ?? []).length} surveys read; next change-${round}`,
        paths: [`docs/survey-${round}.md`],
      };
    }
    case "engineer":
      return {
        full: Array.from({ length: round }, (_, index) => `implement change-${index + 1}`).join("\n"),
        delta: `implement change-${round}`,
        respond: () => `implemented change-${round}`,
        paths: [`src/change-${round}.ts`],
      };
    case "reviewer": {
      const diff = (k: number) => `change-${k}: ${"+ added line with tests; ".repeat(80)}`;
      return {
        full: Array.from({ length: round }, (_, index) => diff(index + 1)).join("\n"),
        delta: diff(round),
        // The verdict depends on which changes the reviewer can see: all of them, or not.
        respond: (context) => {
          const seen = new Set((context.match(/change-\d+/g) ?? []).map((name) => Number(name.slice("change-".length))));
          const missing = Array.from({ length: round }, (_, index) => index + 1).filter((k) => !seen.has(k));
          return missing.length === 0
            ? `verdict: approve; reviewed ${Array.from({ length: round }, (_, index) => `change-${index + 1}`).join(", ")}`
            : `verdict: request_changes; not seen ${missing.map((k) => `change-${k}`).join(", ")}`;
        },
      };
    }
  }
}

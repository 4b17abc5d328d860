import type { ScriptedReply, ScriptedTurn } from "@keel/backends/scripted";

/**
 * The demo's scripted mission: a small repository, a step per round, and role answers computed
 * from what each role is shown — so that the same mission replayed under each policy is a fair
 * comparison. Pure: no I/O here.
 */

/** The files of the demo repository (written into the demo directory's `workspace/`). */
export const DEMO_REPOSITORY: Readonly<Record<string, string>> = Object.freeze({
  "README.md": "# todo\n\nA tiny todo list CLI. `todo list` prints the open items.\n",
  "src/cli.ts": 'import { list } from "./list.js";\n\nexport function main(argv: string[]): string {\n  if (argv[0] === "list") return list(argv.slice(1));\n  return "usage: todo list";\n}\n',
  "src/list.ts": 'import { formatRows } from "./format.js";\n\nexport function list(args: string[]): string {\n  return formatRows(load(), args);\n}\n\nfunction load() {\n  return [{ id: 1, title: "write docs", done: false }];\n}\n',
  "src/format.ts": "export function formatRows(rows: { id: number; title: string }[], _args: string[]): string {\n  return rows.map((row) => `${row.id}  ${row.title}`).join(\"\\n\");\n}\n",
  "src/store.ts": "export const FILE = \".todo.json\";\n",
  "test/list.test.ts": 'import { list } from "../src/list.js";\n\ntest("lists", () => expect(list([])).toContain("write docs"));\n',
  "docs/usage.md": "# Usage\n\n`todo list` — print the open items.\n",
});

/** The mission objective. */
export const DEMO_OBJECTIVE = "Add a --json flag to `todo list` that prints the open items as a JSON array, with tests and docs.";

/** One step of the mission: what the engineer changes in that round. */
export interface DemoStep {
  title: string;
  files: readonly string[];
  /** Whether the change comes with tests; the reviewer asks for them when it does not. */
  tested: boolean;
}

const STEPS: readonly DemoStep[] = [
  { title: "parse the --json flag in the CLI", files: ["src/cli.ts", "src/list.ts"], tested: true },
  { title: "format rows as a JSON array", files: ["src/format.ts"], tested: false },
  { title: "add tests for the JSON output", files: ["test/list.test.ts", "src/format.ts"], tested: true },
  { title: "document --json in the usage guide", files: ["docs/usage.md", "README.md"], tested: true },
  { title: "keep ids stable in the JSON output", files: ["src/store.ts", "src/list.ts"], tested: true },
  { title: "handle an empty list in JSON mode", files: ["src/format.ts", "src/list.ts"], tested: false },
  { title: "cover the empty list with a test", files: ["test/list.test.ts"], tested: true },
  { title: "mention --json in the README", files: ["README.md"], tested: true },
];

/** The step of round `round` (1-based; the list repeats past its end). */
export function demoStep(round: number): DemoStep {
  return STEPS[(round - 1) % STEPS.length]!;
}

/** The roles of the demo, in round order. */
export const DEMO_ROLES = ["planner", "engineer", "reviewer"] as const;

/** A demo role. */
export type DemoRole = (typeof DEMO_ROLES)[number];

/** The task of a role in a round (the new part of its prompt); tagged with the role so the script knows who speaks. */
export function demoTask(role: DemoRole, round: number, shown: string): string {
  const step = demoStep(round);
  switch (role) {
    case "planner":
      return `[planner] Round ${round}: plan the next step towards the objective. Candidate step: ${step.title}.`;
    case "engineer":
      return `[engineer] Round ${round}: implement the planned step.\nPlan:\n${shown}`;
    default:
      return `[reviewer] Round ${round}: review the change below against the objective. Approve only a tested change.\nChange:\n${shown}`;
  }
}

/** The files a role must have seen to answer a round. */
function neededFiles(role: DemoRole, step: DemoStep): string[] {
  if (role === "planner") return ["README.md", "src/cli.ts", "docs/usage.md"];
  if (role === "engineer") return ["src/cli.ts", ...step.files];
  return [...step.files];
}

/** Paths the provider already saw in this thread, or that the prompt says were inspected (a capsule seed). */
function knownFiles(turn: ScriptedTurn): Set<string> {
  const known = new Set<string>();
  const texts = [turn.prompt, ...turn.history.flatMap((exchange) => [exchange.prompt, exchange.text])];
  for (const text of texts) {
    for (const match of text.matchAll(/^Inspected: (.+)$/gm)) known.add(match[1]!.trim());
    const seeded = /^Paths you inspected: (.+)$/m.exec(text);
    if (seeded) for (const path of seeded[1]!.split(",")) known.add(path.trim());
  }
  return known;
}

/**
 * The role, round and files to read of the demo task in `prompt` (the last `[role] Round N:` in
 * it), or `undefined` when it holds none: what a fake model provider answering for a real CLI
 * needs to script its reads.
 */
export function demoTaskOf(prompt: string): { role: DemoRole; round: number; files: string[]; prompt: string } | undefined {
  const matches = [...prompt.matchAll(/\[(planner|engineer|reviewer)\] Round (\d+):/g)];
  const last = matches.at(-1);
  if (!last) return undefined;
  const role = last[1] as DemoRole;
  const round = Number(last[2]);
  const files = neededFiles(role, demoStep(round)).filter((path, index, all) => all.indexOf(path) === index);
  return { role, round, files, prompt: prompt.slice(last.index) };
}

/** Reads `[role] Round N` from a task. */
function parseTask(prompt: string): { role: DemoRole; round: number } | undefined {
  const match = /\[(planner|engineer|reviewer)\] Round (\d+):/.exec(prompt);
  return match ? { role: match[1] as DemoRole, round: Number(match[2]) } : undefined;
}

/**
 * The scripted provider's answer to one demo turn. Each role opens the files it needs that its
 * thread has not seen (a fresh thread re-reads; a resumed or capsule-seeded one does not), and
 * the reviewer's verdict is computed from the change it is shown: approve a tested change,
 * request changes otherwise.
 */
export function demoRespond(turn: ScriptedTurn): ScriptedReply {
  const task = parseTask(turn.prompt);
  if (!task) return { text: "I did not understand the task.\nDecision: none" };
  const step = demoStep(task.round);
  const known = knownFiles(turn);
  const reads = neededFiles(task.role, step).filter((path, index, all) => all.indexOf(path) === index && !known.has(path));
  const inspected = reads.map((path) => `Inspected: ${path}`);
  if (task.role === "planner") {
    return {
      text: [
        `Next step: ${step.title}.`,
        `Decision: step ${task.round} — ${step.title}`,
        "Repository-Map: src/ (cli.ts entry, list.ts command, format.ts output, store.ts data), test/, docs/",
        `Open: ${step.title}`,
        ...inspected,
      ].join("\n"),
    };
  }
  if (task.role === "engineer") {
    const diff = [
      `Diff (step ${task.round}): ${step.title}`,
      ...step.files.map((path) => `  M ${path}`),
      step.tested ? "  tests: updated" : "  tests: none",
    ];
    return { text: [...diff, `Decision: changed ${step.files.join(", ")} for ${step.title}`, ...step.files.map((path) => `Referenced: ${path}`), ...inspected].join("\n") };
  }
  const change = /Change:\n([\s\S]*)$/.exec(turn.prompt)?.[1] ?? "";
  const tested = /tests: updated/.test(change);
  const verdict = tested ? "APPROVE" : "REQUEST_CHANGES";
  return {
    text: [
      tested ? "The change is covered by tests." : "The change has no tests; add them before merging.",
      `Verdict: ${verdict}`,
      `Decision: ${verdict.toLowerCase()} step ${task.round}`,
      ...(tested ? [] : [`Open: tests for ${step.title}`]),
      ...inspected,
    ].join("\n"),
  };
}

/** The block of an engineer's answer the reviewer is shown (its diff lines). */
export function demoChangeOf(engineerText: string): string {
  const lines = engineerText.split("\n").filter((line) => line.startsWith("Diff") || line.startsWith("  "));
  return lines.length > 0 ? lines.join("\n") : engineerText;
}

/** The planner's decision line, which the engineer is shown. */
export function demoPlanOf(plannerText: string): string {
  return /^Decision: (.+)$/m.exec(plannerText)?.[1] ?? plannerText;
}

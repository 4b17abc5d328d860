import type { LazyCliCommand } from "../cli-command.js";

/**
 * Every `keel` subcommand, in the order `keel --help` lists them: a name, a summary and a loader.
 * No command module is imported here, so `keel --help` and `keel --version` load none, and a
 * command whose dependencies fail to load breaks only itself.
 */
export const COMMANDS: readonly LazyCliCommand[] = [
  { name: "demo", summary: "replay one scripted mission under each session policy and compare them", load: async () => (await import("./demo.js")).demoCommand },
  { name: "inspect", summary: "show the missions, capsules, handoffs, budgets and logs of a store", load: async () => (await import("./inspect.js")).inspectCommand },
  { name: "report", summary: "compare session policies from an events.jsonl file (text, --json or --html)", load: async () => (await import("./report.js")).reportCommand },
  { name: "skills", summary: "show the skills a role sees: ordered roots, OWN and REFERENCE skills, diagnostics", load: async () => (await import("./skills.js")).skillsCommand },
  { name: "doctor", summary: "check Node.js, the store directory and which agent CLIs are installed and resume", load: async () => (await import("./doctor.js")).doctorCommand },
  { name: "store", summary: "copy a store into another (a directory, sqlite:<file>, postgres://…)", load: async () => (await import("./store.js")).storeCommand },
  {
    name: "workflow",
    summary: "drive a staged workflow: catalog, plan, start, step, checkpoint, status (JSON in, JSON out)",
    load: async () => (await import("./workflow.js")).workflowCommand,
  },
  { name: "mcp", summary: "serve the workflow, role-session, skills and handoff tools over MCP (stdio)", load: async () => (await import("./mcp.js")).mcpCommand },
];

import path from "node:path";
import { serveStdio } from "@keel/mcp";
import type { SkillLayer } from "@keel/skills";
import { CliUsageError, type CliCommand } from "../cli-command.js";
import { openStoreOption, readHostConfig, stringOption } from "./workflow.js";

const HELP = `keel mcp — serve Keel's tools to an agent over MCP (stdio)

Usage: keel mcp --config <file.json> [--store <url>] [--catalog <dir>]
                [--skills-project <dir>] [--skills-domain <dir>] [--skills-global <dir>]

Options:
  --config <file>          the host config JSON: models, executor, limits, sourceRoot (the
                           same file keel workflow takes)
  --store <url>            the store runs, role sessions and handoffs live in: a directory
                           (default .keel), sqlite:<file> or postgres://…[?schema=<name>]
  --catalog <dir>          a project catalog directory, added to the built-in definitions
  --skills-project <dir>   a skill layer for skills_resolve (highest precedence)
  --skills-domain <dir>    a skill layer for skills_resolve
  --skills-global <dir>    a skill layer for skills_resolve (lowest precedence)
  -h, --help

Tools: workflow_catalog, workflow_plan, workflow_start, workflow_step, workflow_checkpoint,
workflow_status (the same JSON as keel workflow), role_session_status, skills_resolve,
handoff_write. A refused call is a tool error (isError) whose text is
{ "error": { "code", "message", "whatToDo", "retryable", "details" } }.

Speaks JSON-RPC on stdin and stdout until stdin ends; nothing else is written to stdout.

Exit codes: 0 the client closed the connection; 1 the server failed; 2 bad usage (unknown
option, no --config, unreadable or invalid config, bad store URL).

Example (an MCP config, e.g. .mcp.json of Claude Code):
  { "mcpServers": { "keel": { "command": "keel", "args": ["mcp", "--config", "keel-workflow.json", "--store", ".keel"] } } }
`;

const LAYERS = [
  ["skills-project", "project"],
  ["skills-domain", "domain"],
  ["skills-global", "global"],
] as const;

/** `keel mcp`: the Keel MCP server on stdio over the store of `--store` (a directory, sqlite: or postgres:). */
export const mcpCommand: CliCommand = {
  name: "mcp",
  summary: "serve the workflow, role-session, skills and handoff tools over MCP (stdio)",
  help: HELP,
  options: {
    config: { type: "string" },
    store: { type: "string" },
    catalog: { type: "string" },
    "skills-project": { type: "string" },
    "skills-domain": { type: "string" },
    "skills-global": { type: "string" },
  },
  allowPositionals: false,
  run: async (args, io) => {
    const configFile = stringOption(args, "config");
    if (configFile === undefined) throw new CliUsageError("mcp needs --config <file.json> (models and executor)");
    const config = await readHostConfig(configFile, io);
    const skillLayers: SkillLayer[] = [];
    for (const [option, name] of LAYERS) {
      const dir = stringOption(args, option);
      if (dir !== undefined) skillLayers.push({ name, dir: path.resolve(io.cwd, dir) });
    }
    const catalogDir = stringOption(args, "catalog");
    const store = await openStoreOption(args, io);
    try {
      await serveStdio({ store, config: config as never, cwd: io.cwd, skillLayers, ...(catalogDir === undefined ? {} : { catalogDir }) });
      return 0;
    } finally {
      await store.close();
    }
  },
};

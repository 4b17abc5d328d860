import type { CliCommand } from "../cli-command.js";
import { demoCommand } from "./demo.js";
import { doctorCommand } from "./doctor.js";
import { inspectCommand } from "./inspect.js";
import { mcpCommand } from "./mcp.js";
import { reportCommand } from "./report.js";
import { skillsCommand } from "./skills.js";
import { storeCommand } from "./store.js";

import { workflowCommand } from "./workflow.js";

/** Every `keel` subcommand, in the order `keel --help` lists them. */
export const COMMANDS: readonly CliCommand[] = [demoCommand, inspectCommand, reportCommand, skillsCommand, doctorCommand, storeCommand, workflowCommand, mcpCommand];

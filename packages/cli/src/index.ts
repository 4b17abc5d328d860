export { KEEL_CLI_VERSION, runCli } from "./cli-main.js";
export { paint, processIo } from "./cli-io.js";
export type { CliIo } from "./cli-io.js";
export { CliUsageError } from "./cli-command.js";
export type { CliCommand, CommandArgs } from "./cli-command.js";
export { COMMANDS } from "./commands/index.js";

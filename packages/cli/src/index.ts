export { KEEL_CLI_VERSION, runCli } from "./cli-main.js";
export { colorEnabled, paint, processIo } from "./cli-io.js";
export type { CliIo } from "./cli-io.js";
export { CliUsageError } from "./cli-command.js";
export type { CliCommand, CommandArgs, LazyCliCommand } from "./cli-command.js";
export { COMMANDS } from "./commands/index.js";
export { openStoreForReading } from "./store-url-deprecated.js";
export { copyStore } from "./store-copy.js";
export type { StoreCopyOptions, StoreCopyReport } from "./store-copy.js";

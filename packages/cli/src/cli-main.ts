import { parseArgs } from "node:util";
import { KeelError } from "@keel/core";
import { CliUsageError, type CliCommand } from "./cli-command.js";
import { paint, type CliIo } from "./cli-io.js";
import { COMMANDS } from "./commands/index.js";

/** The version `keel --version` prints. */
export const KEEL_CLI_VERSION = "0.1.0";

function mainHelp(commands: readonly CliCommand[]): string {
  const width = Math.max(...commands.map((command) => command.name.length));
  return [
    "keel — durable, bounded, resumable working state for agent runtimes",
    "",
    "Usage: keel <command> [options]",
    "",
    "Commands:",
    ...commands.map((command) => `  ${command.name.padEnd(width)}  ${command.summary}`),
    "",
    "Run `keel <command> --help` for a command's options. NO_COLOR turns colour off.",
    "",
  ].join("\n");
}

/**
 * Runs the `keel` command line (`argv` without the node and script paths) and resolves the exit
 * code: 0 success, 1 a failure, 2 bad arguments. Expected errors are printed as one line, never
 * as a stack trace.
 */
export async function runCli(argv: readonly string[], io: CliIo, commands: readonly CliCommand[] = COMMANDS): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === "--help" || name === "-h" || name === "help") {
    io.stdout(mainHelp(commands));
    return name === undefined ? 2 : 0;
  }
  if (name === "--version" || name === "-v") {
    io.stdout(`${KEEL_CLI_VERSION}\n`);
    return 0;
  }
  const command = commands.find((candidate) => candidate.name === name);
  if (!command) {
    io.stderr(`${paint(io, "red", "error")}: unknown command "${name}"; run \`keel --help\` for the commands\n`);
    return 2;
  }
  try {
    const parsed = parseArgs({
      args: [...rest],
      options: { ...command.options, help: { type: "boolean", short: "h" } },
      allowPositionals: command.allowPositionals,
      strict: true,
    });
    if (parsed.values.help) {
      const help = command.helpFor?.(parsed.positionals) ?? command.help;
      io.stdout(help.endsWith("\n") ? help : `${help}\n`);
      return 0;
    }
    return await command.run({ values: parsed.values, positionals: parsed.positionals }, io);
  } catch (error) {
    if (error instanceof CliUsageError || (error as { code?: string }).code?.startsWith("ERR_PARSE_ARGS")) {
      io.stderr(`${paint(io, "red", "error")}: ${(error as Error).message}\nRun \`keel ${command.name} --help\` for its options.\n`);
      return 2;
    }
    if (KeelError.is(error)) {
      io.stderr(`${paint(io, "red", "error")} (${error.code}): ${error.message}\n`);
      return error.code === "invalid_input" ? 2 : 1;
    }
    throw error;
  }
}

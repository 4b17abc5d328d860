import type { ParseArgsConfig } from "node:util";
import type { CliIo } from "./cli-io.js";

/** The parsed arguments a command receives. */
export interface CommandArgs {
  values: Record<string, string | boolean | string[] | boolean[] | undefined>;
  positionals: string[];
}

/** One `keel` subcommand. */
export interface CliCommand {
  /** The subcommand name (`demo`, `inspect`, …). */
  name: string;
  /** One line for `keel --help`. */
  summary: string;
  /** The full help text (`keel <name> --help`). */
  help: string;
  /** The help of a subcommand (`keel <name> <sub> --help`), when the command has subcommands. */
  helpFor?(positionals: readonly string[]): string;
  /** Its options, in `node:util` `parseArgs` form (`--help` is added for every command). */
  options: NonNullable<ParseArgsConfig["options"]>;
  /** Whether it takes positional arguments. */
  allowPositionals: boolean;
  /** Runs it; resolves the exit code (0 ok, 1 failure, 2 bad arguments). */
  run(args: CommandArgs, io: CliIo): Promise<number>;
}

/** A bad command line: printed without a stack trace, exit code 2. */
export class CliUsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "CliUsageError";
  }
}

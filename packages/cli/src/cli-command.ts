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
  /**
   * The full help text (`keel <name> --help`): a title line (`keel <name> — …`), `Usage:`,
   * `Options:` (with `-h, --help`), what it does, `Exit codes:` and `Example:`.
   */
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

/**
 * A subcommand known by name and summary, whose module is imported only when it runs (or its
 * help is asked for): `keel --help` and `keel --version` load no command, and a command whose
 * dependencies are broken breaks only itself.
 */
export interface LazyCliCommand {
  /** The subcommand name. */
  name: string;
  /** One line for `keel --help` (the loaded command's own `summary` says the same). */
  summary: string;
  /** Imports the command's module and answers the command. */
  load(): Promise<CliCommand>;
}

/** A bad command line: printed without a stack trace, exit code 2. */
export class CliUsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "CliUsageError";
  }
}

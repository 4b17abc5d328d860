import { readFileSync } from "node:fs";
import { parseCommandLine, closest } from "./cli-args.js";
import { CliUsageError, type CliCommand, type LazyCliCommand } from "./cli-command.js";
import { paint, type CliIo } from "./cli-io.js";
import { COMMANDS } from "./commands/index.js";

/** Reads `@keel/cli`'s package.json beside `src/` or `dist/`; `unknown` where a bundler moved this file away from it. */
function packageVersion(): string {
  try {
    const { version } = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { version?: unknown };
    return typeof version === "string" ? version : "unknown";
  } catch {
    return "unknown";
  }
}

/** The version `keel --version` prints: the `version` of `@keel/cli`'s package.json. */
export const KEEL_CLI_VERSION: string = packageVersion();

function mainHelp(commands: readonly (CliCommand | LazyCliCommand)[]): string {
  const width = Math.max(...commands.map((command) => command.name.length));
  return [
    "keel — durable, bounded, resumable working state for agent runtimes",
    "",
    "Usage: keel <command> [options]",
    "",
    "Commands:",
    ...commands.map((command) => `  ${command.name.padEnd(width)}  ${command.summary}`),
    "",
    "Options:",
    "  -h, --help     this help; `keel <command> --help` for a command's own",
    "  -v, --version  the version of keel",
    "",
    "Colour is used on a terminal only. NO_COLOR=1 or TERM=dumb turns it off; FORCE_COLOR=1 turns",
    "it on (even into a pipe) and FORCE_COLOR=0 off, over the other two.",
    "",
    "Exit codes: 0 done, 1 failed (one line `error (<code>): …` on stderr), 2 bad arguments.",
    "",
    "Example:",
    "  keel demo --rounds 4",
    "  keel inspect .keel-demo/store",
    "",
  ].join("\n");
}

function usageError(io: CliIo, message: string, hint: string): number {
  io.stderr(`${paint(io, "red", "error")}: ${message}\n${hint}\n`);
  return 2;
}

async function loadCommand(entry: CliCommand | LazyCliCommand): Promise<CliCommand> {
  return "load" in entry ? entry.load() : entry;
}

/**
 * Runs the `keel` command line (`argv` without the node and script paths) and resolves the exit
 * code: 0 success, 1 a failure, 2 bad arguments. Expected errors are printed as one line, never
 * as a stack trace. A command's module is imported only when that command runs or shows its
 * help; one that cannot be loaded fails with exit code 1 and leaves the others working (one
 * that needs an optional peer that is not installed names the package to install).
 */
export async function runCli(argv: readonly string[], io: CliIo, commands: readonly (CliCommand | LazyCliCommand)[] = COMMANDS): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === "--help" || name === "-h" || name === "help") {
    if (name === "help" && rest[0] !== undefined) return runCli([rest[0], "--help"], io, commands);
    io.stdout(mainHelp(commands));
    return name === undefined ? 2 : 0;
  }
  if (name === "--version" || name === "-v") {
    io.stdout(`${KEEL_CLI_VERSION}\n`);
    return 0;
  }
  const entry = commands.find((candidate) => candidate.name === name);
  if (!entry) {
    const guess = name.startsWith("-") ? undefined : closest(name, commands.map((command) => command.name));
    const what = name.startsWith("-") ? `unknown option ${name}` : `unknown command "${name}"`;
    return usageError(io, `${what}${guess ? ` (did you mean ${guess}?)` : ""}`, "Run `keel --help` for the commands.");
  }
  let command: CliCommand;
  try {
    command = await loadCommand(entry);
  } catch (error) {
    const { missingOptionalPeer, optionalPeerInstall } = await import("./internal/optional-peers.js");
    const peer = missingOptionalPeer(error);
    if (peer !== undefined) {
      io.stderr(`${paint(io, "red", "error")} (unavailable): keel ${name} needs ${peer}, an optional peer of @keel/cli that is not installed: ${optionalPeerInstall(peer)}\n`);
      return 1;
    }
    const message = error instanceof Error ? error.message : String(error);
    io.stderr(`${paint(io, "red", "error")} (unavailable): keel ${name} cannot be loaded: ${message.split("\n")[0]}\nThe other commands still work; reinstalling @keel/cli may mend this one.\n`);
    return 1;
  }
  try {
    const parsed = parseCommandLine(command.name, rest, { ...command.options, help: { type: "boolean", short: "h" } }, command.allowPositionals);
    if (parsed.help) {
      const help = command.helpFor?.(parsed.positionals) ?? command.help;
      io.stdout(help.endsWith("\n") ? help : `${help}\n`);
      return 0;
    }
    return await command.run({ values: parsed.values, positionals: parsed.positionals }, io);
  } catch (error) {
    if (error instanceof CliUsageError) return usageError(io, error.message, `Run \`keel ${command.name} --help\` for its options.`);
    const { KeelError } = await import("@keel/core");
    if (KeelError.is(error)) {
      io.stderr(`${paint(io, "red", "error")} (${error.code}): ${error.message}\n`);
      return error.code === "invalid_input" ? 2 : 1;
    }
    throw error;
  }
}

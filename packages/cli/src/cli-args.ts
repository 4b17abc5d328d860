import { parseArgs, type ParseArgsConfig } from "node:util";
import { CliUsageError, type CommandArgs } from "./cli-command.js";

type Options = NonNullable<ParseArgsConfig["options"]>;

/** The closest of `candidates` to `word` (edit distance at most 2, or a prefix), for "did you mean". */
export function closest(word: string, candidates: readonly string[]): string | undefined {
  let best: { candidate: string; distance: number } | undefined;
  for (const candidate of candidates) {
    const distance = candidate.startsWith(word) && word.length >= 2 ? 1 : editDistance(word, candidate);
    if (distance <= 2 && (!best || distance < best.distance)) best = { candidate, distance };
  }
  return best?.candidate;
}

function editDistance(left: string, right: string): number {
  let previous = Array.from({ length: right.length + 1 }, (_, index) => index);
  for (let i = 1; i <= left.length; i++) {
    const current = [i];
    for (let j = 1; j <= right.length; j++) {
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (left[i - 1] === right[j - 1] ? 0 : 1));
    }
    previous = current;
  }
  return previous[right.length]!;
}

/** What {@link parseCommandLine} found: the arguments, or that help was asked for. */
export type ParsedCommandLine = { help: true; positionals: string[] } | ({ help: false } & CommandArgs);

/**
 * Parses a subcommand's arguments against its options, with Keel's own wording for every
 * mistake (a {@link CliUsageError}): an unknown option (with the closest known one), an option
 * missing its value or given one it does not take, a value that looks like an option, an
 * argument to a command that takes none. `-h`/`--help` anywhere asks for help.
 */
export function parseCommandLine(command: string, argv: readonly string[], options: Options, allowPositionals: boolean): ParsedCommandLine {
  const { tokens } = parseArgs({ args: [...argv], options, strict: false, allowPositionals: true, tokens: true });
  const positionals = tokens.flatMap((token) => (token.kind === "positional" ? [token.value] : []));
  if (tokens.some((token) => token.kind === "option" && (token.name === "help" || token.rawName === "-h"))) return { help: true, positionals };
  const values: CommandArgs["values"] = {};
  const known = Object.keys(options).map((name) => `--${name}`);
  for (const token of tokens) {
    if (token.kind === "positional") {
      if (!allowPositionals) throw new CliUsageError(`keel ${command} takes no arguments, got "${token.value}"`);
      continue;
    }
    if (token.kind !== "option") continue;
    const option = options[token.name];
    if (option === undefined || (token.rawName.startsWith("-") && !token.rawName.startsWith("--") && option.short !== token.rawName.slice(1))) {
      const guess = closest(token.rawName, known);
      throw new CliUsageError(`unknown option ${token.rawName} for keel ${command}${guess ? ` (did you mean ${guess}?)` : ""}`);
    }
    if (option.type === "boolean") {
      if (token.inlineValue) throw new CliUsageError(`${token.rawName} takes no value, got "${token.value ?? ""}"`);
      setValue(values, token.name, true, option.multiple === true);
      continue;
    }
    if (token.value === undefined) throw new CliUsageError(`${token.rawName} needs a value`);
    if (!token.inlineValue && token.value.startsWith("-") && token.value !== "-") {
      throw new CliUsageError(`${token.rawName} needs a value, got the option ${token.value} (write ${token.rawName}=${token.value} if that is the value)`);
    }
    setValue(values, token.name, token.value, option.multiple === true);
  }
  return { help: false, values, positionals };
}

function setValue(values: CommandArgs["values"], name: string, value: string | boolean, multiple: boolean): void {
  if (!multiple) {
    values[name] = value;
    return;
  }
  const list = (values[name] as (string | boolean)[] | undefined) ?? [];
  values[name] = [...list, value] as string[] | boolean[];
}

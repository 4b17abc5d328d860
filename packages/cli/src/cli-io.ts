/** Where a command writes, and how. Tests pass their own; the `keel` binary passes the process's. */
export interface CliIo {
  /** Writes to standard output (the text is written as is: add your own newline). */
  stdout(text: string): void;
  /** Writes to standard error. */
  stderr(text: string): void;
  /** Whether to colour output (see {@link colorEnabled}). */
  color: boolean;
  /** The working directory relative paths are resolved against. */
  cwd: string;
  /** The environment (read-only). */
  env: Readonly<Record<string, string | undefined>>;
}

/**
 * Whether `keel` colours its output, from the environment and whether standard output is a
 * terminal. In order: `FORCE_COLOR` set and not empty forces colour on (even into a pipe), unless
 * it is `0` or `false`, which turns it off (<https://force-color.org>); `NO_COLOR` set and not
 * empty turns it off (<https://no-color.org>); `TERM=dumb` turns it off; otherwise colour is on
 * only on a terminal. An empty variable counts as unset.
 */
export function colorEnabled(env: Readonly<Record<string, string | undefined>>, isTerminal: boolean): boolean {
  const force = env["FORCE_COLOR"];
  if (force !== undefined && force !== "") return force !== "0" && force.toLowerCase() !== "false";
  const noColor = env["NO_COLOR"];
  if (noColor !== undefined && noColor !== "") return false;
  if (env["TERM"] === "dumb") return false;
  return isTerminal;
}

/** The io of the running process, coloured as {@link colorEnabled} decides for its stdout. */
export function processIo(): CliIo {
  return {
    stdout: (text) => void process.stdout.write(text),
    stderr: (text) => void process.stderr.write(text),
    color: colorEnabled(process.env, process.stdout.isTTY === true),
    cwd: process.cwd(),
    env: process.env,
  };
}

/** Wraps text in an ANSI style when colour is on. */
export function paint(io: Pick<CliIo, "color">, style: "bold" | "dim" | "red" | "green" | "yellow" | "cyan", text: string): string {
  if (!io.color) return text;
  const codes = { bold: [1, 22], dim: [2, 22], red: [31, 39], green: [32, 39], yellow: [33, 39], cyan: [36, 39] } as const;
  const [open, close] = codes[style];
  return `\u001b[${open}m${text}\u001b[${close}m`;
}

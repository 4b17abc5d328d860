/** Where a command writes, and how. Tests pass their own; the `keel` binary passes the process's. */
export interface CliIo {
  /** Writes to standard output (the text is written as is: add your own newline). */
  stdout(text: string): void;
  /** Writes to standard error. */
  stderr(text: string): void;
  /** Whether to colour output (false when `NO_COLOR` is set or stdout is not a terminal). */
  color: boolean;
  /** The working directory relative paths are resolved against. */
  cwd: string;
  /** The environment (read-only). */
  env: Readonly<Record<string, string | undefined>>;
}

/** The io of the running process: colour only on a terminal and without `NO_COLOR`. */
export function processIo(): CliIo {
  const noColor = process.env.NO_COLOR !== undefined && process.env.NO_COLOR !== "";
  return {
    stdout: (text) => void process.stdout.write(text),
    stderr: (text) => void process.stderr.write(text),
    color: !noColor && process.stdout.isTTY === true,
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

/**
 * Reads the output of `strace -f -tt -y -xx -o <file>`: one record per finished system call, in
 * the order the calls finished, with the position where each one started (a call of another
 * thread may finish between the start and the end of a call: `<unfinished ...>` and
 * `<... resumed>` lines are joined here).
 *
 * With `-xx` every string (data and paths) is hex-escaped (`"\x7b\x0a"`), and with `-y` every
 * file descriptor carries its path (`19<\x2f\x74…>`), so that the bytes of a write and the file
 * it went to can be rebuilt exactly.
 */

/** One finished system call. */
export interface Syscall {
  /** The thread that made it. */
  pid: number;
  name: string;
  /** The arguments as printed, split at the top-level commas. */
  args: string[];
  /** The return value (`-1` for a failure, with {@link Syscall.errno}). */
  result: number;
  /** The path of a returned file descriptor (`openat` with `-y`). */
  resultPath: string | undefined;
  errno: string | undefined;
  /** The position (line number) where the call started. */
  start: number;
  /** The position where it finished: the order of the list. */
  end: number;
}

const LINE = /^(\d+)\s+(?:\d{2}:\d{2}:\d{2}\.\d+\s+)?(.*)$/;
const RESUMED = /^<\.\.\. (\w+) resumed>(.*)$/;
const UNFINISHED = " <unfinished ...>";

/** Parses a whole strace output (see the module comment); lines it does not know are skipped. */
export function parseStrace(text: string): Syscall[] {
  const calls: Syscall[] = [];
  const pending = new Map<number, { text: string; start: number }>();
  const lines = text.split("\n");
  lines.forEach((line, position) => {
    const match = LINE.exec(line);
    if (!match) return;
    const pid = Number(match[1]);
    let body = match[2]!;
    let start = position;
    const resumed = RESUMED.exec(body);
    if (resumed) {
      const begun = pending.get(pid);
      if (!begun) return;
      pending.delete(pid);
      body = begun.text + resumed[2]!;
      start = begun.start;
    }
    if (body.endsWith(UNFINISHED)) {
      pending.set(pid, { text: body.slice(0, -UNFINISHED.length), start: position });
      return;
    }
    const call = parseCall(body);
    if (call) calls.push({ pid, ...call, start, end: position });
  });
  return calls;
}

/** Parses `name(args) = result` (the body of one complete line); `undefined` for signals, exits and the like. */
export function parseCall(body: string): Omit<Syscall, "pid" | "start" | "end"> | undefined {
  const open = body.indexOf("(");
  const close = body.lastIndexOf(") = ");
  if (open <= 0 || close < open || !/^\w+$/.test(body.slice(0, open))) return undefined;
  const name = body.slice(0, open);
  const args = splitArgs(body.slice(open + 1, close));
  const returned = body.slice(close + 4).trim();
  const value = /^(-?\d+)(?:<(.*)>)?(?:\s+(\w+))?/.exec(returned);
  if (!value) return undefined;
  const result = Number(value[1]);
  return { name, args, result, resultPath: value[2] === undefined ? undefined : decodeHex(value[2]).toString("utf8"), errno: result < 0 ? value[3] : undefined };
}

/** Splits an argument list at its top-level commas (strings are hex-escaped, so they hold no quote or bracket). */
export function splitArgs(text: string): string[] {
  const args: string[] = [];
  let depth = 0;
  let inString = false;
  let current = "";
  for (const char of text) {
    if (char === '"') inString = !inString;
    else if (!inString && "[{<".includes(char)) depth += 1;
    else if (!inString && "]}>".includes(char)) depth -= 1;
    if (char === "," && depth === 0 && !inString) {
      args.push(current.trim());
      current = "";
    } else current += char;
  }
  if (current.trim() !== "") args.push(current.trim());
  return args;
}

/** Decodes `\xNN` escapes (and any plain characters) into bytes. */
export function decodeHex(text: string): Buffer {
  const bytes: number[] = [];
  for (let index = 0; index < text.length; index++) {
    if (text[index] === "\\" && text[index + 1] === "x") {
      bytes.push(parseInt(text.slice(index + 2, index + 4), 16));
      index += 3;
    } else if (text[index] === "\\") {
      // `-xx` escapes everything as \xNN; other escapes (\n, \t, \\) appear only without it.
      const next = text[index + 1]!;
      bytes.push(({ n: 10, t: 9, r: 13, v: 11, f: 12, "\\": 92, '"': 34 } as Record<string, number>)[next] ?? next.charCodeAt(0));
      index += 1;
    } else bytes.push(text.charCodeAt(index));
  }
  return Buffer.from(bytes);
}

/** The bytes of a quoted string argument; throws when strace cut it (`"…"...`: raise `-s`). */
export function stringArg(arg: string): Buffer {
  const match = /^"(.*)"(\.\.\.)?$/.exec(arg);
  if (!match) throw new Error(`not a string argument: ${arg.slice(0, 80)}`);
  if (match[2]) throw new Error("strace cut a string argument short: raise -s");
  return decodeHex(match[1]!);
}

/** A file descriptor argument: its number (`AT_FDCWD` is -100) and the path `-y` printed (`(deleted)` after it: unlinked). */
export function fdArg(arg: string): { fd: number; path: string | undefined } {
  const match = /^(AT_FDCWD|-?\d+)(?:<(.*)>(?:\(deleted\))?)?$/.exec(arg);
  if (!match) throw new Error(`not a file descriptor argument: ${arg.slice(0, 80)}`);
  return { fd: match[1] === "AT_FDCWD" ? -100 : Number(match[1]), path: match[2] === undefined ? undefined : decodeHex(match[2]).toString("utf8") };
}

/** The data of a `writev`/`pwritev` iovec array argument, concatenated. */
export function iovecArg(arg: string): Buffer {
  const parts: Buffer[] = [];
  for (const match of arg.matchAll(/iov_base=("[^"]*"(?:\.\.\.)?)/g)) parts.push(stringArg(match[1]!));
  return Buffer.concat(parts);
}

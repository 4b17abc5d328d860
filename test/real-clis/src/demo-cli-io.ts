import { dirname } from "node:path";
import type { CliIo } from "@keel/cli";
import { cliBinary, type RealCliId } from "./cli-sandbox.js";

/** A captured `CliIo` for running `keel demo` with a real CLI. */
export interface DemoCliIo {
  io: CliIo;
  /** What was written to stdout so far. */
  out(): string;
  /** What was written to stderr so far. */
  err(): string;
}

/**
 * The io of a `keel demo` run in `cwd` whose output is captured, with the pinned `cli` first on
 * `PATH` (the demo runs the CLI it finds there) and no other environment.
 */
export function demoCliIo(cli: RealCliId, cwd: string): DemoCliIo {
  let out = "";
  let err = "";
  const io: CliIo = {
    stdout: (text) => void (out += text),
    stderr: (text) => void (err += text),
    color: false,
    cwd,
    env: { PATH: [dirname(cliBinary(cli)), dirname(process.execPath), "/usr/local/bin", "/usr/bin", "/bin"].join(":") },
  };
  return { io, out: () => out, err: () => err };
}

/**
 * A workload's acknowledgement file: each line is one blocking `write` to a file outside the
 * traced directory, so that the trace orders it exactly among the workload's changes.
 */
import fs from "node:fs";

/** Opens `file` for appending and returns the function that writes one line to it. */
export function createAcknowledger(file: string): (line: string) => void {
  const fd = fs.openSync(file, "a");
  return (line) => {
    fs.writeSync(fd, `${line}\n`);
  };
}

/** Reads an acknowledgement file's lines (a checker's input). */
export function readAcknowledgements(file: string): string[] {
  return fs.readFileSync(file, "utf8").split("\n").filter((line) => line !== "");
}

import { lstatSync, statSync } from "node:fs";
import path from "node:path";
import { KeelError } from "@keel/core";

/**
 * Checks the database path before SQLite opens it, because SQLite would otherwise decide on its
 * own: it creates the file (through a dangling link, at the link's target, wherever that is),
 * blocks forever opening a FIFO, or fails with an untyped error for a missing directory.
 *
 * - the directory must exist: `not_found` (the store creates no directories);
 * - an existing path must be a regular file once links are followed: `invalid_input`;
 * - a link to nothing is `invalid_input` (opening it would create a file elsewhere);
 * - a missing file is `not_found` when `create` is false.
 *
 * A link to an existing file is followed: the user named it, as with the filesystem store's
 * root. Returns whether the file exists.
 */
export function checkDatabasePath(file: string, create: boolean): boolean {
  const directory = path.dirname(path.resolve(file));
  const details = { file };
  let linked: ReturnType<typeof lstatSync> | undefined;
  try {
    linked = lstatSync(file);
  } catch (error) {
    if (!isMissing(error)) throw ioFailed(file, error);
  }
  if (linked === undefined) {
    if (!isDirectory(directory)) {
      throw new KeelError("not_found", `the directory of the SQLite store ${file} does not exist (${directory}): create it first`, { details: { ...details, directory } });
    }
    if (!create) throw new KeelError("not_found", `no SQLite store at ${file}: the file does not exist (nothing was created)`, { details });
    return false;
  }
  let target: ReturnType<typeof statSync>;
  try {
    target = statSync(file);
  } catch (error) {
    if (isMissing(error)) {
      throw new KeelError("invalid_input", `the SQLite store path ${file} is a symbolic link to nothing: opening it would create a file at the link's target; remove the link or point it at a database`, { details });
    }
    throw ioFailed(file, error);
  }
  if (!target.isFile()) {
    throw new KeelError("invalid_input", `the SQLite store path ${file} is not a regular file (a directory, FIFO or device): give the path of a database file`, { details });
  }
  return true;
}

const isMissing = (error: unknown) => ["ENOENT", "ENOTDIR"].includes(String((error as { code?: unknown } | null)?.code));

function isDirectory(directory: string): boolean {
  try {
    return statSync(directory).isDirectory();
  } catch {
    return false;
  }
}

function ioFailed(file: string, error: unknown): KeelError {
  return new KeelError("io_failed", `opening the SQLite store: cannot read ${file}: ${error instanceof Error ? error.message : String(error)}`, { details: { file }, cause: error });
}

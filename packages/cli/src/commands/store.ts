import { unwrapOrThrow, type KeelError } from "@keel/core";
import { CliUsageError, type CliCommand } from "../cli-command.js";
import { paint } from "../cli-io.js";
import { printable } from "../internal/inspect-text.js";
import { copyStore } from "../store-copy.js";
import { openStore, parseStoreUrl, redactStoreUrl } from "@keel/runtime";

const HELP = `keel store — move a deployment between stores

Usage: keel store copy <from> <to> [--force] [--json]

Options:
  --force               merge into a target that already holds documents or logs: each
                        source document and log is written over the same key (a target
                        document at or above the source's version is a conflict), and
                        the target's other keys are kept
  --json                print one JSON document { from, to, documents, logs, records }
  -h, --help

Store URLs:
  <dir>                 a filesystem store directory (.keel)
  sqlite:<file>         a SQLite store (sqlite:.keel/keel.db)
  postgres://…          a PostgreSQL store; ?schema=<name> picks the schema (default keel)

Copies every document with its version and every log with its seqs and record ids, so
compare-and-swap and journal positions carry over. Leases are not copied. Stop the processes
using <from> first. A <to> that already holds documents or logs is refused unless --force.
<from> is only read: it must already be a Keel store (a missing directory, file or schema is
refused, and nothing is created); it is opened and read before <to> is opened or created.

Exit codes: 0 copied, 1 a store failed, the source is missing or the target is not empty,
2 bad arguments (a bad store URL, a system schema).

Example:
  keel store copy .keel sqlite:.keel/keel.db
  keel store copy sqlite:.keel/keel.db "postgres://keel@db.internal:5432/keel?schema=prod"
`;

/** `keel store copy <from> <to> [--force] [--json]`: copies a store into another, through the ports. */
export const storeCommand: CliCommand = {
  name: "store",
  summary: "copy a store into another (a directory, sqlite:<file>, postgres://…)",
  help: HELP,
  options: { force: { type: "boolean" }, json: { type: "boolean" } },
  allowPositionals: true,
  run: async (args, io) => {
    const [action, from, to, ...extra] = args.positionals;
    if (action !== "copy") throw new CliUsageError(action === undefined ? "store needs a subcommand: copy <from> <to>" : `unknown store subcommand "${action}": use copy <from> <to>`);
    if (from === undefined || to === undefined || extra.length > 0) throw new CliUsageError("store copy takes exactly two store URLs: <from> <to>");
    const fromLocation = parseStoreUrl(from, io.cwd);
    if (fromLocation.isErr()) throw new CliUsageError(`<from>: ${fromLocation.error.message}`);
    const toLocation = parseStoreUrl(to, io.cwd);
    if (toLocation.isErr()) throw new CliUsageError(`<to>: ${toLocation.error.message}`);
    // Bad input (a system schema, a bad path) is exit 2 as for bad arguments; anything else 1.
    const failed = (error: KeelError) => {
      io.stderr(`${paint(io, "red", "error")} (${error.code}): ${printable(error.message)}\n`);
      return error.code === "invalid_input" ? 2 : 1;
    };
    // The source first, read once: a missing or unreadable source is refused before the target exists.
    const opened = await openStore(fromLocation.value, { mode: "read" });
    if (opened.isErr()) return failed(opened.error);
    const source = opened.value;
    try {
      const target = unwrapOrThrow(await openStore(toLocation.value));
      try {
        const copied = await copyStore(source, target, { force: args.values["force"] === true });
        if (copied.isErr()) return failed(copied.error);
        const { documents, logs, records } = copied.value;
        if (args.values["json"] === true) {
          io.stdout(`${JSON.stringify({ from: redactStoreUrl(from), to: redactStoreUrl(to), documents, logs, records }, null, 2)}\n`);
          return 0;
        }
        io.stdout(`copied ${documents} documents and ${logs} logs (${records} records) from ${redactStoreUrl(from)} to ${redactStoreUrl(to)}\n`);
        return 0;
      } finally {
        await target.close();
      }
    } finally {
      await source.close();
    }
  },
};

import { existsSync } from "node:fs";
import path from "node:path";
import { DEMO_MARKER } from "../demo/demo-run.js";
import { CliUsageError, type CliCommand } from "../cli-command.js";
import { paint } from "../cli-io.js";
import { countDamaged } from "../internal/inspect-model.js";
import { inspectStore } from "../internal/inspect-read.js";
import { renderInspection } from "../internal/inspect-render.js";
import { plural, printable } from "../internal/inspect-text.js";
import { openStore, parseStoreUrl, redactStoreUrl } from "@keel/runtime";

const HELP = `keel inspect — show what a Keel store holds

Usage: keel inspect [store] [--json]

Arguments:
  store     the store: a directory (default .keel), sqlite:<file> or postgres://…?schema=<name>

Options:
  --json    print one JSON document instead of the tree
  -h, --help

Shows, as a tree: missions with their checkpoint, their work sessions (open and last closed ones:
scope, pinned model, turns, tasks, tokens, tool calls, active minutes, checkpoint counter, model
mismatches; "no data" where a figure is unknown, never 0; the audit cadence) and, per role, the
capsule (thread binding: backend, model, branch, thread id; counters) and the handoff; budget ledgers with each scope's
limits, reserved, settled and remaining amounts; logs (event logs counted by event type); and any
other document. Only reads: nothing is created, migrated or changed — a missing directory, SQLite
file or PostgreSQL schema is reported (not_found) and left missing, and a store that opening
for writing would mend or upgrade (a torn layout marker, an older layout or schema) is refused
(corrupt, unsupported) and left as it is. A damaged document is shown as CORRUPT in place.

Exit codes: 0 shown (even with damaged documents), 1 no store there (or it cannot be read),
2 bad arguments.

Example:
  keel inspect .keel-demo/store
  keel inspect .keel --json > state.json
  keel inspect sqlite:.keel/keel.db
`;

/** `keel inspect [dir] [--json]`: the missions, roles, capsules, handoffs, checkpoints, budgets and logs of a store. */
export const inspectCommand: CliCommand = {
  name: "inspect",
  summary: "show the missions, capsules, handoffs, budgets and logs of a store",
  help: HELP,
  options: { json: { type: "boolean" } },
  allowPositionals: true,
  run: async (args, io) => {
    if (args.positionals.length > 1) throw new CliUsageError(`inspect takes one store, got ${args.positionals.length} arguments`);
    const url = args.positionals[0] ?? ".keel";
    const location = parseStoreUrl(url, io.cwd);
    if (location.isErr()) throw new CliUsageError(location.error.message);
    let inspected: Awaited<ReturnType<typeof inspectStore>>;
    if (location.value.kind === "fs") {
      const given = location.value.dir;
      // A `keel demo` directory keeps its store in `store/`: accept the demo directory itself too.
      const dir = existsSync(path.join(given, DEMO_MARKER)) ? path.join(given, "store") : given;
      inspected = await inspectStore(dir);
    } else {
      // Opened for reading only: a missing file or schema is not_found, and nothing is created or migrated.
      const opened = await openStore(location.value, { mode: "read" });
      if (opened.isErr()) {
        io.stderr(`${paint(io, "red", "error")} (${opened.error.code}): ${printable(opened.error.message)}\n`);
        return opened.error.code === "invalid_input" ? 2 : 1;
      }
      // The adapter is installed (openStore loaded it): its schema version is the layout shown.
      const layout = location.value.kind === "sqlite" ? (await import("@keel/store-sqlite")).SQLITE_SCHEMA_VERSION : (await import("@keel/store-postgres")).POSTGRES_SCHEMA_VERSION;
      inspected = await inspectStore(redactStoreUrl(url), { store: opened.value, layout });
    }
    if (inspected.isErr()) {
      io.stderr(`${paint(io, "red", "error")} (${inspected.error.code}): ${printable(inspected.error.message)}\n`);
      return 1;
    }
    if (args.values["json"] === true) {
      io.stdout(`${JSON.stringify(inspected.value, null, 2)}\n`);
      return 0;
    }
    io.stdout(renderInspection(inspected.value, io));
    const damaged = countDamaged(inspected.value);
    if (damaged > 0) io.stderr(`${paint(io, "yellow", "warning")}: ${plural(damaged, "damaged entry", "damaged entries")} (marked CORRUPT above)\n`);
    return 0;
  },
};

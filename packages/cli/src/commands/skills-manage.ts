import path from "node:path";
import type { KeelError } from "@keel/core";
import {
  getSkillVisibility,
  importSkill,
  type ImportSkillReport,
  setSkillVisibility,
  type SkillVisibility,
  updateLibrary,
  type VerificationSummary,
  withdrawSkill,
} from "@keel/skills";
import { readVerificationSummary } from "@keel/skills/schemas";
import { okAsync, type ResultAsync } from "neverthrow";
import { CliUsageError, type CommandArgs } from "../cli-command.js";
import { paint, type CliIo } from "../cli-io.js";
import { printable } from "../internal/inspect-text.js";

/** The subcommands of `keel skills` that manage a layer (a role name cannot be one of them there). */
export const SKILLS_MANAGE_SUBCOMMANDS: readonly string[] = ["import", "update", "withdraw", "visibility"];

/** The options the managing subcommands add to `keel skills`. */
export const SKILLS_MANAGE_OPTIONS = {
  layer: { type: "string" },
  role: { type: "string" },
  route: { type: "string", multiple: true },
  unclassified: { type: "boolean" },
  overwrite: { type: "boolean" },
  force: { type: "boolean" },
  prune: { type: "boolean" },
  "dry-run": { type: "boolean" },
  verification: { type: "string" },
} as const;

/** The help section of the managing subcommands. */
export const SKILLS_MANAGE_HELP = `
Managing a layer:
  keel skills import <skill dir> --layer <dir> --role <role> (--route <r>… | --unclassified)
                     [--verification <file>] [--overwrite] [--dry-run] [--json]
  keel skills update <library dir> --layer <dir> --role <role> (--route <r>… | --unclassified)
                     [--force] [--prune] [--dry-run] [--json]
  keel skills withdraw <name> --layer <dir> --role <role> [--dry-run] [--json]
  keel skills visibility <name> [explicit-only|auto] --layer <dir> --role <role> [--json]

  import     validate a skill directory (strict) and swap it into <layer>/<role>/<name>/
             atomically; --overwrite replaces a skill of the same name
  update     install or update a role directory from a skills checkout, comparing per skill the
             recorded, local and upstream digests; --force overwrites local changes, --prune
             removes (to the trash) what is gone upstream
  withdraw   move a skill to <layer>/.keel/trash/ (its text already sent to a model is not recalled)
  visibility with a value, set whether discovery offers the skill: explicit-only hides it from
             the catalogue (still found by name), auto (or automatic) offers it again;
             without one, show it
  --route    a route assigned to imported skills (repeatable); --unclassified must be asked for
  --verification <file>
             the skill's verification summary (JSON: backends, unresolved, and optionally
             verifiedBy, verifiedAt, skillDigest); it decides the admission (verified,
             unverified, or refused), and a skillDigest must be the imported content's
  --dry-run  say what would be done; write nothing
`;

function required(args: CommandArgs, name: string): string {
  const value = args.values[name];
  if (typeof value !== "string" || value === "") throw new CliUsageError(`skills ${args.positionals[0]} needs --${name} <${name === "layer" ? "dir" : name}>`);
  return value;
}

function routingOf(args: CommandArgs): { routes: string[] } | "unclassified" {
  const routes = (args.values["route"] as string[] | undefined) ?? [];
  const unclassified = args.values["unclassified"] === true;
  if (unclassified && routes.length > 0) throw new CliUsageError("give --route or --unclassified, not both");
  if (!unclassified && routes.length === 0) throw new CliUsageError(`skills ${args.positionals[0]} needs --route <route> (repeatable) or --unclassified`);
  return unclassified ? "unclassified" : { routes };
}

async function report<T>(io: CliIo, json: boolean, result: ResultAsync<T, KeelError>, render: (value: T) => string): Promise<number> {
  const settled = await result;
  if (settled.isErr()) {
    if (settled.error.code === "invalid_input") throw new CliUsageError(printable(settled.error.message));
    io.stderr(`${paint(io, "red", "error")} (${settled.error.code}): ${printable(settled.error.message)}\n`);
    return 1;
  }
  io.stdout(json ? `${JSON.stringify(settled.value, null, 2)}\n` : render(settled.value));
  return 0;
}

function renderImport(value: ImportSkillReport): string {
  const { admission } = value.metadata;
  const who = [admission.verifiedBy ?? admission.by, admission.verifiedAt].filter((part) => part !== undefined).map(printable);
  const verb = value.applied ? (value.replaced ? "replaced" : "imported") : value.replaced ? "would replace" : "would import";
  return `${verb} ${value.name} → ${value.target}\n  digest ${value.metadata.digest}\n  admission ${admission.decision}${who.length > 0 ? ` (${who.join(", ")})` : ""}\n`;
}

const VISIBILITY_VALUES: Readonly<Record<string, SkillVisibility>> = { "explicit-only": "explicit-only", auto: "automatic", automatic: "automatic" };

/** `keel skills visibility <name> [explicit-only|auto]`: sets the visibility with a value, shows it without. */
function runVisibility(args: CommandArgs, io: CliIo, name: string, value: string | undefined, layer: string, role: string, json: boolean): Promise<number> {
  for (const option of ["route", "unclassified", "overwrite", "force", "prune", "dry-run", "verification"]) {
    if (args.values[option] !== undefined) throw new CliUsageError(`--${option} is not an option of skills visibility`);
  }
  if (value === undefined) {
    return report(io, json, getSkillVisibility({ layer, role, name }), (shown) => `${printable(shown.name)} ${shown.visibility}\n`);
  }
  const visibility = VISIBILITY_VALUES[value];
  if (visibility === undefined) throw new CliUsageError(`skills visibility takes explicit-only or auto, not "${printable(value)}"`);
  return report(io, json, setSkillVisibility({ layer, role, name, visibility }), (set) =>
    set.changed ? `set ${printable(set.name)} ${set.visibility}\n` : `${printable(set.name)} already ${set.visibility}\n`,
  );
}

/** Runs `keel skills import|update|withdraw|visibility` (the first positional names the subcommand). */
export async function runSkillsManage(args: CommandArgs, io: CliIo): Promise<number> {
  const [subcommand, target, ...extra] = args.positionals;
  if (target === undefined) throw new CliUsageError(`skills ${subcommand} needs ${subcommand === "withdraw" || subcommand === "visibility" ? "a skill name" : "a directory"}`);
  const most = subcommand === "visibility" ? 1 : 0;
  if (extra.length > most) throw new CliUsageError(`skills ${subcommand} takes ${most + 1} argument${most > 0 ? "s at most" : ""}, got ${extra.length + 1}`);
  const layer = path.resolve(io.cwd, required(args, "layer"));
  const role = required(args, "role");
  const dryRun = args.values["dry-run"] === true;
  const json = args.values["json"] === true;
  const flag = (name: string) => args.values[name] === true;
  if (subcommand === "visibility") return runVisibility(args, io, target, extra[0], layer, role, json);
  if (subcommand === "import") {
    if (flag("force") || flag("prune")) throw new CliUsageError("--force and --prune are options of skills update");
    const options = { from: path.resolve(io.cwd, target), layer, role, routing: routingOf(args), overwrite: flag("overwrite"), dryRun };
    const file = args.values["verification"];
    if (file !== undefined && (typeof file !== "string" || file === "")) throw new CliUsageError("--verification needs a file");
    const summary: ResultAsync<VerificationSummary | undefined, KeelError> = file === undefined ? okAsync(undefined) : readVerificationSummary(path.resolve(io.cwd, file));
    const result = summary.andThen((verification) => importSkill(verification ? { ...options, verification } : options));
    return report(io, json, result, renderImport);
  }
  if (args.values["verification"] !== undefined) throw new CliUsageError(`--verification is an option of skills import, not of skills ${subcommand}`);
  if (subcommand === "update") {
    if (flag("overwrite")) throw new CliUsageError("--overwrite is an option of skills import; skills update uses --force");
    const result = updateLibrary({ source: path.resolve(io.cwd, target), layer, role, routing: routingOf(args), force: flag("force"), prune: flag("prune"), apply: !dryRun });
    return report(io, json, result, (value) => {
      const lines = value.entries.map((entry) => `  ${(entry.done ? "✓ " : "  ") + entry.action.padEnd(10)} ${entry.name}  ${paint(io, "dim", entry.reason)}`);
      return `${value.applied ? "updated from" : "plan (dry run) for"} ${value.library}\n${lines.join("\n")}${lines.length > 0 ? "\n" : ""}`;
    });
  }
  for (const option of ["route", "unclassified", "overwrite", "force", "prune"]) {
    if (args.values[option] !== undefined) throw new CliUsageError(`--${option} is not an option of skills withdraw`);
  }
  const result = withdrawSkill({ layer, role, name: target, dryRun });
  return report(io, json, result, (value) => `${value.applied ? "withdrew" : "would withdraw"} ${value.name} → ${value.trash}\n`);
}

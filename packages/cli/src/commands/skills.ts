import { stat } from "node:fs/promises";
import path from "node:path";
import { createSkillLibrary, type SkillLayer } from "@keel/skills";
import { CliUsageError, type CliCommand } from "../cli-command.js";
import { paint } from "../cli-io.js";
import { printable } from "../internal/inspect-text.js";
import { renderSkillView } from "../internal/skills-render.js";
import { runSkillsManage, SKILLS_MANAGE_HELP, SKILLS_MANAGE_OPTIONS, SKILLS_MANAGE_SUBCOMMANDS } from "./skills-manage.js";

const HELP = `keel skills — show the skills a role sees

Usage: keel skills <role> [--project <dir>] [--domain <dir>] [--global <dir>] [--allow-missing]
                   [--strict] [--require-verified] [--json]

Arguments:
  role               the role (engineer, reviewer, …): letters, digits, '.', '_' or '-'

Options:
  --project <dir>    the project layer (highest precedence)
  --domain <dir>     the domain (vertical) layer
  --global <dir>     the global layer (lowest precedence)
  --allow-missing    treat a layer directory that does not exist as empty (without it, a
                     missing layer is an error: a typo must not show an empty view)
  --strict           judge SKILL.md files strictly: every Agent Skills spec violation is an
                     error for that skill (which is then left out), and the exit code is 1 when
                     any diagnostic is an error
  --require-verified offer only managed skills imported with a passing verification summary
                     whose files are unchanged since; every other skill is left out and
                     reported as an error diagnostic (unverified, verification_stale)
  --json             print the resolved view as one JSON document
  -h, --help

At least one layer is required. A layer holds one directory per role:
<layer>/<role>/<skill>/SKILL.md. For the role, each layer contributes its own directory (OWN)
and then every other role's directory (REFERENCE); an earlier root shadows a later skill of the
same name. Only frontmatter is read, never a skill's body.

Exit codes: 0 listed, 1 a layer does not exist (without --allow-missing) or discovery failed
(or, with --strict, a diagnostic is an error), 2 bad arguments.

Example:
  keel skills engineer --project .keel/skills --global ~/.keel/skills
${SKILLS_MANAGE_HELP}`;

const LAYER_NAMES = ["project", "domain", "global"] as const;

async function isDirectory(dir: string): Promise<boolean> {
  try {
    return (await stat(dir)).isDirectory();
  } catch {
    return false;
  }
}

/** `keel skills <role>`: the layered skill view of a role (roots, OWN and REFERENCE skills, shadowed, diagnostics). */
export const skillsCommand: CliCommand = {
  name: "skills",
  summary: "show the skills a role sees: ordered roots, OWN and REFERENCE skills, diagnostics",
  help: HELP,
  options: {
    project: { type: "string" },
    domain: { type: "string" },
    global: { type: "string" },
    strict: { type: "boolean" },
    json: { type: "boolean" },
    "allow-missing": { type: "boolean" },
    "require-verified": { type: "boolean" },
    ...SKILLS_MANAGE_OPTIONS,
  },
  allowPositionals: true,
  run: async (args, io) => {
    if (SKILLS_MANAGE_SUBCOMMANDS.includes(args.positionals[0] ?? "")) return runSkillsManage(args, io);
    const [role, ...extra] = args.positionals;
    if (role === undefined) throw new CliUsageError("skills needs a role: keel skills <role> --project <dir>");
    if (extra.length > 0) throw new CliUsageError(`skills takes one role, got ${args.positionals.length} arguments`);
    const layers: SkillLayer[] = [];
    for (const name of LAYER_NAMES) {
      const dir = args.values[name];
      if (dir === undefined) continue;
      if (typeof dir !== "string" || dir === "") throw new CliUsageError(`--${name} needs a directory`);
      layers.push({ name, dir: path.resolve(io.cwd, dir) });
    }
    if (layers.length === 0) throw new CliUsageError("skills needs at least one layer: --project, --domain or --global <dir>");
    const shownLayers = await Promise.all(layers.map(async (layer) => ({ ...layer, exists: await isDirectory(layer.dir) })));
    const missing = shownLayers.filter((layer) => !layer.exists);
    if (missing.length > 0 && args.values["allow-missing"] !== true) {
      const named = missing.map((layer) => `the ${layer.name} layer ${printable(layer.dir)}`).join(" and ");
      io.stderr(`${paint(io, "red", "error")} (not_found): ${named} ${missing.length === 1 ? "is not a directory" : "are not directories"}; pass --allow-missing to treat a missing layer as empty\n`);
      return 1;
    }
    const strict = args.values["strict"] === true;
    const library = createSkillLibrary({ layers, mode: strict ? "strict" : "lenient", requireVerified: args.values["require-verified"] === true });
    const resolved = await library.resolve(role);
    if (resolved.isErr()) {
      if (resolved.error.code === "invalid_input") throw new CliUsageError(printable(resolved.error.message));
      io.stderr(`${paint(io, "red", "error")} (${resolved.error.code}): ${printable(resolved.error.message)}\n`);
      return 1;
    }
    const view = resolved.value;
    if (args.values["json"] === true) io.stdout(`${JSON.stringify({ layers: shownLayers, ...view }, null, 2)}\n`);
    else io.stdout(renderSkillView(view, shownLayers, io));
    const errors = view.diagnostics.filter((diagnostic) => diagnostic.severity === "error").length;
    return strict && errors > 0 ? 1 : 0;
  },
};

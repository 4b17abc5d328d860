import { KeelError, utf8Bytes, validate } from "@keel/core";
import { err, ok, type Result } from "neverthrow";
import { z } from "zod";
import { SkillEntrySchema, SkillRootSchema, type SkillEntry, type SkillRoot, type SkillView } from "./skill-view.js";

/** Options of {@link renderSkillContract}. */
export interface RenderSkillContractOptions {
  /**
   * Byte budget of the text (UTF-8). When the full catalogue does not fit, only the roots are
   * listed; when even those do not fit, the later roots are counted instead of listed.
   * Default {@link DEFAULT_CONTRACT_MAX_BYTES}.
   */
  maxBytes?: number;
}

/** Default byte budget of the skill contract (about 4,000 tokens). */
export const DEFAULT_CONTRACT_MAX_BYTES = 16_384;

const ContractViewSchema = z.object({
  role: z.string().min(1),
  roots: z.array(SkillRootSchema),
  own: z.array(SkillEntrySchema),
  reference: z.array(SkillEntrySchema),
});

const ContractOptionsSchema = z.object({ maxBytes: z.number().int().min(1).max(16 * 1024 * 1024).optional() }).strict();

/** The rules every role follows with skills; stable text. */
export const SKILL_RULES: readonly string[] = [
  "Search skill names and frontmatter descriptions first; do not open bodies to browse.",
  "Open a SKILL.md body only when its description is a clear fit for the current task.",
  "A wrong skill is worse than none: when no description clearly fits, use no skill.",
  "OWN skills are your role's; REFERENCE skills belong to other roles: use one only when no OWN skill fits.",
  "The current task's instructions and fresh evidence (files, tool output, test results) override skill text.",
  "Resolve paths that a skill mentions against that skill's own directory.",
];

// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f]/g;

function clean(text: string): string {
  return text.replace(CONTROL, " ");
}

function header(role: string): string[] {
  return [
    "## Skills",
    "",
    `Skills are directories holding a SKILL.md: its frontmatter (name, description) says what it is for, its body how to do it. You act as role "${clean(role)}".`,
    "",
    "Rules:",
    ...SKILL_RULES.map((rule) => `- ${rule}`),
  ];
}

function rootLine(root: SkillRoot, index: number): string {
  const label = root.ownership === "own" ? "OWN" : "REFERENCE";
  return `${index + 1}. ${label} ${clean(root.path)} (layer ${clean(root.layer)}, role ${clean(root.role)})`;
}

function rootsSection(roots: readonly SkillRoot[], listed: number): string[] {
  const lines = ["", "Skill roots, in precedence order (an earlier root wins a name clash):"];
  roots.slice(0, listed).forEach((root, index) => lines.push(rootLine(root, index)));
  if (listed < roots.length) lines.push(`(${roots.length - listed} more roots not listed)`);
  return lines;
}

function catalogueLines(title: string, skills: readonly SkillEntry[]): string[] {
  const visible = skills.filter((skill) => !skill.disableModelInvocation);
  if (visible.length === 0) return [];
  return [`${title}:`, ...visible.map((skill) => `- ${clean(skill.name)}: ${clean(skill.description)} (${clean(skill.path)})`)];
}

function withCatalogue(view: z.output<typeof ContractViewSchema>): string {
  const own = catalogueLines("OWN skills", view.own);
  const reference = catalogueLines("REFERENCE skills", view.reference);
  const lines = [...header(view.role), ...rootsSection(view.roots, view.roots.length), "", "Catalogue (name: description (SKILL.md path)):"];
  if (own.length + reference.length === 0) lines.push("(no skills)");
  return [...lines, ...own, ...reference].join("\n") + "\n";
}

function rootsOnly(view: z.output<typeof ContractViewSchema>, listed: number): string {
  const count = view.own.length + view.reference.length;
  return (
    [
      ...header(view.role),
      ...rootsSection(view.roots, listed),
      "",
      `Catalogue: ${count} skills, too many to list here. A skill is a directory under a root holding a SKILL.md: list the roots' directories and read only frontmatter to choose.`,
    ].join("\n") + "\n"
  );
}

/**
 * Renders the portable skill contract of a view: the rules, the ordered roots (OWN and
 * REFERENCE marked) and the catalogue (name, description, SKILL.md path; OWN skills first) — or
 * only the roots when the catalogue does not fit `maxBytes`. Stable: the same view gives the same
 * text. `too_large` when not even the rules fit.
 */
export function renderSkillContract(view: Pick<SkillView, "role" | "roots" | "own" | "reference">, options: RenderSkillContractOptions = {}): Result<string, KeelError> {
  const checked = validate(ContractViewSchema, view, "skill view").andThen((parsed) =>
    validate(ContractOptionsSchema, options, "contract options").map(() => parsed),
  );
  if (checked.isErr()) return err(checked.error);
  const parsed = checked.value;
  const maxBytes = options.maxBytes ?? DEFAULT_CONTRACT_MAX_BYTES;
  if (parsed.roots.length === 0 && parsed.own.length + parsed.reference.length === 0) {
    return ok(`## Skills\n\nNo skills are available to role "${clean(parsed.role)}".\n`);
  }
  const full = withCatalogue(parsed);
  if (utf8Bytes(full) <= maxBytes) return ok(full);
  // The text grows with the number of roots listed: find the most that fit.
  let low = -1;
  let high = parsed.roots.length;
  while (low < high) {
    const middle = Math.max(0, Math.ceil((low + high) / 2));
    if (utf8Bytes(rootsOnly(parsed, middle)) <= maxBytes) low = middle;
    else high = middle - 1;
  }
  if (low >= 0) return ok(rootsOnly(parsed, low));
  return err(
    new KeelError("too_large", `the skill contract does not fit in ${maxBytes} bytes, not even without roots: raise maxBytes`, {
      details: { maxBytes, minimumBytes: utf8Bytes(rootsOnly(parsed, 0)) },
    }),
  );
}

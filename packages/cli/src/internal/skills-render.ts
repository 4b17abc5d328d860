import type { SkillDiagnostic, SkillEntry, SkillLayer, SkillView } from "@keel/skills";
import { paint, type CliIo } from "../cli-io.js";
import { formatCount, printable, shortText } from "./inspect-text.js";

type Style = Pick<CliIo, "color">;

function skillLine(skill: SkillEntry): string {
  const description = skill.description === "" ? "(no description)" : shortText(skill.description, 100);
  const hidden = skill.disableModelInvocation ? " [not offered to the model]" : "";
  return `  ${printable(skill.name)} — ${description}${hidden}\n      ${printable(skill.layer)}/${printable(skill.role)}: ${printable(skill.path)}`;
}

function diagnosticLine(style: Style, diagnostic: SkillDiagnostic): string {
  const colour = diagnostic.severity === "error" ? "red" : diagnostic.severity === "warning" ? "yellow" : "dim";
  const where = diagnostic.layer === null ? "" : ` (${printable(diagnostic.layer)}${diagnostic.role === null ? "" : `/${printable(diagnostic.role)}`})`;
  return `  ${paint(style, colour, diagnostic.severity.padEnd(7))} ${printable(diagnostic.code)}${where}: ${printable(diagnostic.message)}\n      ${printable(diagnostic.path)}`;
}

function section(style: Style, title: string, lines: readonly string[]): string[] {
  return [paint(style, "bold", `${title} (${formatCount(lines.length)})`), ...(lines.length > 0 ? lines : ["  none"]), ""];
}

/**
 * The text `keel skills` prints for a resolved view: the layers, the ordered roots (layer and
 * OWN/REFERENCE), the OWN skills, the REFERENCE skills, the shadowed skills and the
 * diagnostics. Everything read from disk is made printable. Pure.
 */
export function renderSkillView(view: SkillView, layers: readonly (SkillLayer & { exists: boolean })[], style: Style): string {
  const width = Math.max(...view.roots.map((root) => root.layer.length), 0);
  const lines = [
    `${paint(style, "bold", `Skills of role ${printable(view.role)}`)} (${view.mode} discovery)`,
    "",
    ...section(
      style,
      "Layers, in precedence order",
      layers.map((layer) => `  ${printable(layer.name)}: ${printable(layer.dir)}${layer.exists ? "" : paint(style, "yellow", " (does not exist)")}`),
    ),
    ...section(
      style,
      "Roots, in precedence order",
      view.roots.map(
        (root, index) =>
          `  ${String(index + 1).padStart(2)}. ${printable(root.layer).padEnd(width)}  ${root.ownership === "own" ? paint(style, "green", "OWN      ") : "REFERENCE"}  ${printable(root.path)}`,
      ),
    ),
    ...section(style, "OWN skills", view.own.map(skillLine)),
    ...section(style, "REFERENCE skills", view.reference.map(skillLine)),
    ...section(
      style,
      "Shadowed",
      view.shadowed.map(
        (shadowed) =>
          `  ${printable(shadowed.name)}: ${printable(shadowed.loser.path)} (${printable(shadowed.loser.layer)}/${printable(shadowed.loser.role)}) is hidden by ${printable(shadowed.winner.path)} (${printable(shadowed.winner.layer)}/${printable(shadowed.winner.role)})`,
      ),
    ),
    ...section(style, "Diagnostics", view.diagnostics.map((diagnostic) => diagnosticLine(style, diagnostic))),
  ];
  return `${lines.join("\n").trimEnd()}\n`;
}

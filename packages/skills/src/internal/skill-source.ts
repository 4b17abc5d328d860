import { basename, join } from "node:path";
import { isSafeName, KeelError } from "@keel/core";
import type { SkillIo } from "../skill-io.js";
import { checkFrontmatter, type SkillFields } from "./frontmatter-check.js";
import { locateFrontmatter } from "./frontmatter-locate.js";
import { parseFrontmatterYaml } from "./skill-file.js";
import { listSkillTree, readAndDigest, type SkillTreeLimits } from "./skill-tree.js";

/** A skill directory read and validated, ready to be written into a layer. */
export interface PreparedSkill {
  /** Real path of the source directory. */
  source: string;
  /** The frontmatter name (the target directory name). */
  name: string;
  fields: SkillFields;
  digest: string;
  directories: string[];
  files: { relative: string; diskRelative: string; bytes: Buffer }[];
  bytes: number;
}

function refuse(from: string, problems: { path: string; reason: string }[]): never {
  const shown = problems.slice(0, 5).map((problem) => `${problem.path} ${problem.reason}`).join("; ");
  const more = problems.length > 5 ? ` (and ${problems.length - 5} more)` : "";
  throw new KeelError("invalid_input", `the skill at ${from} cannot be imported: ${shown}${more}`, {
    details: { from, problems: problems.slice(0, 50) },
    retryable: false,
  });
}

/**
 * Reads and validates a skill directory, recursively, before anything is written: the SKILL.md
 * frontmatter under the spec's strict rules (the directory name is not judged: the skill is
 * installed under its frontmatter name), every entry a regular file or directory with a portable
 * name, sizes, counts and depth within `limits`. `invalid_input` listing every problem.
 */
export async function prepareSkill(io: SkillIo, from: string, limits: SkillTreeLimits & { maxSkillFileBytes: number }): Promise<PreparedSkill> {
  const source = await io.realpath(from).catch((error: unknown) => {
    if ((error as { code?: string }).code === "ENOENT") throw new KeelError("not_found", `the skill directory ${from} does not exist`, { details: { from } });
    throw error;
  });
  const stat = await io.lstat(source);
  if (!stat.isDirectory()) refuse(from, [{ path: source, reason: "is not a directory" }]);
  const listing = await listSkillTree(io, source, limits);
  const problems = [...listing.problems];
  const skillFile = listing.files.find((file) => file.relative === "SKILL.md");
  if (!skillFile) problems.push({ path: join(source, "SKILL.md"), reason: "is missing (or not a regular file)" });
  else if (skillFile.size > limits.maxSkillFileBytes) {
    problems.push({ path: skillFile.path, reason: `has ${skillFile.size} bytes, more than the ${limits.maxSkillFileBytes} a SKILL.md may have` });
  }
  if (problems.length > 0) refuse(from, problems);
  const { digest, contents } = await readAndDigest(io, listing);
  const skillBytes = contents.find((file) => file.relative === "SKILL.md")!.bytes;
  const location = locateFrontmatter(skillBytes, skillBytes.length, true);
  if (location.kind !== "found") refuse(from, [{ path: skillFile!.path, reason: "has no complete `---` frontmatter block" }]);
  const parsed = parseFrontmatterYaml(skillBytes.toString("utf8", location.yamlStart, location.yamlEnd));
  if ("issue" in parsed) refuse(from, [{ path: skillFile!.path, reason: parsed.issue.message }]);
  const declared = (parsed.data as { name?: unknown } | null)?.name;
  const verdict = checkFrontmatter(parsed.data, typeof declared === "string" ? declared : basename(source), "strict");
  const issues = verdict.issues.filter((issue) => issue.severity === "error");
  if (!verdict.fields || issues.length > 0) refuse(from, issues.map((issue) => ({ path: skillFile!.path, reason: `${issue.code}: ${issue.message}` })));
  if (!isSafeName(verdict.fields.name)) {
    refuse(from, [{ path: skillFile!.path, reason: `name "${verdict.fields.name}" cannot be a directory name of every platform: use lowercase ASCII letters, digits and '-'` }]);
  }
  return { source, name: verdict.fields.name, fields: verdict.fields, digest, directories: listing.directories, files: contents, bytes: listing.bytes };
}

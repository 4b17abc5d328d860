import type { SkillDiagnosticCode, SkillDiscoveryMode, SkillEntry } from "../skill-view.js";

/** The frontmatter fields of a usable skill (the file-independent part of a `SkillEntry`). */
export type SkillFields = Pick<SkillEntry, "name" | "description" | "license" | "compatibility" | "metadata" | "allowedTools" | "disableModelInvocation">;

/** One problem of a frontmatter, before it is tied to a path. */
export interface FrontmatterIssue {
  severity: "error" | "warning";
  code: SkillDiagnosticCode;
  message: string;
}

/** The verdict on one frontmatter: the fields when the skill is usable, and every issue. */
export interface FrontmatterVerdict {
  fields: SkillFields | null;
  issues: FrontmatterIssue[];
}

/** The six top-level fields of the Agent Skills specification. */
export const SPEC_FIELDS: ReadonlySet<string> = new Set([
  "name",
  "description",
  "license",
  "compatibility",
  "metadata",
  "allowed-tools",
]);

/** Spec limit of `name`, in characters (code points). */
export const MAX_NAME_CHARS = 64;
/** Spec limit of `description`, in characters (code points). */
export const MAX_DESCRIPTION_CHARS = 1024;
/** Spec limit of `compatibility`, in characters (code points). */
export const MAX_COMPATIBILITY_CHARS = 500;

const NAME_CHARS = /^[\p{L}\p{N}-]+$/u;

function characters(text: string): number {
  let count = 0;
  for (const _ of text) count++;
  return count;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function shown(value: string): string {
  return JSON.stringify(value.length > 80 ? `${value.slice(0, 80)}…` : value);
}

/**
 * The problems of a skill name under the spec: 1–64 lowercase letters, digits and single
 * hyphens, no leading or trailing hyphen (NFKC-normalised first, as the reference validator does).
 * Empty when the name is valid.
 */
export function nameProblems(name: string): string[] {
  const normalized = name.normalize("NFKC");
  const problems: string[] = [];
  if (normalized.length === 0) return ["it is empty"];
  if (characters(normalized) > MAX_NAME_CHARS) problems.push(`it is longer than ${MAX_NAME_CHARS} characters`);
  if (normalized !== normalized.toLowerCase() || !NAME_CHARS.test(normalized)) {
    problems.push("it may hold only lowercase letters, digits and hyphens");
  }
  if (normalized.startsWith("-") || normalized.endsWith("-")) problems.push("it may not start or end with a hyphen");
  if (normalized.includes("--")) problems.push("it may not hold consecutive hyphens");
  return problems;
}

/**
 * Splits `allowed-tools` on whitespace and commas outside parentheses, so that
 * `Bash(git status:*) Read` and `Edit, Write` both give one entry per tool.
 */
export function splitAllowedTools(value: string): string[] {
  const tools: string[] = [];
  let depth = 0;
  let current = "";
  for (const char of value) {
    if (char === "(") depth++;
    if (char === ")" && depth > 0) depth--;
    if (depth === 0 && (char === "," || /\s/u.test(char))) {
      if (current !== "") tools.push(current);
      current = "";
      continue;
    }
    current += char;
  }
  if (current !== "") tools.push(current);
  return tools;
}

interface Checker {
  issues: FrontmatterIssue[];
  /** A spec violation: a warning in lenient mode, an error in strict mode. */
  violation(code: SkillDiagnosticCode, message: string): void;
  /** A problem that makes the skill unusable in any mode. */
  fatal(code: SkillDiagnosticCode, message: string): void;
}

function createChecker(mode: SkillDiscoveryMode): Checker {
  const issues: FrontmatterIssue[] = [];
  return {
    issues,
    violation: (code, message) => issues.push({ severity: mode === "strict" ? "error" : "warning", code, message }),
    fatal: (code, message) => issues.push({ severity: "error", code, message }),
  };
}

function checkName(data: Record<string, unknown>, directoryName: string, check: Checker): string {
  const raw = data.name;
  if (raw === undefined || raw === null) {
    check.violation("missing_name", `the frontmatter has no "name": add name: ${directoryName}`);
    return directoryName;
  }
  if (typeof raw !== "string") {
    check.violation("invalid_name", `"name" must be a string, got ${typeof raw}: write name: ${directoryName}`);
    return directoryName;
  }
  const problems = nameProblems(raw);
  if (problems.length > 0) {
    check.violation("invalid_name", `name ${shown(raw)} breaks the spec: ${problems.join("; ")}`);
    if (raw.length === 0) return directoryName;
  }
  if (raw.normalize("NFKC") !== directoryName.normalize("NFKC")) {
    check.violation("name_mismatch", `name ${shown(raw)} differs from its directory ${shown(directoryName)}: rename one to match`);
  }
  return raw;
}

function checkDescription(data: Record<string, unknown>, check: Checker): string | null {
  const raw = data.description;
  if (raw === undefined || raw === null || (typeof raw === "string" && raw.trim() === "")) {
    check.fatal("missing_description", `the frontmatter has no "description": say what the skill does and when to use it`);
    return null;
  }
  if (typeof raw !== "string") {
    check.fatal("invalid_description", `"description" must be a string, got ${Array.isArray(raw) ? "a list" : typeof raw}`);
    return null;
  }
  const description = raw.replace(/\s+/gu, " ").trim();
  const length = characters(description);
  if (length > MAX_DESCRIPTION_CHARS) {
    check.violation("description_too_long", `the description has ${length} characters, more than ${MAX_DESCRIPTION_CHARS}: shorten it`);
  }
  return description;
}

function checkOptionalString(data: Record<string, unknown>, field: string, maxChars: number | null, check: Checker): string | null {
  const raw = data[field];
  if (raw === undefined || raw === null) return null;
  if (typeof raw !== "string" || raw.trim() === "") {
    check.violation("invalid_field", `"${field}" must be a non-empty string; it is ignored`);
    return null;
  }
  if (maxChars !== null && characters(raw) > maxChars) {
    check.violation("invalid_field", `"${field}" has ${characters(raw)} characters, more than ${maxChars}: shorten it`);
  }
  return raw;
}

function checkMetadata(data: Record<string, unknown>, check: Checker): Record<string, string> {
  const raw = data.metadata;
  const metadata: Record<string, string> = {};
  if (raw === undefined || raw === null) return metadata;
  if (!isPlainObject(raw)) {
    check.violation("invalid_field", `"metadata" must be a map of strings; it is ignored`);
    return metadata;
  }
  const dropped: string[] = [];
  for (const key of Object.keys(raw).sort()) {
    const value = raw[key];
    if (typeof value === "string") metadata[key] = value;
    else if (typeof value === "number" || typeof value === "boolean") metadata[key] = String(value);
    else dropped.push(key);
  }
  if (dropped.length > 0) {
    check.violation("invalid_field", `"metadata" values must be strings; dropped: ${dropped.join(", ")}`);
  }
  return metadata;
}

function checkAllowedTools(data: Record<string, unknown>, check: Checker): string[] | null {
  const raw = data["allowed-tools"];
  if (raw === undefined || raw === null) return null;
  if (typeof raw === "string") return splitAllowedTools(raw);
  if (Array.isArray(raw) && raw.every((item) => typeof item === "string")) {
    check.violation("invalid_field", `"allowed-tools" must be one space-separated string, not a list`);
    return raw.flatMap((item: string) => splitAllowedTools(item));
  }
  check.violation("invalid_field", `"allowed-tools" must be a space-separated string; it is ignored`);
  return null;
}

/**
 * Judges a parsed frontmatter (`data`) of a SKILL.md in directory `directoryName` under the
 * Agent Skills spec. Pure. In lenient mode spec violations are warnings; in strict mode they are
 * errors. A skill with any error has `fields: null`.
 */
export function checkFrontmatter(data: unknown, directoryName: string, mode: SkillDiscoveryMode): FrontmatterVerdict {
  const check = createChecker(mode);
  if (data !== null && data !== undefined && !isPlainObject(data)) {
    check.fatal("invalid_yaml", "the frontmatter is not a mapping of fields: write `name: …` and `description: …` lines");
    return { fields: null, issues: check.issues };
  }
  const record = (data ?? {}) as Record<string, unknown>;
  const name = checkName(record, directoryName, check);
  const description = checkDescription(record, check);
  const license = checkOptionalString(record, "license", null, check);
  const compatibility = checkOptionalString(record, "compatibility", MAX_COMPATIBILITY_CHARS, check);
  const metadata = checkMetadata(record, check);
  const allowedTools = checkAllowedTools(record, check);
  const unknown = Object.keys(record)
    .filter((key) => !SPEC_FIELDS.has(key))
    .sort();
  if (unknown.length > 0) {
    check.violation(
      "unknown_field",
      `unknown frontmatter field${unknown.length > 1 ? "s" : ""} ${unknown.map((key) => shown(key)).join(", ")}: the spec allows only ${[...SPEC_FIELDS].join(", ")}; put your own keys under metadata`,
    );
  }
  const failed = check.issues.some((issue) => issue.severity === "error");
  if (failed || description === null) return { fields: null, issues: check.issues };
  // Frozen: fields are shared by the cache and every view built from it.
  return {
    fields: Object.freeze({
      name,
      description,
      license,
      compatibility,
      metadata: Object.freeze(metadata),
      allowedTools: allowedTools ? Object.freeze(allowedTools) : null,
      disableModelInvocation: record["disable-model-invocation"] === true,
    }),
    issues: check.issues,
  };
}

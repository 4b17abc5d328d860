import { lstat, readdir, readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { KeelError, canonicalJson, digest, utf8Bytes } from "@keel/core";
import { err, errAsync, ok, ResultAsync, type Result } from "neverthrow";
import { parse as parseYaml } from "yaml";
import { z } from "zod";
import { BUILTIN_DEFINITIONS } from "./catalog-builtins.js";
import {
  DEFINITION_KINDS,
  DEFINITION_SCHEMAS,
  type DefinitionKind,
  type DefinitionSet,
  type ProfileDefinition,
  type RoleDefinition,
  type SkillDefinition,
  type WorkflowDefinition,
} from "./definition-schemas.js";
import { checkReferences, indexById, type CatalogIssue, type Located, type ParsedDefinitions } from "./internal/catalog-validate.js";

export type { CatalogIssue } from "./internal/catalog-validate.js";

/** Limits of one catalog root. */
export interface CatalogLimits {
  /** Entries per kind per root. Default 64. */
  entriesPerKind: number;
  /** Bytes per file (or per definition object). Default 32 KiB. */
  bytesPerFile: number;
  /** Bytes of all definitions of the root. Default 1 MiB. */
  bytesInAll: number;
}

/** The default {@link CatalogLimits}. */
export const DEFAULT_CATALOG_LIMITS: Readonly<CatalogLimits> = Object.freeze({ entriesPerKind: 64, bytesPerFile: 32 * 1024, bytesInAll: 1024 * 1024 });

/** A validated catalog: every definition by id, cross-checked, with a digest of the whole. */
export interface Catalog {
  readonly skills: ReadonlyMap<string, SkillDefinition>;
  readonly roles: ReadonlyMap<string, RoleDefinition>;
  readonly workflows: ReadonlyMap<string, WorkflowDefinition>;
  readonly profiles: ReadonlyMap<string, ProfileDefinition>;
  /** Digest of the canonical JSON of every definition: a run planned on another catalog does not resume silently. */
  readonly digest: string;
}

/** Options of {@link createCatalog} and {@link loadCatalog}. */
export interface CatalogOptions {
  /** Include the built-in definitions (default true). Project ids may not shadow them. */
  builtins?: boolean;
  /** Limits of the project root. */
  limits?: Partial<CatalogLimits>;
}

const LimitsOptionSchema = z
  .strictObject({
    entriesPerKind: z.number().int().min(1).max(1024).optional(),
    bytesPerFile: z.number().int().min(256).max(1024 * 1024).optional(),
    bytesInAll: z.number().int().min(1024).max(64 * 1024 * 1024).optional(),
  })
  .optional();

/** The options of every catalog entry point, strict: an unknown option is refused. */
const CatalogOptionsSchema = z.strictObject({ builtins: z.boolean().optional(), limits: LimitsOptionSchema });

/** Definitions given as objects: only the four kinds, each an array (its items are checked as definitions). */
const DefinitionSetSchema = z.strictObject({
  skills: z.array(z.unknown()).optional(),
  roles: z.array(z.unknown()).optional(),
  workflows: z.array(z.unknown()).optional(),
  profiles: z.array(z.unknown()).optional(),
});

/** A catalog directory as named by the caller: a non-empty path without NUL. */
const DirectorySchema = z
  .string()
  .min(1, "name the catalog directory")
  .max(4096)
  .refine((path) => !path.includes("\0"), "a path must not contain NUL");

/** The issues of a value that fails `schema`, as catalog issues of `file`; a throwing getter is one issue too. */
function schemaIssues(schema: z.ZodType, value: unknown, file: string): CatalogIssue[] {
  try {
    const parsed = schema.safeParse(value);
    if (parsed.success) return [];
    return parsed.error.issues.map((issue) => ({ file, path: issue.path.map(String).join("."), rule: "schema", reason: issueReason(issue) }));
  } catch (error) {
    return [{ file, path: "", rule: "schema", reason: `reading it threw: ${(error as Error).message}` }];
  }
}

/** The outcome of inspecting definitions: the catalog when valid, and every problem found. */
export interface CatalogInspection {
  catalog: Catalog | undefined;
  issues: CatalogIssue[];
}

interface RawDocument {
  kind: DefinitionKind;
  file: string;
  bytes: number;
  value: unknown;
}

/**
 * Validates definitions given as objects (plus the built-ins) and reports every problem.
 * Never throws: bad definitions are issues, and so are definitions that are not an object of
 * the four kinds (`null`, an unknown key: file `<objects>`) and bad options (file `<options>`).
 */
export function inspectDefinitions(definitions: DefinitionSet, options: CatalogOptions = {}): CatalogInspection {
  const refused = [...schemaIssues(CatalogOptionsSchema, options, "<options>"), ...schemaIssues(DefinitionSetSchema, definitions, "<objects>")];
  if (refused.length > 0) return { catalog: undefined, issues: refused };
  const issues: CatalogIssue[] = [];
  const documents: RawDocument[] = [];
  for (const kind of DEFINITION_KINDS) {
    const list: unknown = (definitions as Record<string, unknown>)[kind] ?? [];
    if (!Array.isArray(list)) {
      issues.push({ file: `<objects>/${kind}`, path: "", rule: "schema", reason: `${kind} must be an array of definitions` });
      continue;
    }
    list.forEach((value, index) => {
      const file = `<objects>/${kind}[${index}]`;
      let bytes = 0;
      try {
        bytes = utf8Bytes(canonicalJson(value));
      } catch (error) {
        issues.push({ file, path: "", rule: "schema", reason: `not plain JSON: ${(error as Error).message}` });
        return;
      }
      documents.push({ kind, file, bytes, value });
    });
  }
  return finish(documents, issues, options);
}

/**
 * {@link inspectDefinitions} as a result: the catalog, or `invalid_input` / `limit_exceeded`
 * listing every issue in `details.issues`. Never throws: `createCatalog(null)` is `invalid_input`.
 */
export function createCatalog(definitions: DefinitionSet = {}, options: CatalogOptions = {}): Result<Catalog, KeelError> {
  return asResult(inspectDefinitions(definitions, options));
}

/**
 * Reads a catalog directory (`skills/`, `roles/`, `workflows/`, `profiles/`, each holding one
 * definition per `.json`, `.yaml` or `.yml` file) and reports every problem with its file, the
 * path inside the document and the reason. Only regular files are read: a symlink, a nested
 * directory or another file type is an issue. YAML anchors are refused (there are no includes).
 *
 * A directory that does not exist is `not_found` and a path that is not a directory
 * `invalid_input` (a mistyped `--catalog` must not silently leave the built-ins only); a
 * directory with no definition file at all is an issue (rule `file`), so `loadCatalog` refuses it
 * with `invalid_input`. A directory name that is not a non-empty string without NUL, or options
 * that are not a strict {@link CatalogOptions}, is `invalid_input`. The root itself may be a link.
 */
export function inspectCatalogDirectory(directory: string, options: CatalogOptions = {}): ResultAsync<CatalogInspection, KeelError> {
  const refused = [...schemaIssues(DirectorySchema, directory, "<directory>"), ...schemaIssues(CatalogOptionsSchema, options, "<options>")];
  if (refused.length > 0) {
    const first = refused[0]!;
    return errAsync(new KeelError("invalid_input", `invalid catalog ${first.file === "<options>" ? "options" : "directory"}${first.path ? ` at ${first.path}` : ""}: ${first.reason}`, { details: { what: "workflow catalog", issues: refused.map((issue) => ({ ...issue })) } }));
  }
  return ResultAsync.fromThrowable(
    async (): Promise<CatalogInspection | KeelError> => {
      // The root is the caller's to name and may be a link; everything under it is read without following links.
      const root = await stat(directory).catch((error: NodeJS.ErrnoException) => {
        if (error.code === "ENOENT" || error.code === "ENOTDIR") return undefined;
        throw error;
      });
      if (!root) return new KeelError("not_found", `catalog directory ${directory} does not exist: check the path (a mistyped --catalog would drop the project's definitions)`, { details: { what: "workflow catalog", directory } });
      if (!root.isDirectory()) return new KeelError("invalid_input", `catalog directory ${directory} is not a directory: name the directory that holds skills/, roles/, workflows/ and profiles/`, { details: { what: "workflow catalog", directory } });
      const limits = resolveLimits(options);
      const issues: CatalogIssue[] = [];
      const documents: RawDocument[] = [];
      for (const kind of DEFINITION_KINDS) await readKind(directory, kind, limits, documents, issues);
      if (documents.length === 0 && issues.length === 0) {
        issues.push({ file: directory, path: "", rule: "file", reason: "no definitions: the directory holds no skills/, roles/, workflows/ or profiles/ files (is it the catalog directory? leave the catalog out to use the built-ins only)" });
      }
      return finish(documents, issues, options);
    },
    (error) => new KeelError("io_failed", `could not read catalog directory ${directory}: ${(error as Error).message}`, { cause: error }),
  )().andThen((outcome) => (outcome instanceof KeelError ? errAsync(outcome) : ok(outcome)));
}

/**
 * {@link inspectCatalogDirectory} as a result: the catalog, or an error listing every issue
 * (`not_found` for a missing directory, `invalid_input` for an empty one or bad definitions).
 */
export function loadCatalog(directory: string, options: CatalogOptions = {}): ResultAsync<Catalog, KeelError> {
  return inspectCatalogDirectory(directory, options).andThen((inspection) => asResult(inspection));
}

async function readKind(directory: string, kind: DefinitionKind, limits: CatalogLimits, documents: RawDocument[], issues: CatalogIssue[]): Promise<void> {
  const folder = join(directory, kind);
  const stat = await lstat(folder).catch((error: NodeJS.ErrnoException) => {
    if (error.code === "ENOENT") return undefined;
    throw error;
  });
  if (!stat) return;
  if (!stat.isDirectory()) {
    issues.push({ file: folder, path: "", rule: "file", reason: `${kind} must be a plain directory (symlinks are not followed)` });
    return;
  }
  const entries = (await readdir(folder, { withFileTypes: true })).filter((entry) => !entry.name.startsWith(".")).sort((a, b) => (a.name < b.name ? -1 : 1));
  for (const entry of entries) {
    const file = join(folder, entry.name);
    if (!/\.(json|ya?ml)$/.test(entry.name)) {
      issues.push({ file, path: "", rule: "file", reason: "not a definition file: use .json, .yaml or .yml" });
      continue;
    }
    if (!entry.isFile()) {
      issues.push({ file, path: "", rule: "file", reason: "not a regular file: symlinks and directories are not read" });
      continue;
    }
    const size = (await lstat(file)).size;
    if (size > limits.bytesPerFile) {
      issues.push({ file, path: "", rule: "limit", reason: `${size} bytes is over the limit of ${limits.bytesPerFile} bytes per file` });
      continue;
    }
    const text = await readFile(file, "utf8");
    const parsed = parseDocument(text, entry.name.endsWith(".json"));
    if (parsed.isErr()) issues.push({ file, path: "", rule: "schema", reason: parsed.error });
    else documents.push({ kind, file, bytes: utf8Bytes(text), value: parsed.value });
  }
}

function parseDocument(text: string, json: boolean): Result<unknown, string> {
  try {
    return ok(json ? JSON.parse(text) : parseYaml(text, { maxAliasCount: 0, merge: false, uniqueKeys: true }));
  } catch (error) {
    return err(`cannot parse: ${(error as Error).message.split("\n")[0]}`);
  }
}

function resolveLimits(options: CatalogOptions): CatalogLimits {
  const parsed = LimitsOptionSchema.safeParse(options.limits);
  if (!parsed.success) throw new KeelError("invalid_input", `invalid catalog limits: ${parsed.error.issues[0]?.message ?? ""}`);
  return { ...DEFAULT_CATALOG_LIMITS, ...Object.fromEntries(Object.entries(parsed.data ?? {}).filter(([, value]) => value !== undefined)) };
}

function finish(documents: RawDocument[], issues: CatalogIssue[], options: CatalogOptions): CatalogInspection {
  const limits = resolveLimits(options);
  const parsed: ParsedDefinitions = { skills: [], roles: [], workflows: [], profiles: [] };
  if (options.builtins !== false) {
    for (const kind of ["skills", "roles", "workflows"] as const) {
      for (const value of BUILTIN_DEFINITIONS[kind]) {
        const result = DEFINITION_SCHEMAS[kind].parse(value);
        (parsed[kind] as Located<unknown>[]).push({ value: result, file: `<builtin>/${kind}/${(value as { id: string }).id}`, builtin: true });
      }
    }
  }
  let total = 0;
  const counts = new Map<DefinitionKind, number>();
  for (const document of documents) {
    total += document.bytes;
    const count = (counts.get(document.kind) ?? 0) + 1;
    counts.set(document.kind, count);
    if (document.bytes > limits.bytesPerFile) {
      issues.push({ file: document.file, path: "", rule: "limit", reason: `${document.bytes} bytes is over the limit of ${limits.bytesPerFile} bytes per file` });
      continue;
    }
    if (count > limits.entriesPerKind) {
      issues.push({ file: document.file, path: "", rule: "limit", reason: `more than ${limits.entriesPerKind} ${document.kind} in one catalog root` });
      continue;
    }
    const result = DEFINITION_SCHEMAS[document.kind].safeParse(document.value);
    if (!result.success) {
      for (const issue of result.error.issues) issues.push({ file: document.file, path: issue.path.map(String).join("."), rule: "schema", reason: issueReason(issue) });
      continue;
    }
    (parsed[document.kind] as Located<unknown>[]).push({ value: result.data, file: document.file, builtin: false });
  }
  if (total > limits.bytesInAll) issues.push({ file: "<catalog>", path: "", rule: "limit", reason: `${total} bytes of definitions is over the limit of ${limits.bytesInAll} bytes in all` });
  const skills = indexById(parsed.skills, "skill", issues);
  const roles = indexById(parsed.roles, "role", issues);
  const workflows = indexById(parsed.workflows, "workflow", issues);
  const profiles = indexById(parsed.profiles, "profile", issues);
  checkReferences(skills, roles, workflows, profiles, issues);
  if (issues.length > 0) return { catalog: undefined, issues };
  const values = <T>(map: Map<string, Located<T>>) => new Map([...map].map(([id, located]) => [id, located.value] as const));
  const catalog = {
    skills: values(skills),
    roles: values(roles),
    workflows: values(workflows),
    profiles: values(profiles),
  };
  const sorted = (map: Map<string, unknown>) => [...map.keys()].sort().map((id) => map.get(id));
  const catalogDigest = digest({ skills: sorted(catalog.skills), roles: sorted(catalog.roles), workflows: sorted(catalog.workflows), profiles: sorted(catalog.profiles) });
  return { catalog: Object.freeze({ ...catalog, digest: catalogDigest }), issues };
}

function issueReason(issue: z.core.$ZodIssue): string {
  if (issue.code === "unrecognized_keys") return `unknown field${issue.keys.length > 1 ? "s" : ""} ${issue.keys.map((key) => `"${key}"`).join(", ")}`;
  return issue.message;
}

function asResult(inspection: CatalogInspection): Result<Catalog, KeelError> {
  if (inspection.catalog) return ok(inspection.catalog);
  const limit = inspection.issues.some((issue) => issue.rule === "limit");
  const first = inspection.issues[0]!;
  return err(
    new KeelError(limit ? "limit_exceeded" : "invalid_input", `invalid workflow catalog: ${first.file}${first.path ? ` at ${first.path}` : ""}: ${first.reason}${inspection.issues.length > 1 ? ` (and ${inspection.issues.length - 1} more)` : ""}`, {
      details: { what: "workflow catalog", issues: inspection.issues.map((issue) => ({ ...issue })) },
    }),
  );
}

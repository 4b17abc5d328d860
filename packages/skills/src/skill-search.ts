import { type KeelError, validate } from "@keel/core";
import { err, ok, type Result } from "neverthrow";
import { z } from "zod";
import { SkillEntrySchema, type SkillEntry, type SkillView } from "./skill-view.js";

/** Options of {@link searchSkills}. */
export interface SkillSearchOptions {
  /** Most hits returned (default 20, at most 1,000). */
  limit?: number;
}

/** One search hit: the skill entry (never its body), its score and the query terms it matched. */
export interface SkillSearchHit {
  skill: SkillEntry;
  /** Higher is better. Only hits with a positive score are returned. */
  score: number;
  /** The query terms found in the name, path or description. */
  matched: string[];
}

const SearchViewSchema = z.object({ skills: z.array(SkillEntrySchema) });
const QuerySchema = z.string().min(1).max(1000);
const SearchOptionsSchema = z.object({ limit: z.number().int().min(1).max(1000).optional() }).strict();

/** Lowercase words of letters and digits (NFKC-normalised), deduplicated, in order. */
export function searchTerms(text: string): string[] {
  const words = text
    .normalize("NFKC")
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter((word) => word !== "");
  return [...new Set(words)];
}

function fieldScore(term: string, words: readonly string[], exact: number, prefix: number): number {
  if (words.includes(term)) return exact;
  if (term.length >= 2 && words.some((word) => word.startsWith(term))) return prefix;
  return 0;
}

/** The score of one skill for the query terms, and which terms matched. Pure. */
function scoreSkill(skill: SkillEntry, terms: readonly string[], phrase: string): { score: number; matched: string[] } {
  const name = searchTerms(skill.name);
  const path = searchTerms(skill.relativePath);
  const description = searchTerms(skill.description);
  let score = 0;
  const matched: string[] = [];
  for (const term of terms) {
    const inName = fieldScore(term, name, 6, 3);
    // The directory usually repeats the name: count the path only when the name missed.
    const inPath = inName === 0 ? fieldScore(term, path, 2, 1) : 0;
    const inDescription = fieldScore(term, description, 2, 1);
    const termScore = inName + inPath + inDescription;
    if (termScore > 0) matched.push(term);
    score += termScore;
  }
  if (name.join("-") === terms.join("-")) score += 10;
  if (terms.length > 1 && skill.description.toLowerCase().includes(phrase)) score += 3;
  return { score, matched };
}

/**
 * Lexical search over a view's skills: names, descriptions and the skill's path below its root.
 * Ranked by score; at equal score OWN before REFERENCE, then precedence order. Returns entries,
 * never bodies. A query without any word returns no hits. Pure.
 */
export function searchSkills(view: Pick<SkillView, "skills">, query: string, options: SkillSearchOptions = {}): Result<SkillSearchHit[], KeelError> {
  const checked = validate(QuerySchema, query, "search query")
    .andThen(() => validate(SearchOptionsSchema, options, "search options"))
    .andThen(() => validate(SearchViewSchema, view, "skill view"));
  if (checked.isErr()) return err(checked.error);
  const terms = searchTerms(query);
  if (terms.length === 0) return ok([]);
  const phrase = query.normalize("NFKC").toLowerCase().trim();
  const hits = view.skills
    .map((skill, index) => ({ index, skill, ...scoreSkill(skill, terms, phrase) }))
    .filter((hit) => hit.score > 0);
  hits.sort((left, right) => {
    if (left.score !== right.score) return right.score - left.score;
    if (left.skill.ownership !== right.skill.ownership) return left.skill.ownership === "own" ? -1 : 1;
    return left.index - right.index;
  });
  return ok(hits.slice(0, options.limit ?? 20).map(({ skill, score, matched }) => ({ skill, score, matched })));
}

import { existsSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");

/** The shared real samples (`../shared/fixtures` from the repository root). */
export const FIXTURES_DIR = path.resolve(repoRoot, "../shared/fixtures");

/**
 * Whether the shared fixtures are here. In CI (`CI=true`) they must be: a missing folder throws,
 * which fails the test file. Elsewhere a missing folder prints why the tests that need it skip.
 */
export function sharedFixturesPresent(): boolean {
  if (existsSync(FIXTURES_DIR)) return true;
  if (process.env["CI"] === "true") throw new Error(`shared fixtures are missing at ${FIXTURES_DIR}; CI must provide them`);
  console.warn(`skipping tests on real samples: shared fixtures not found at ${FIXTURES_DIR}`);
  return false;
}

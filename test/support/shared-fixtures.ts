/**
 * The one guard for tests on the shared real samples (`../shared/fixtures` beside the repository:
 * CLI output streams, skill files, pi sessions; see its README). Every test that reads them takes
 * its folder from {@link sharedFixtures} and skips its suite with `describe.skipIf(!x.available)`.
 *
 * Why here: `test/support/` is importable by relative path from every package's `src` and `test`
 * folders, from `test/` and from `bench/`, and it is not published (where the repository sits beside
 * `../shared` is no business of `@keel/testkit`, which users install).
 *
 * The folder is given by its real path (links resolved), as code that canonicalizes paths reports it.
 *
 * A fresh clone has no `../shared`: there the tests that need it skip, and each file prints why.
 * CI always has it, so under `CI=true` a missing folder throws while the test file loads: the file
 * fails with the same reason (test/shared-fixtures-absent.test.ts runs both against a copy of the
 * repository with nothing beside it).
 */
import { existsSync, realpathSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const repositoryRoot = fileURLToPath(new URL("../..", import.meta.url));

/** The folder of the shared real samples: `KEEL_SHARED_FIXTURES`, else `../shared/fixtures` from the repository root. */
export const SHARED_FIXTURES_DIR = path.resolve(repositoryRoot, process.env["KEEL_SHARED_FIXTURES"] || "../shared/fixtures");

/** The start of the line printed when a folder is missing outside CI (the tests that need it skip). */
export const SKIP_NOTICE = "skipping the tests on shared fixtures";

/** The start of the error thrown when a folder is missing under `CI=true`. */
export const CI_FAILURE = "the shared fixtures are missing in CI";

/** A folder of the shared fixtures, as one test file needs it. */
export interface SharedFixtures {
  /** Its absolute path (it exists when `available`). */
  readonly dir: string;
  /** Whether it exists; `false` only outside CI (under `CI=true` a missing folder throws). */
  readonly available: boolean;
}

/**
 * The folder `segments` of the shared fixtures (e.g. `sharedFixtures("skills", "real")`), checked
 * when called: call it once at the top of a test file and guard every suite that reads it with
 * `describe.skipIf(!fixtures.available)` (read the files inside the suite, never at module load).
 *
 * @throws Error under `CI=true` when the folder is missing, so the test file fails with the reason.
 * @example
 * const fixtures = sharedFixtures("cli");
 * describe.skipIf(!fixtures.available)("parsers read the real CLI samples", () => { ... });
 */
export function sharedFixtures(...segments: string[]): SharedFixtures {
  const dir = path.resolve(SHARED_FIXTURES_DIR, ...segments);
  // The real path: code under test that resolves links (skill paths are canonical) reports it, wherever ../shared is linked from.
  if (existsSync(dir)) return { dir: realpathSync(dir), available: true };
  const where = `${dir} is missing (the real samples kept in ../shared/fixtures beside the repository, or KEEL_SHARED_FIXTURES)`;
  if (process.env["CI"] === "true") throw new Error(`${CI_FAILURE}: ${where}`);
  console.warn(`${SKIP_NOTICE}: ${where}; CI=true makes this a failure`);
  return { dir, available: false };
}

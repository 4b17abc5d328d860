/**
 * Hostile store URLs given to the commands that read a store (`keel inspect`, the source of
 * `keel store copy`): whatever the text — NUL, traversal, huge, prototype names, an absolute
 * path elsewhere — the answer is an exit code of 1 or 2 with a one-line message, never a stack
 * trace, and nothing is created anywhere (the source is only read; the target is never opened
 * when the source is refused).
 */
import { readdirSync } from "node:fs";
import path from "node:path";
import { runCli } from "@keel/cli";
import { createFsStore } from "@keel/store-fs";
import { okValue } from "@keel/testkit";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hostileString } from "./support/hostile.js";
import { captureIo, hasStackTrace, temporaryDirectory } from "./support/cli-harness.js";

let scratch: { dir: string; remove: () => void };
beforeAll(async () => {
  scratch = temporaryDirectory("hostile");
  const store = createFsStore({ dir: path.join(scratch.dir, "src") });
  await okValue(store.docs.put(["d"], 1, { create: true }));
  await store.close();
});
afterAll(() => scratch.remove());

/** A store URL a careless or hostile caller might pass: a hostile string, alone or after a scheme, or as the schema (raw: a lone surrogate cannot be percent-encoded). */
const hostileUrl = fc.oneof(hostileString, hostileString.map((text) => `sqlite:${text}`), hostileString.map((text) => `postgres://127.0.0.1:1/x?schema=${text}`));

async function keel(args: string[]): Promise<{ code: number; err: string }> {
  const io = captureIo({ cwd: scratch.dir });
  return { code: await runCli(args, io), err: io.err };
}

describe("reading commands given hostile store URLs", () => {
  it("keel inspect and keel store copy <hostile> <target>: exit 1 or 2, a message without a stack trace, nothing created", async () => {
    await fc.assert(
      fc.asyncProperty(hostileUrl, fc.boolean(), async (url, copy) => {
        const outcome = await keel(copy ? ["store", "copy", url, "target"] : ["inspect", url]);
        expect([1, 2]).toContain(outcome.code);
        expect(outcome.err).toMatch(/\((invalid_input|not_found|io_failed|unavailable|unsupported)\)|usage|error/i);
        expect(hasStackTrace(outcome.err)).toBe(false);
        expect(readdirSync(scratch.dir)).toEqual(["src"]);
      }),
      { numRuns: 60 },
    );
  }, 120_000);
});

import { existsSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { useTempDirs } from "./temp-dirs.js";

const dirs = useTempDirs("keel-testkit-temp-");
const seen: { dir?: string; closed: string[] } = { closed: [] };

describe("useTempDirs", () => {
  it("makes fresh, distinct, empty directories named by the prefix", () => {
    const first = dirs.dir();
    const second = dirs.dir();
    expect(first).not.toBe(second);
    expect(path.basename(first).startsWith("keel-testkit-temp-")).toBe(true);
    writeFileSync(path.join(first, "file"), "x");
    seen.dir = first;
    dirs.track({ close: () => void seen.closed.push(existsSync(first) ? "before removal" : "after removal") });
  });

  it("after a test, closed what it tracked before removing its directories", () => {
    expect(seen.closed).toEqual(["before removal"]);
    expect(existsSync(seen.dir!)).toBe(false);
  });
});

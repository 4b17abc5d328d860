import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import fc from "fast-check";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { temporaryDirectory } from "../../../../test/support/cli-harness.js";
import { MINIMUM_NODE_VERSION, checkNodeVersion, checkStoreDirectory, meetsMinimum, parseNodeVersion, type NodeVersion } from "./doctor-checks.js";

const versions: fc.Arbitrary<NodeVersion> = fc.tuple(fc.nat({ max: 40 }), fc.nat({ max: 40 }), fc.nat({ max: 40 }));

describe("Node version checks", () => {
  it("parses what process.versions.node and `node --version` print", () => {
    expect(parseNodeVersion("20.19.0")).toEqual([20, 19, 0]);
    expect(parseNodeVersion("v22.1.3")).toEqual([22, 1, 3]);
    expect(parseNodeVersion("20.19")).toEqual([20, 19, 0]);
    expect(parseNodeVersion("23.0.0-nightly2024")).toEqual([23, 0, 0]);
    expect(parseNodeVersion("twenty")).toBeNull();
  });

  it("round-trips any version through its text", () => {
    fc.assert(
      fc.property(versions, (version) => {
        expect(parseNodeVersion(`v${version.join(".")}`)).toEqual(version);
      }),
    );
  });

  it("compares like the lexicographic order of (major, minor, patch)", () => {
    fc.assert(
      fc.property(versions, versions, (a, b) => {
        const lexicographic = a[0] !== b[0] ? a[0] > b[0] : a[1] !== b[1] ? a[1] > b[1] : a[2] >= b[2];
        expect(meetsMinimum(a, b)).toBe(lexicographic);
        expect(meetsMinimum(a, a)).toBe(true);
        if (meetsMinimum(a, b) && meetsMinimum(b, a)) expect(a).toEqual(b);
      }),
    );
  });

  it("accepts >=20.19 and refuses older or unreadable versions", () => {
    expect(checkNodeVersion("20.19.0").ok).toBe(true);
    expect(checkNodeVersion("22.0.0").ok).toBe(true);
    expect(checkNodeVersion("20.18.3").ok).toBe(false);
    expect(checkNodeVersion("18.20.4")).toEqual({ version: "18.20.4", required: ">=20.19.0", ok: false });
    expect(checkNodeVersion("garbage").ok).toBe(false);
  });

  it("matches the engines field of the package", () => {
    const manifest = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { engines: { node: string } };
    expect(manifest.engines.node).toBe(`>=${MINIMUM_NODE_VERSION.replace(/\.0$/, "")}`);
  });
});

describe("checkStoreDirectory", () => {
  let scratch: { dir: string; remove: () => void };
  beforeEach(() => {
    scratch = temporaryDirectory("doctor");
  });
  afterEach(() => scratch.remove());

  it("a missing directory is judged by its nearest existing ancestor, and is not created", async () => {
    const dir = path.join(scratch.dir, "a", "b", ".keel");
    const check = await checkStoreDirectory(dir);
    expect(check).toEqual({ dir, exists: false, isStore: false, checked: scratch.dir, writable: true, problem: null });
    expect(await checkStoreDirectory(dir)).toMatchObject({ exists: false });
  });

  it("an existing directory says whether it holds a store", async () => {
    expect(await checkStoreDirectory(scratch.dir)).toMatchObject({ exists: true, isStore: false, writable: true });
    mkdirSync(path.join(scratch.dir, "_keel"));
    writeFileSync(path.join(scratch.dir, "_keel", "store.json"), JSON.stringify({ format: "keel.fs-store", version: 1 }));
    expect(await checkStoreDirectory(scratch.dir)).toMatchObject({ exists: true, isStore: true, writable: true });
  });

  it("a file in the way makes the directory unwritable", async () => {
    const file = path.join(scratch.dir, "file");
    writeFileSync(file, "x");
    expect(await checkStoreDirectory(file)).toMatchObject({ exists: true, writable: false, problem: expect.stringContaining("not a directory") });
    expect(await checkStoreDirectory(path.join(file, "sub", ".keel"))).toMatchObject({ exists: false, checked: file, writable: false });
  });
});

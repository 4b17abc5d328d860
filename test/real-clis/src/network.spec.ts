import { execFileSync } from "node:child_process";
import { expect, it } from "vitest";
import { inNetworkNamespace } from "./cli-sandbox.js";

it("runs inside a network namespace with only loopback (or the runner said why it could not)", () => {
  if (inNetworkNamespace()) {
    const links = execFileSync("ip", ["-o", "link", "show"], { encoding: "utf8" })
      .split("\n")
      .filter((line) => line.trim() !== "")
      .map((line) => line.split(":")[1]?.trim());
    expect(links).toEqual(["lo"]);
  } else {
    // scripts/run-clis.mjs falls back to the refusing proxy only when it cannot make a namespace.
    expect(process.env.KEEL_REAL_CLIS_NETNS).toBe("0");
    expect(process.env.KEEL_REAL_CLIS_NETNS_REASON).toMatch(/\S/);
  }
});
